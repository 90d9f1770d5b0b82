"""A scripted OpenAI-compatible server (a test double, not a model): real HTTP, canned answers.

    python scripted_server.py SCRIPT.json LOG.jsonl

Listens on a free loopback port and prints `LISTENING <port>` once ready. Replies to
POST /v1/completions and /v1/chat/completions from SCRIPT.json:

    {"default": REPLY, "replies": {"<sha256 of prompt or last user message>": REPLY}}
    REPLY = {"text": str, "reasoning": str, "finish_reason": str, "completion_tokens": int,
             "fail_first": int, "fail_mode": "drop" | "<HTTP status>"}

`fail_first` makes the first N requests for that prompt fail: "drop" closes the connection
without a response (a transport error), a status such as "503" answers with it. Prompts are
looked up by hash so scripts and logs never hold prompt text (GPQA's must not be written
anywhere). Each request is logged to LOG.jsonl with its parameters, the prompt hash and the
requests in flight. With "gather": N in the script, each request waits (up to 20 s, below the
clients' timeout) until N requests have been in flight at once, so a test of concurrency never
depends on how fast the client happens to send. POST /api/v1/runs stands in for inferboard's
ingestion endpoint (201).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import sys
from collections import Counter
from typing import Any

from aiohttp import web


def prompt_key(body: dict[str, Any]) -> str:
    if "prompt" in body:
        text = body["prompt"]
    else:
        text = [m for m in body.get("messages", []) if m.get("role") == "user"][-1]["content"]
    return hashlib.sha256(text.encode()).hexdigest()


def make_app(script: dict[str, Any], log_path: str) -> web.Application:
    seen: Counter[str] = Counter()
    state = {"in_flight": 0}
    gathered = asyncio.Event()
    log = open(log_path, "a", encoding="utf-8")  # noqa: SIM115 - lives as long as the server

    async def handle(request: web.Request) -> web.StreamResponse:
        body = await request.json()
        key = prompt_key(body)
        reply = script.get("replies", {}).get(key, script.get("default", {}))
        seen[key] += 1
        state["in_flight"] += 1
        try:
            log.write(
                json.dumps(
                    {
                        "path": request.path,
                        "key": key,
                        "attempt": seen[key],
                        "in_flight": state["in_flight"],
                        "authorization": request.headers.get("Authorization"),
                        **{
                            k: body.get(k)
                            for k in ("model", "max_tokens", "temperature", "seed", "stop")
                        },
                        "messages": len(body.get("messages", [])),
                    }
                )
                + "\n"
            )
            log.flush()
            if state["in_flight"] >= int(script.get("gather", 0)):
                gathered.set()
            with contextlib.suppress(TimeoutError):
                # A client that never sends N at once fails the test's assertion, not a hang.
                await asyncio.wait_for(gathered.wait(), timeout=20)
            # Yield so that concurrent requests overlap, as they would on a real server.
            await asyncio.sleep(float(script.get("delay_s", 0.02)))
            if seen[key] <= int(reply.get("fail_first", 0)):
                if reply.get("fail_mode", "drop") == "drop":
                    assert request.transport is not None
                    request.transport.close()
                    return web.Response(status=500)
                status = int(reply["fail_mode"])
                return web.json_response({"error": f"scripted {status}"}, status=status)
            return web.json_response(completion(request.path, body, reply))
        finally:
            state["in_flight"] -= 1

    async def receive_run(request: web.Request) -> web.Response:
        # Stands in for inferboard's ingestion endpoint: logs what arrived, answers 201.
        document = await request.json()
        entry = {
            "path": request.path,
            "authorization": request.headers.get("Authorization"),
            "schema": document.get("schema"),
            "accuracy": len(document.get("accuracy", [])),
        }
        log.write(json.dumps(entry) + "\n")
        log.flush()
        return web.json_response({"id": 1, "created": True}, status=201)

    app = web.Application()
    app.router.add_post("/api/v1/runs", receive_run)
    app.router.add_post("/v1/completions", handle)
    app.router.add_post("/v1/chat/completions", handle)
    return app


def completion(path: str, body: dict[str, Any], reply: dict[str, Any]) -> dict[str, Any]:
    text = reply.get("text", "")
    choice: dict[str, Any] = {"index": 0, "finish_reason": reply.get("finish_reason", "stop")}
    if path.endswith("/chat/completions"):
        message: dict[str, Any] = {"role": "assistant", "content": text}
        if reply.get("reasoning"):
            message["reasoning_content"] = reply["reasoning"]
        choice["message"] = message
    else:
        choice["text"] = text
    return {
        "id": "scripted",
        "object": "chat.completion" if "message" in choice else "text_completion",
        "model": body.get("model"),
        "choices": [choice],
        "usage": {"prompt_tokens": 1, "completion_tokens": int(reply.get("completion_tokens", 7))},
    }


async def serve(script_path: str, log_path: str) -> None:
    with open(script_path, encoding="utf-8") as handle:
        script = json.load(handle)
    runner = web.AppRunner(make_app(script, log_path), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    print(f"LISTENING {port}", flush=True)
    await asyncio.Event().wait()


if __name__ == "__main__":
    asyncio.run(serve(sys.argv[1], sys.argv[2]))
