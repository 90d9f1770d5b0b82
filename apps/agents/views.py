"""/mcp/ (the MCP server over streamable HTTP) and /llms.txt.

The site serves MCP itself, statelessly, with JSON responses: each POST is one JSON-RPC
message answered in its response body, through the SDK's own transport, inside this Django
view. So `scripts/run` (Django's development server, WSGI) and the production command
(gunicorn + uvicorn, ASGI) serve it alike, behind the same middleware (the body limit, a 503
while the database is down, the allowed hosts), with no second server or port; and nothing
lives between requests, so any web worker answers any call (a stateful session would be held
by the one process that opened it). No tool needs a session or a stream: they answer at once.
"""

from __future__ import annotations

from http import HTTPStatus
from typing import Any

import anyio
from asgiref.sync import sync_to_async
from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from ninja.errors import AuthenticationError
from starlette.types import Message

from apps.accounts.auth import optional_token
from apps.agents.llms import llms_txt
from apps.agents.registry import CALLER, Caller
from apps.agents.server import mcp_server


def llms(request: HttpRequest) -> HttpResponse:
    """/llms.txt: the product, its questions and its rules for a language model, with links."""
    text = llms_txt(base_url=request.build_absolute_uri("/").rstrip("/"))
    return HttpResponse(text, content_type="text/plain; charset=utf-8")


@csrf_exempt  # a token in a header, never a cookie: nothing a cross-site form could borrow
async def mcp_endpoint(request: HttpRequest) -> HttpResponse:
    if request.method != "POST":
        # Stateless: no standing stream to open (GET) and no session to end (DELETE).
        refused = "POST a JSON-RPC message"
        return _jsonrpc_error(HTTPStatus.METHOD_NOT_ALLOWED, refused, Allow="POST")
    try:
        token = await sync_to_async(optional_token)(request)
    except AuthenticationError as exc:
        # As the API: a token that is given but wrong is refused, never read as anonymous.
        challenge = {"WWW-Authenticate": "Bearer"}
        return _jsonrpc_error(HTTPStatus.UNAUTHORIZED, exc.message, **challenge)
    body = await sync_to_async(lambda: request.body)()
    caller = Caller(token=token, request=request, base_url=request.build_absolute_uri("/"))
    bound = CALLER.set(caller)
    try:
        return await _serve(request, body)
    finally:
        CALLER.reset(bound)


async def _serve(request: HttpRequest, body: bytes) -> HttpResponse:
    """The SDK's stateless transport for this one request, its answer collected whole."""
    host = request.get_host()  # ALLOWED_HOSTS has checked it
    manager = StreamableHTTPSessionManager(
        app=mcp_server()._lowlevel_server,  # the SDK's own manager takes the low-level server
        json_response=True,
        stateless=True,
        max_request_body_size=settings.API_MAX_BODY_BYTES,
        # A browser page of another origin may not call (DNS rebinding, cross-site POSTs).
        security_settings=TransportSecuritySettings(
            allowed_hosts=[host], allowed_origins=[f"{request.scheme}://{host}"]
        ),
    )
    answered = anyio.Event()
    delivered = False
    status, headers, chunks = 500, [], []

    async def receive() -> Message:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}
        await answered.wait()  # the client stays until its answer is sent
        return {"type": "http.disconnect"}

    async def send(message: Message) -> None:
        nonlocal status, headers
        if message["type"] == "http.response.start":
            status, headers = message["status"], message.get("headers", [])
        elif message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))

    async with manager.run():
        await manager.handle_request(_scope(request), receive, send)
    answered.set()
    response = HttpResponse(b"".join(chunks), status=status)
    for name, value in headers:
        response[name.decode("latin-1")] = value.decode("latin-1")
    return response


def _scope(request: HttpRequest) -> dict[str, Any]:
    """The ASGI scope of a Django request, as the SDK's transport reads it."""
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": request.method,
        "scheme": request.scheme,
        "path": request.path,
        "raw_path": request.path.encode(),
        "query_string": request.META.get("QUERY_STRING", "").encode("latin-1"),
        "root_path": "",
        # The host Django checked (ALLOWED_HOSTS, a proxy's X-Forwarded-Host where trusted).
        "headers": [
            (b"host", request.get_host().encode("latin-1")),
            *(
                (name.lower().encode("latin-1"), value.encode("latin-1"))
                for name, value in request.headers.items()
                if name.lower() != "host"
            ),
        ],
        "client": (request.META.get("REMOTE_ADDR", ""), 0),
        "server": (request.get_host(), 0),
    }


def _jsonrpc_error(status: HTTPStatus, message: str, **headers: str) -> JsonResponse:
    body = {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": message}}
    response = JsonResponse(body, status=status)
    for name, value in headers.items():
        response[name] = value
    return response
