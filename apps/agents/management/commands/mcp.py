"""`manage.py mcp`: the MCP server over stdio, for an assistant that starts it as a command.

JSON-RPC on stdin and stdout, one message a line; logs go to stderr. Without INFERBOARD_TOKEN
the tools see public data only; with it, the token's organization's as well, and submit_run
may store runs (the token is checked again on every call). Ends at the end of its input.
"""

import os

import anyio
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from apps.accounts.services import token_authenticate
from apps.agents.registry import CALLER, Caller
from apps.agents.server import mcp_server


class Command(BaseCommand):
    help = "Serve the MCP server over stdio (INFERBOARD_TOKEN: an API token, optional)."
    # Nothing but JSON-RPC may reach stdout, and the checks would print there on a warning.
    requires_system_checks: list[str] = []

    def handle(self, *args: object, **options: object) -> None:
        text = os.environ.get("INFERBOARD_TOKEN", "").strip()
        token = token_authenticate(text) if text else None
        if text and token is None:
            raise CommandError("INFERBOARD_TOKEN: unknown or revoked token")
        CALLER.set(Caller(token=token, base_url=settings.INFERBOARD_PUBLIC_URL, token_text=text))
        anyio.run(mcp_server().run_stdio_async)
