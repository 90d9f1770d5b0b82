"""The production entry point: `gunicorn --config python:apps.serving apps.asgi:application`.

Served by uvicorn workers (apps/serving.py): a client that sends its body slowly holds a
coroutine, not a worker, so a few of them cannot stall the site.
"""

import os
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "apps.settings")
django_application = get_asgi_application()

from django.conf import settings  # noqa: E402 - settings are configured just above

from apps.api.middleware import body_too_large  # noqa: E402

Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


async def _send_response(send: Send, size: int | None) -> None:
    response = body_too_large(size)
    headers = [(b"content-type", response["Content-Type"].encode()), (b"connection", b"close")]
    await send({"type": "http.response.start", "status": response.status_code, "headers": headers})
    await send({"type": "http.response.body", "body": response.content})


async def application(scope: Message, receive: Receive, send: Send) -> None:
    """Django, with API_MAX_BODY_BYTES enforced while the body arrives.

    Django's ASGI handler reads a whole body before any middleware runs, so the
    BodySizeLimitMiddleware's 413 would come only after a too-large upload was spooled to
    disk. Here a declared length over the limit is refused before reading, and a chunked
    body is cut off once it passes the limit.
    """
    if scope["type"] != "http":
        return await django_application(scope, receive, send)
    limit = settings.API_MAX_BODY_BYTES
    headers = dict(scope.get("headers") or [])
    try:
        declared = int(headers.get(b"content-length", b"0") or 0)
    except ValueError:
        declared = 0  # Django's middleware answers 400 for a length that is not a number
    if declared > limit:
        return await _send_response(send, declared)
    received = 0
    over = False

    async def counted() -> Message:
        nonlocal received, over
        message = await receive()
        received += len(message.get("body", b""))
        if received > limit:
            over = True
            # Django ends a request whose client went away without answering it.
            return {"type": "http.disconnect"}
        return message

    await django_application(scope, counted, send)
    if over:
        await _send_response(send, None)
