"""apps/asgi.py, the production entry point, enforces API_MAX_BODY_BYTES while a body arrives."""

from __future__ import annotations

import asyncio
import json

from apps.asgi import application


def call(method: str, path: str, chunks: list[bytes], headers: list[tuple[bytes, bytes]]):
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"localhost"), *headers],
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
    }
    pending = [
        {"type": "http.request", "body": chunk, "more_body": i < len(chunks) - 1}
        for i, chunk in enumerate(chunks)
    ]
    read: list[int] = []
    sent: list[dict] = []

    async def receive() -> dict:
        if pending:
            message = pending.pop(0)
            read.append(len(message["body"]))
            return message
        await asyncio.Event().wait()  # no more input: as a client that waits for the answer
        raise AssertionError("unreachable")

    async def send(message: dict) -> None:
        sent.append(message)

    asyncio.run(asyncio.wait_for(application(scope, receive, send), 30))
    status = next(m["status"] for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return status, body, read


def test_a_declared_length_over_the_limit_is_refused_before_any_body_is_read(settings):
    settings.API_MAX_BODY_BYTES = 1000
    status, body, read = call(
        "POST", "/api/v1/runs", [b"x" * 600] * 3, [(b"content-length", b"1800")]
    )
    assert status == 413 and read == []
    assert "API_MAX_BODY_BYTES" in json.loads(body)["detail"]


def test_a_chunked_body_is_cut_off_once_it_passes_the_limit(settings):
    settings.API_MAX_BODY_BYTES = 1000
    chunks = [b"x" * 600] * 5
    status, body, read = call("POST", "/api/v1/runs", chunks, [])
    assert status == 413 and read == [600, 600]
    assert "API_MAX_BODY_BYTES" in json.loads(body)["detail"]


def test_requests_within_the_limit_reach_django(settings):
    settings.API_MAX_BODY_BYTES = 1000
    status, body, _ = call("GET", "/healthz", [b""], [])
    assert (status, body) == (200, b"ok")
