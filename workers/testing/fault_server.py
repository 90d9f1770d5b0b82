"""An OpenAI-compatible SSE server that misbehaves on purpose, or streams as fast as it can.

Run it as a process:  python -m workers.testing.fault_server --port 8011 --mode ok

It is a test double named as such: tests drive the real client against it over loopback
to check every metric rule and failure class, and `bench/loadgen_capacity.py` uses it as
the fastest possible server. One word of the prompt is one token; `/tokenize` says so.

Modes (server default with --mode, or per request with a "fault" body field):
  ok            text events of --tokens-per-chunk words, usage at the end
  role_first    a role-only (chat) or empty-text (completions) event and a usage-only event
                come --first-delay-ms before the first text
  inband_error  `data: {"error": ...}` after --fail-after tokens (HTTP 200)
  stall         headers and one event, then silence for --stall-s
  reset         --fail-after tokens, then a TCP reset mid-body
  malformed     --fail-after tokens, then a data line that is not JSON
  no_usage      no usage anywhere
  empty         role-only event and usage with completion_tokens 0, no text
  short         stops at half of max_tokens with finish_reason "stop"
  http_error    HTTP 500 with a JSON error body
  truncate      --fail-after tokens, then a clean end of body: no finish_reason, no [DONE]
  multiline     every event's JSON split over two `data:` lines (the SSE spec joins them)
  cycle         request n uses the n-th mode of --cycle (comma separated), round robin
Every first text event carries "server_ns": time.monotonic_ns() when it was written.
With --api-key KEY every request but /control/ needs `Authorization: Bearer KEY` (else 401).

Holding, for tests that must act while a request is in flight (never by sleeping):
  --hold             every stream stops after its first text event until released
  --hold-from N      only the N-th stream (counting from 1) and later ones hold
  GET  /control/held?n=K   answers once at least K streams have been held (long poll)
  POST /control/release    releases every held stream and ends holding for good
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import itertools
import json
import signal
import socket
import struct
import time
from dataclasses import dataclass, field
from typing import Any

MODES = (
    "ok",
    "role_first",
    "inband_error",
    "stall",
    "reset",
    "malformed",
    "no_usage",
    "empty",
    "short",
    "http_error",
    "truncate",
    "multiline",
    "cycle",
)


@dataclass
class Options:
    mode: str = "ok"
    cycle: list[str] = field(default_factory=lambda: ["ok"])
    tokens_per_chunk: int = 1
    ttft_ms: float = 0.0
    itl_ms: float = 0.0
    first_delay_ms: float = 0.0
    fail_after: int = 2
    stall_s: float = 3600.0
    prefix_block: int = 0  # >0: simulate a prefix cache of this block size and report hits
    word: str = "tok"
    close_after_stream: bool = False  # like llama.cpp: keep-alive announced, then closed
    hold_from: int = 0  # >0: the n-th stream and later ones hold until released
    api_key: str = ""  # set: requests without `Authorization: Bearer <it>` get 401


class PrefixCache:
    """Block-granular prefix cache: cached = longest block-aligned prefix seen before."""

    def __init__(self, block: int) -> None:
        self.block = block
        self.seen: set[bytes] = set()

    def lookup_and_insert(self, words: list[str]) -> int:
        digest = hashlib.blake2b(digest_size=16)
        cached, hit = 0, True
        for start in range(0, len(words) - self.block + 1, self.block):
            digest.update(" ".join(words[start : start + self.block]).encode() + b"\x00")
            key = digest.copy().digest()
            if hit and key in self.seen:
                cached = start + self.block
            else:
                hit = False
                self.seen.add(key)
        return cached


def _usage(prompt: int, completion: int, cached: int | None) -> dict[str, Any]:
    """An OpenAI usage object; cached tokens are reported only when the prefix cache is on."""
    data: dict[str, Any] = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }
    if cached is not None:
        data["prompt_tokens_details"] = {"cached_tokens": cached}
    return data


class FaultServer:
    def __init__(self, options: Options) -> None:
        self.o = options
        self.requests = itertools.count()
        self.cache = PrefixCache(options.prefix_block) if options.prefix_block > 0 else None
        self._rendered: dict[tuple[int, bool, str], bytes] = {}
        self.streams = itertools.count(1)
        self.held = 0
        self.released = asyncio.Event()
        self.held_changed = asyncio.Event()

    def _must_hold(self, number: int) -> bool:
        return 0 < self.o.hold_from <= number and not self.released.is_set()

    async def _hold(self, writer: asyncio.StreamWriter) -> None:
        """Wait, with the first text event sent, until a test releases the stream."""
        await writer.drain()
        self.held += 1
        self.held_changed.set()
        await self.released.wait()

    async def control(self, method: str, target: str, writer: asyncio.StreamWriter) -> bool:
        path, _, query = target.partition("?")
        if method == "POST" and path == "/control/release":
            self.released.set()
            return await self.respond_json(writer, 200, {"released": self.held})
        if method == "GET" and path == "/control/held":
            want = int(dict(p.split("=", 1) for p in query.split("&") if "=" in p).get("n", 1))
            while self.held < want:
                self.held_changed.clear()
                await self.held_changed.wait()
            return await self.respond_json(writer, 200, {"held": self.held})
        return await self.respond_json(writer, 404, {"error": {"message": "not found"}})

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                method, path, _ = lines[0].split(" ", 2)
                headers = {
                    k.strip().lower(): v.strip()
                    for k, v in (line.split(":", 1) for line in lines[1:] if ":" in line)
                }
                length = int(headers.get("content-length", "0"))
                body = await reader.readexactly(length) if length else b""
                if self.o.api_key and not path.startswith("/control/"):
                    given = headers.get("authorization", "")
                    if given != f"Bearer {self.o.api_key}":
                        error = {"error": {"message": "missing or wrong API key"}}
                        keep_open = await self.respond_json(writer, 401, error)
                        continue
                keep_open = await self.route(method, path, body, writer)
                if self.o.close_after_stream and path.endswith("completions"):
                    keep_open = False
                if not keep_open or headers.get("connection", "").lower() == "close":
                    break
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
            pass
        finally:
            with contextlib.suppress(Exception):
                writer.close()

    async def route(
        self, method: str, path: str, body: bytes, writer: asyncio.StreamWriter
    ) -> bool:
        if path.startswith("/control/"):
            return await self.control(method, path, writer)
        path = path.split("?", 1)[0]
        if method == "GET" and path in ("/health", "/v1/models"):
            data = {"status": "ok", "data": [{"id": "fault", "object": "model"}]}
            return await self.respond_json(writer, 200, data)
        if method != "POST":
            return await self.respond_json(writer, 405, {"error": {"message": "method"}})
        try:
            request = json.loads(body or b"{}")
        except ValueError:
            return await self.respond_json(writer, 400, {"error": {"message": "bad JSON"}})
        if path == "/tokenize":
            text = request.get("content", request.get("prompt", ""))
            return await self.respond_json(writer, 200, {"tokens": list(range(len(text.split())))})
        if path in ("/v1/completions", "/v1/chat/completions"):
            return await self.stream(request, path.endswith("chat/completions"), writer)
        return await self.respond_json(writer, 404, {"error": {"message": "not found"}})

    async def respond_json(self, writer: asyncio.StreamWriter, status: int, data: Any) -> bool:
        payload = json.dumps(data).encode()
        reason = {
            200: "OK",
            400: "Bad Request",
            401: "Unauthorized",
            404: "Not Found",
            500: "Internal Server Error",
        }
        writer.write(
            f"HTTP/1.1 {status} {reason.get(status, 'Error')}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(payload)}\r\n\r\n".encode()
            + payload
        )
        await writer.drain()
        return True

    def pick_mode(self, request: dict[str, Any]) -> str:
        number = next(self.requests)
        mode = request.get("fault") or self.o.mode
        if mode == "cycle":
            mode = self.o.cycle[number % len(self.o.cycle)]
        return mode

    async def stream(
        self, request: dict[str, Any], chat: bool, writer: asyncio.StreamWriter
    ) -> bool:
        o = self.o
        mode = self.pick_mode(request)
        if mode == "http_error":
            return await self.respond_json(writer, 500, {"error": {"message": "injected 500"}})
        if chat:
            prompt = " ".join(str(m.get("content", "")) for m in request.get("messages", []))
        else:
            prompt = str(request.get("prompt", ""))
        words = prompt.split()
        n_in = len(words)
        cached = self.cache.lookup_and_insert(words) if self.cache else None
        max_tokens = int(request.get("max_tokens") or 16)
        n_out = {"empty": 0, "short": max_tokens // 2}.get(mode, max_tokens)
        if not request.get("stream"):
            return await self.complete(writer, request, chat, mode, n_in, n_out, cached)
        number = next(self.streams)
        options = request.get("stream_options") or {}
        continuous = bool(options.get("continuous_usage_stats"))
        with_usage = bool(options.get("include_usage")) and mode != "no_usage"
        model = request.get("model", "fault")

        def usage(completion: int) -> dict[str, Any]:
            return _usage(n_in, completion, cached)

        def event(
            text: str | None, completion: int, finish: str | None = None, **extra: Any
        ) -> bytes:
            if chat:
                delta: dict[str, Any] = {} if text is None else {"content": text}
                if text == "" and completion == 0:
                    delta = {"role": "assistant", "content": ""}
                choice: dict[str, Any] = {"index": 0, "delta": delta, "finish_reason": finish}
            else:
                choice = {"index": 0, "text": text or "", "finish_reason": finish}
            data: dict[str, Any] = {
                "id": "fault-1",
                "object": "chat.completion.chunk" if chat else "text_completion",
                "model": model,
                "choices": [choice],
                **extra,
            }
            if continuous and with_usage and text:
                data["usage"] = usage(completion)
            payload = json.dumps(data, separators=(",", ":")).encode()
            if mode == "multiline":
                head, tail = payload.split(b",", 1)
                return b"data: " + head + b",\ndata: " + tail + b"\n\n"
            return b"data: " + payload + b"\n\n"

        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
            b"Cache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n\r\n"
        )

        def send(data: bytes) -> None:
            writer.write(b"%x\r\n%s\r\n" % (len(data), data))

        if mode in ("role_first", "empty"):
            send(event("", 0))
            if with_usage and mode == "role_first":
                send(b'data: {"choices":[],"usage":' + json.dumps(usage(0)).encode() + b"}\n\n")
            await writer.drain()
            if o.first_delay_ms:
                await asyncio.sleep(o.first_delay_ms / 1000)
        if o.ttft_ms:
            await asyncio.sleep(o.ttft_ms / 1000)

        if mode in ("ok", "no_usage") and not o.itl_ms and not continuous and not o.hold_from:
            # As fast as possible: the whole body in one write, rendered once.
            key = (chat, str(model))
            await self.blast(writer, event, key, n_out, max_tokens, usage, with_usage)
            return True
        sent = 0
        piece = " " + o.word
        k = max(1, o.tokens_per_chunk)
        while sent < n_out:
            if mode in ("inband_error", "reset", "malformed", "truncate") and sent >= o.fail_after:
                break
            step = min(k, n_out - sent)
            sent += step
            extra: dict[str, Any] = {"server_ns": time.monotonic_ns()} if sent == step else {}
            send(event(piece * step, sent, **extra))
            if sent == step and self._must_hold(number):
                await self._hold(writer)
            if mode == "stall":
                await writer.drain()
                await asyncio.sleep(o.stall_s)
            if o.itl_ms:
                await writer.drain()
                await asyncio.sleep(o.itl_ms / 1000)
            elif writer.transport.get_write_buffer_size() > 1 << 16:
                await writer.drain()
        if mode == "inband_error":
            send(b'data: {"error":{"message":"injected in-band error","code":500}}\n\n')
        elif mode == "malformed":
            send(b"data: {this is not json\n\n")
        elif mode == "truncate":
            # The body ends properly, the stream does not: nothing says it is complete.
            writer.write(b"0\r\n\r\n")
            await writer.drain()
            return True
        elif mode == "reset":
            await writer.drain()
            sock = writer.get_extra_info("socket")
            if sock is not None:
                # Linger 0: close() sends a TCP RST instead of a clean FIN.
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            writer.transport.abort()
            return False
        else:
            finish = "length" if sent >= max_tokens else "stop"
            send(event(None, sent, finish))
            if with_usage:
                tail = {"id": "fault-1", "choices": [], "usage": usage(sent)}
                send(b"data: " + json.dumps(tail).encode() + b"\n\n")
        send(b"data: [DONE]\n\n")
        writer.write(b"0\r\n\r\n")
        await writer.drain()
        return True

    async def blast(
        self,
        writer: asyncio.StreamWriter,
        event: Any,
        key: tuple[bool, str],
        n_out: int,
        max_tokens: int,
        usage: Any,
        with_usage: bool,
    ) -> None:
        k = max(1, self.o.tokens_per_chunk)
        piece = " " + self.o.word
        sizes = [min(k, n_out - start) for start in range(0, n_out, k)]
        parts = []
        sent = 0
        for index, step in enumerate(sizes):
            sent += step
            if index == 0:
                data = event(piece * step, sent, server_ns=time.monotonic_ns())
            else:
                # Later events differ only in their text, so render each shape once.
                data = self._rendered.get((step, *key))
                if data is None:
                    data = self._rendered[(step, *key)] = event(piece * step, sent)
            parts.append(b"%x\r\n%s\r\n" % (len(data), data))
        finish = "length" if sent >= max_tokens else "stop"
        tail = event(None, sent, finish)
        parts.append(b"%x\r\n%s\r\n" % (len(tail), tail))
        if with_usage:
            last = b"data: " + json.dumps({"choices": [], "usage": usage(sent)}).encode() + b"\n\n"
            parts.append(b"%x\r\n%s\r\n" % (len(last), last))
        parts.append(b"e\r\ndata: [DONE]\n\n\r\n0\r\n\r\n")
        writer.write(b"".join(parts))
        await writer.drain()

    async def complete(
        self,
        writer: asyncio.StreamWriter,
        request: dict[str, Any],
        chat: bool,
        mode: str,
        n_in: int,
        n_out: int,
        cached: int | None,
    ) -> bool:
        """A non-streaming answer (what usage probes send)."""
        text = (" " + self.o.word) * n_out
        choice: dict[str, Any] = {"index": 0, "finish_reason": "length"}
        if chat:
            choice["message"] = {"role": "assistant", "content": text}
        else:
            choice["text"] = text
        data: dict[str, Any] = {"id": "fault-1", "model": request.get("model"), "choices": [choice]}
        if mode != "no_usage":
            data["usage"] = _usage(n_in, n_out, cached)
        return await self.respond_json(writer, 200, data)


def parse_args(argv: list[str] | None = None) -> tuple[str, int, Options]:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port (printed)")
    parser.add_argument("--mode", choices=MODES, default="ok")
    parser.add_argument("--cycle", default="ok", help="modes for --mode cycle, comma separated")
    parser.add_argument("--tokens-per-chunk", type=int, default=1)
    parser.add_argument("--ttft-ms", type=float, default=0.0)
    parser.add_argument("--itl-ms", type=float, default=0.0, help="0: as fast as possible")
    parser.add_argument("--first-delay-ms", type=float, default=0.0)
    parser.add_argument("--fail-after", type=int, default=2)
    parser.add_argument("--stall-s", type=float, default=3600.0)
    parser.add_argument("--prefix-block", type=int, default=0)
    parser.add_argument("--hold", action="store_true", help="the same as --hold-from 1")
    parser.add_argument(
        "--hold-from",
        type=int,
        default=0,
        help="hold the N-th stream and later ones after their first text event (see above)",
    )
    parser.add_argument(
        "--close-after-stream",
        action="store_true",
        help="close the connection after every completion, as llama.cpp's server does",
    )
    parser.add_argument("--api-key", default="", help="answer 401 without this Bearer key")
    args = parser.parse_args(argv)
    cycle = [m.strip() for m in args.cycle.split(",") if m.strip()]
    bad = [m for m in cycle if m not in MODES or m == "cycle"]
    if bad:
        parser.error(f"unknown modes in --cycle: {', '.join(bad)}")
    options = Options(
        mode=args.mode,
        cycle=cycle,
        tokens_per_chunk=args.tokens_per_chunk,
        ttft_ms=args.ttft_ms,
        itl_ms=args.itl_ms,
        first_delay_ms=args.first_delay_ms,
        fail_after=args.fail_after,
        stall_s=args.stall_s,
        prefix_block=args.prefix_block,
        close_after_stream=args.close_after_stream,
        hold_from=1 if args.hold else args.hold_from,
        api_key=args.api_key,
    )
    return args.host, args.port, options


async def serve(host: str, port: int, options: Options) -> None:
    server = FaultServer(options)
    listener = await asyncio.start_server(server.handle, host, port, backlog=4096, limit=1 << 24)
    bound = listener.sockets[0].getsockname()[1]
    # The parent process reads this line to learn the port.
    print(f"listening on http://{host}:{bound}", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    async with listener:
        await stop.wait()
        # Idle keep-alive connections would otherwise hold the exit until the parent's
        # stop() gives up and kills the process (wait_closed waits for them since 3.12).
        listener.close()
        close_clients = getattr(listener, "close_clients", None)  # Python 3.13+
        if close_clients is not None:
            close_clients()


def main(argv: list[str] | None = None) -> None:
    host, port, options = parse_args(argv)
    asyncio.run(serve(host, port, options))


if __name__ == "__main__":
    main()
