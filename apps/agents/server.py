"""The MCP server (the official Python SDK's MCPServer) with every registered tool and
resource: one instance per process, served over HTTP by apps/agents/views.py and over stdio
by `manage.py mcp`."""

from __future__ import annotations

from functools import cache
from typing import Any

from asgiref.sync import sync_to_async
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.resources import FunctionResource
from mcp.types import CallToolResult, InputRequiredResult
from pydantic import ValidationError

from apps.agents import resources, tools
from apps.agents.registry import RESOURCES, TOOLS, ResourceSpec, as_async, current_caller, refusal
from apps.api_errors import error_items
from apps.http_cache import RELEASE

NAME = "inferboard"
INSTRUCTIONS = (
    "inferboard compares LLM inference deployments like for like: throughput, latency, "
    "accuracy and $/Mtok, measured or imported with their origin. Ask `answer` which of two "
    "accelerators is cheaper for a model and scenario at an SLO; `board` ranks a scenario's "
    "deployments; `costs` sizes a workload in GPUs and $/month; `run` and `search_runs` read "
    "runs. Every result has a `citation`: quote its permalink, origins and date with the "
    "figures. Definitions: the inferboard://methodology resource."
)
# Registered by importing them: each module's @tool and @resource functions.
REGISTERED = (tools, resources)


class InferboardServer(MCPServer):
    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        """Arguments that break a tool's schema are refused as the API refuses a parameter:
        422 with each error's field path, not the SDK's paragraph of text."""
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                errors = [dict(error) for error in exc.__cause__.errors()]
                return refusal(422, {"detail": error_items(errors)})
            raise


@cache
def mcp_server() -> InferboardServer:
    server = InferboardServer(
        name=NAME,
        title="inferboard",
        instructions=INSTRUCTIONS,
        version=RELEASE,
        # The HTTP transport (apps/agents/views.py) opens no standing stream to send on.
        subscriptions=False,
    )
    for spec in TOOLS:
        server.add_tool(
            as_async(spec), name=spec.name, title=spec.title, annotations=spec.annotations
        )
    for found in RESOURCES:
        server.add_resource(_resource(found))
    return server


def _resource(spec: ResourceSpec) -> FunctionResource:
    async def read() -> str:
        return await sync_to_async(spec.function, thread_sensitive=True)(current_caller())

    return FunctionResource(
        uri=spec.uri,
        name=spec.name,
        description=spec.function.__doc__,
        mime_type=spec.mime_type,
        fn=read,
    )
