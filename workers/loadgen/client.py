"""Async streaming client for OpenAI-compatible /v1/completions and /v1/chat/completions.

One request in, one `RequestTiming` out, whatever happens: every failure is classified
(`RequestStatus`), never raised. Timestamps are `perf_counter_ns`; a text event is stamped
with the arrival time of the network read that carried it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from time import perf_counter_ns
from typing import Any, Literal

import httpx
import orjson

from workers.loadgen.metrics import RequestTiming, final_status
from workers.loadgen.transport import ARRIVAL_EXTENSION, AiohttpTransport
from workers.results import RequestStatus

Api = Literal["completions", "chat"]
TokenCounter = Callable[[str], int]
_SSE_FIELDS = (b"event:", b"id:", b"retry:")
DIRECT_ATTRIBUTE = "inferboard_direct"
# orjson parses an SSE payload about 4x faster than the standard library's scanner, and
# reads bytes, so events are never decoded to str first (bench/loadgen_capacity.py).
_decode = orjson.loads


@dataclass(slots=True)
class EndpointConfig:
    base_url: str
    model: str
    api: Api = "completions"
    api_key: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    extra_body: dict[str, Any] = field(default_factory=dict)
    timeout_s: float = 600.0
    ignore_eos: bool = True
    # min_tokens backs ignore_eos on engines that stop on EOS otherwise (vLLM, sglang).
    min_tokens: bool = True
    # vLLM and sglang then put cumulative usage on every chunk: exact tokens per chunk.
    continuous_usage: bool = True
    temperature: float = 0.0
    transport: Literal["aiohttp", "httpx"] = "aiohttp"

    @property
    def root(self) -> str:
        """The server root: '.../v1' suffixes are accepted and removed."""
        root = self.base_url.rstrip("/")
        return root[: -len("/v1")] if root.endswith("/v1") else root

    @property
    def url(self) -> str:
        path = "/v1/chat/completions" if self.api == "chat" else "/v1/completions"
        return self.root + path

    def request_headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "text/event-stream"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        headers.update(self.headers)
        return headers


@dataclass(slots=True)
class RequestSpec:
    prompt: str
    max_tokens: int
    target_n_in: int | None = None
    # A whole conversation for the chat API (multi-turn sessions); None: one user message.
    messages: list[dict[str, str]] | None = None


def request_body(cfg: EndpointConfig, spec: RequestSpec) -> dict[str, Any]:
    body: dict[str, Any] = {"model": cfg.model, "stream": True, "max_tokens": spec.max_tokens}
    if cfg.api == "chat":
        body["messages"] = spec.messages or [{"role": "user", "content": spec.prompt}]
    else:
        body["prompt"] = spec.prompt
    stream_options: dict[str, Any] = {"include_usage": True}
    if cfg.continuous_usage:
        stream_options["continuous_usage_stats"] = True
    body["stream_options"] = stream_options
    body["temperature"] = cfg.temperature
    if cfg.ignore_eos:
        body["ignore_eos"] = True
        if cfg.min_tokens:
            body["min_tokens"] = spec.max_tokens
    body.update(cfg.extra_body)
    return body


def make_http_client(concurrency: int, transport: str = "aiohttp") -> httpx.AsyncClient:
    """One connection pool sized to the concurrency (0: unlimited), reused by every request."""
    size = concurrency or None  # 0: unlimited
    limits = httpx.Limits(max_connections=size, max_keepalive_connections=size)
    if transport == "aiohttp":
        wire = AiohttpTransport(limit=concurrency)
        client = httpx.AsyncClient(transport=wire, timeout=None)
        # stream_request posts through the transport itself, skipping httpx's per-request
        # objects; everything else (probes, closing the pool) goes through httpx.
        setattr(client, DIRECT_ATTRIBUTE, wire)
        return client
    return httpx.AsyncClient(limits=limits, timeout=None)


class StreamFailure(Exception):
    def __init__(self, status: RequestStatus, message: str) -> None:
        super().__init__(message)
        self.status = status


class SseParser:
    """Turns raw SSE bytes into timestamps on a `RequestTiming`.

    As the SSE specification says, an event's `data:` lines are joined with newlines and
    the event is dispatched at the blank line that ends it; it is stamped with the arrival
    of the read that completed it. Role-only and usage-only events carry no text and are
    not text events. `complete` says whether the stream said it was done ([DONE], or a
    choice with a finish_reason): a body that ends without either was cut short.
    """

    def __init__(self, timing: RequestTiming, keep_text: bool = False) -> None:
        self.timing = timing
        self.keep_text = keep_text
        self.text: list[str] = []
        self.usage: dict[str, Any] | None = None
        self.done = False
        self.finished = False  # a choice carried a finish_reason
        self.events = 0
        self._buffer = b""
        self._data: list[bytes] = []  # data lines of the event being read
        self._tokens: list[int] | None = []
        self._last_completion_tokens = 0

    @property
    def complete(self) -> bool:
        return self.done or self.finished

    def feed(self, data: bytes, now_ns: int) -> None:
        lines = (self._buffer + data if self._buffer else data).split(b"\n")
        self._buffer = lines.pop()  # an incomplete last line waits for the next read
        pending = self._data
        event = self._event
        for line in lines:
            if line[:6] == b"data: ":
                # The common case, kept short: this loop runs once per SSE line.
                pending.append(line[6:])
            elif not line or line == b"\r":
                if pending:
                    # Inlined _dispatch: this runs once per event.
                    payload = pending[0] if len(pending) == 1 else b"\n".join(pending)
                    pending.clear()
                    event(payload.strip(), now_ns)
            else:
                self._line(line.rstrip(b"\r"))

    def close(self, now_ns: int) -> None:
        """End of body: a last line without a newline, and an event without its blank line,
        still count (lenient where the specification would drop them)."""
        if self._buffer.strip():
            line, self._buffer = self._buffer.strip(), b""
            if line[:6] == b"data: ":
                self._data.append(line[6:])
            else:
                self._line(line)
        if self._data:
            try:
                self._dispatch(now_ns)
            except StreamFailure as exc:
                if exc.status != "malformed_sse":
                    raise
                # Bytes that stop inside an event are a stream cut short, not a bad server.
                raise StreamFailure(
                    "truncated", f"the stream ended inside an event: {exc}"
                ) from None

    def _dispatch(self, now_ns: int) -> None:
        pending = self._data
        payload = pending[0] if len(pending) == 1 else b"\n".join(pending)
        pending.clear()
        self._event(payload.strip(), now_ns)

    def _line(self, line: bytes) -> None:
        if line.startswith(b"data:"):
            self._data.append(line[5:])
        elif line.startswith(b"error:"):
            # llama.cpp's server names error events this way.
            raise StreamFailure("inband_error", line[6:].strip().decode("utf-8", "replace"))
        elif line.startswith(b":") or line.startswith(_SSE_FIELDS):
            return
        else:
            raise StreamFailure("malformed_sse", f"not an SSE line: {line[:100]!r}")

    def _event(self, payload: bytes, now_ns: int) -> None:
        if payload == b"[DONE]":
            self.done = True
            return
        self.events += 1
        try:
            event = _decode(payload)
        except ValueError:  # orjson.JSONDecodeError is a ValueError
            raise StreamFailure("malformed_sse", f"not JSON: {payload[:100]!r}") from None
        if type(event) is not dict:
            raise StreamFailure("malformed_sse", f"not a JSON object: {payload[:100]!r}")
        if "error" in event and event["error"]:
            raise StreamFailure("inband_error", _error_text(event["error"]))
        choices = event.get("choices")
        choice = choices[0] if type(choices) is list and len(choices) == 1 else None
        text = choice.get("text") if type(choice) is dict and "delta" not in choice else None
        # `text` is a str only when `choice` is a dict (the line above); the hot path does not
        # test it twice, and mypy does not follow the one test through `text`.
        if type(text) is str and not choice.get("logprobs"):  # type: ignore[union-attr]
            # The commonest event, read inline: one completions choice, plain text.
            content, reasoning, logprob_tokens = text, "", None
            finish = choice.get("finish_reason")  # type: ignore[union-attr]
        else:
            content, reasoning, logprob_tokens, finish = _texts(choices)
        if finish:
            self.finished = True
        usage = event.get("usage")
        if content or reasoning:
            t = self.timing
            if not t.text_ns and "server_ns" in event:
                # Only the in-repo fault server sends this: the client-added delay is
                # measured against it (bench/loadgen_capacity.py).
                t.server_first_ns = event["server_ns"]
            t.text_ns.append(now_ns)
            if content and t.t_out_ns is None:
                t.t_out_ns = now_ns
            if self.keep_text:
                self.text.append(reasoning + content)
            self._count_chunk_tokens(usage, logprob_tokens)
        if isinstance(usage, dict):
            self.usage = usage
        timings = event.get("timings")
        if type(timings) is dict and "draft_n" in timings:
            # llama.cpp's last event: this request's speculative draft and accepted tokens.
            drafted, accepted = timings.get("draft_n"), timings.get("draft_n_accepted")
            if type(drafted) is int and type(accepted) is int:
                self.timing.draft_tokens, self.timing.draft_accepted = drafted, accepted

    def _count_chunk_tokens(self, usage: Any, logprob_tokens: int | None) -> None:
        if self._tokens is None:
            return
        completion = usage.get("completion_tokens") if isinstance(usage, dict) else None
        if isinstance(completion, int):
            # Tokens of text-less chunks (a split character) land on the next text chunk.
            self._tokens.append(completion - self._last_completion_tokens)
            self._last_completion_tokens = completion
        elif logprob_tokens is not None:
            self._tokens.append(logprob_tokens)
        else:
            self._tokens = None  # one unknown chunk makes the whole list unknown

    def chunk_tokens(self) -> list[int] | None:
        if self._tokens is None or len(self._tokens) != self.timing.chunks:
            return None
        return self._tokens


def _texts(choices: Any) -> tuple[str, str, int | None, bool]:
    """(content, reasoning, tokens by logprobs, a finish_reason seen) over one event."""
    if type(choices) is list and len(choices) == 1:
        # The common event: one completions choice with plain text and no logprobs.
        choice = choices[0]
        if type(choice) is dict and "delta" not in choice and not choice.get("logprobs"):
            text = choice.get("text")
            if type(text) is str:
                return text, "", None, bool(choice.get("finish_reason"))
    content, reasoning, logprob_tokens, finish = "", "", None, False
    if not isinstance(choices, list):
        return content, reasoning, logprob_tokens, finish
    for choice in choices:
        if not isinstance(choice, dict):
            continue
        finish = finish or bool(choice.get("finish_reason"))
        delta = choice.get("delta")
        if isinstance(delta, dict):
            content += delta.get("content") or ""
            reasoning += delta.get("reasoning_content") or delta.get("reasoning") or ""
        else:
            content += choice.get("text") or ""
        logprobs = choice.get("logprobs")
        if isinstance(logprobs, dict):
            entries = logprobs.get("content") or logprobs.get("tokens")
            if isinstance(entries, list):
                logprob_tokens = (logprob_tokens or 0) + len(entries)
    return content, reasoning, logprob_tokens, finish


def _error_text(error: Any) -> str:
    if isinstance(error, dict):
        return str(error.get("message") or error)[:500]
    return str(error)[:500]


def _apply_usage(
    timing: RequestTiming, parser: SseParser, count_tokens: TokenCounter | None
) -> None:
    usage = parser.usage or {}
    prompt_tokens = usage.get("prompt_tokens")
    completion_tokens = usage.get("completion_tokens")
    timing.n_in = prompt_tokens if isinstance(prompt_tokens, int) else None
    if isinstance(completion_tokens, int):
        timing.n_out, timing.n_out_source = completion_tokens, "usage"
    elif count_tokens is not None and parser.text:
        timing.n_out, timing.n_out_source = count_tokens("".join(parser.text)), "tokenizer"
    else:
        # No usage and no tokenizer: each text event carries at least one token.
        timing.n_out, timing.n_out_source = timing.chunks, "unknown"
    details = usage.get("prompt_tokens_details")
    cached = details.get("cached_tokens") if isinstance(details, dict) else None
    timing.cached = cached if isinstance(cached, int) else None
    timing.chunk_tokens = parser.chunk_tokens()


async def stream_request(
    http: httpx.AsyncClient,
    cfg: EndpointConfig,
    spec: RequestSpec,
    timing: RequestTiming,
    count_tokens: TokenCounter | None = None,
    keep_text: bool = False,
) -> RequestTiming:
    """Send one streaming request; fill and return `timing`. Never raises (but cancellation).
    `keep_text` keeps the answer's text on `timing.text` (a session's next turn needs it)."""
    body = orjson.dumps(request_body(cfg, spec))
    direct = getattr(http, DIRECT_ATTRIBUTE, None)
    timing.max_tokens = spec.max_tokens
    timing.ignore_eos = cfg.ignore_eos
    timing.target_n_in = spec.target_n_in
    parser = SseParser(timing, keep_text=keep_text or count_tokens is not None)
    timing.t_send_ns = perf_counter_ns()
    try:
        async with asyncio.timeout(cfg.timeout_s):
            if direct is not None:
                response = await direct.post_stream(cfg.url, cfg.request_headers(), body)
            else:
                request = http.build_request(
                    "POST", cfg.url, content=body, headers=cfg.request_headers()
                )
                response = await http.send(request, stream=True)
            try:
                timing.http_status = response.status_code
                if 300 <= response.status_code < 400:
                    # Never followed, and its body (often "Redirecting to <Location>") is
                    # not kept: a job's owner must not learn where a redirect points.
                    raise StreamFailure(
                        "http_error", f"HTTP {response.status_code}: redirect refused"
                    )
                if response.status_code >= 300:
                    detail = (await response.aread())[:300].decode("utf-8", "replace")
                    raise StreamFailure("http_error", f"HTTP {response.status_code}: {detail}")
                stream = response.extensions.get(ARRIVAL_EXTENSION)
                if stream is not None and "content-encoding" not in response.headers:
                    # Our transport's own stream: no httpx layers per read, and the time
                    # the bytes reached the process rather than when we got to them.
                    async for data in stream:
                        parser.feed(data, stream.arrival_ns or perf_counter_ns())
                else:
                    async for data in response.aiter_bytes():
                        parser.feed(data, perf_counter_ns())
                parser.close(perf_counter_ns())
                if not parser.complete:
                    raise StreamFailure(
                        "truncated",
                        f"the stream ended after {timing.chunks} text events without [DONE] "
                        "or a finish_reason",
                    )
            finally:
                await response.aclose()
        timing.t_end_ns = perf_counter_ns()
        if keep_text:
            timing.text = "".join(parser.text)
        _apply_usage(timing, parser, count_tokens)
        timing.status = final_status(timing)
    except StreamFailure as exc:
        _fail(timing, exc.status, str(exc))
    except (TimeoutError, httpx.TimeoutException):
        _fail(timing, "timeout", f"no complete response within {cfg.timeout_s:g} s")
    except (httpx.TransportError, ConnectionError) as exc:
        _fail(timing, "connection_error", f"{type(exc).__name__}: {exc}")
    except asyncio.CancelledError:
        _fail(timing, "cancelled", "cancelled")
        raise
    except Exception as exc:  # noqa: BLE001 - a bug in one request must not end the run
        _fail(timing, "other", f"{type(exc).__name__}: {exc}")
    if timing.status != "ok" and parser.usage is not None and timing.n_in is None:
        _apply_usage(timing, parser, None)
    return timing


def _fail(timing: RequestTiming, status: RequestStatus, message: str) -> None:
    timing.t_end_ns = perf_counter_ns()
    timing.status = status
    timing.error = message[:500]
