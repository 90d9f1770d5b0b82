"""The agents app: the MCP server at /mcp/ and over stdio, and /llms.txt (no models of its own)."""

from django.apps import AppConfig


class AgentsConfig(AppConfig):
    name = "apps.agents"
    label = "agents"
