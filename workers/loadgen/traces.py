"""Trace replay: the Mooncake trace layout, sent at its own timestamps (or scaled).

A Mooncake trace is JSONL, one request a line: `timestamp` (ms from the trace start),
`input_length` and `output_length` (tokens) and `hash_ids`, one id per 512-token block of
the prompt; two requests whose first k ids agree share their first k blocks. sglang's and
aiperf's replay modes read the same layout. Each block id becomes a fixed text of exactly
one block's tokens, so the shared blocks really are shared prefixes on the server and its
prefix cache is exercised as the trace's own workload exercised it.
"""

from __future__ import annotations

import asyncio
import hashlib
import random
from dataclasses import dataclass
from pathlib import Path
from time import perf_counter_ns
from typing import Any

from workers.loadgen.client import EndpointConfig, RequestSpec, make_http_client, stream_request
from workers.loadgen.client_load import ClientLimits, ClientMonitor, client_bound
from workers.loadgen.datasets import json_lines
from workers.loadgen.metrics import NS_PER_S, RequestTiming, build_point
from workers.loadgen.prompts import PromptBuilder, code_words
from workers.loadgen.runner import LevelProgress, ProgressCallback
from workers.loadgen.shares import capped
from workers.result_facts import TraceIdentity
from workers.results import Point

BLOCK_TOKENS = 512  # Mooncake's block size


class TraceError(ValueError):
    """A trace file that cannot be replayed; the message names the line and field."""


@dataclass(slots=True, frozen=True)
class TraceRow:
    timestamp_ms: float
    input_length: int
    output_length: int
    hash_ids: tuple[int, ...]


@dataclass(slots=True)
class Trace:
    rows: list[TraceRow]
    identity: TraceIdentity


def _int(row: dict[str, Any], name: str, line: int, minimum: int) -> int:
    value = row.get(name)
    if type(value) is not int or value < minimum:
        raise TraceError(f"line {line}: {name} must be an integer >= {minimum}, got {value!r}")
    return value


def read_mooncake(
    path: Path,
    *,
    scale: float = 1.0,
    limit: int | None = None,
    block_tokens: int = BLOCK_TOKENS,
) -> Trace:
    """The first `limit` rows (all when None) of a Mooncake-layout JSONL, and its identity:
    the file's name and sha256 (of every byte, whatever `limit`) and the replay scale."""
    if scale <= 0:
        raise TraceError("the trace scale must be positive")
    data = path.read_bytes()
    rows: list[TraceRow] = []
    for number, row in json_lines(data, TraceError, limit=limit, rows=rows):
        if not isinstance(row, dict):
            raise TraceError(f"line {number}: expected a JSON object")
        timestamp = row.get("timestamp")
        if not isinstance(timestamp, int | float) or isinstance(timestamp, bool) or timestamp < 0:
            raise TraceError(f"line {number}: timestamp must be a number of ms >= 0")
        hash_ids = row.get("hash_ids", [])
        if not isinstance(hash_ids, list) or any(type(h) is not int for h in hash_ids):
            raise TraceError(f"line {number}: hash_ids must be a list of integers")
        input_length = _int(row, "input_length", number, 1)
        if hash_ids and not (
            (len(hash_ids) - 1) * block_tokens < input_length <= len(hash_ids) * block_tokens
        ):
            raise TraceError(
                f"line {number}: input_length {input_length} does not fit "
                f"{len(hash_ids)} blocks of {block_tokens} tokens"
            )
        rows.append(
            TraceRow(
                timestamp_ms=float(timestamp),
                input_length=input_length,
                output_length=_int(row, "output_length", number, 1),
                hash_ids=tuple(hash_ids),
            )
        )
    if not rows:
        raise TraceError("the trace has no requests")
    identity = TraceIdentity(
        name=path.name[:200],
        sha256=hashlib.sha256(data).hexdigest(),
        format="mooncake",
        scale=scale,
        requests=len(rows),
        block_tokens=block_tokens,
    )
    return Trace(rows=rows, identity=identity)


def trace_dataset(identity: TraceIdentity) -> str:
    """The scenario's dataset name: the same bytes at the same scale are one scenario."""
    return f"trace-{identity.format}-{identity.sha256[:16]}-x{identity.scale:g}"


class TracePrompts:
    """Prompts for a trace's rows: block id -> one fixed text of `block_tokens` tokens.

    A block that ends a prompt short (the last, partial block) is the same words cut
    earlier, so it is still a prefix of the full block. The server's template tokens
    (`overhead`) come off the last block, so prompts count `input_length` on the server.
    """

    def __init__(
        self, builder: PromptBuilder, *, overhead: int = 0, block_tokens: int = BLOCK_TOKENS
    ) -> None:
        self.builder = builder
        self.overhead = overhead
        self.block_tokens = block_tokens
        self._blocks: dict[tuple[int, int], str] = {}

    def block(self, hash_id: int, n_tokens: int) -> str:
        key = (hash_id, n_tokens)
        text = self._blocks.get(key)
        if text is None:
            rng = random.Random(f"{self.builder.seed}:block:{hash_id}")
            # A leading space: blocks are appended one after another and count as they lie.
            # The block's code leads it, so different blocks diverge at their first word;
            # a piece too short for its code is plain words.
            lead = " " + code_words(hash_id)
            if self.builder.counter.count(lead) >= n_tokens:
                lead = " "
            text = self.builder.fit(n_tokens, rng, lead=lead)
            self._blocks[key] = text
        return text

    def spec(self, row: TraceRow, key: int) -> RequestSpec:
        hash_ids = row.hash_ids or (-1 - key,)  # no ids: a block of its own, shared by none
        remaining = row.input_length - self.overhead
        parts = []
        for hash_id in hash_ids:
            n = min(self.block_tokens, remaining)
            if n <= 0:
                break
            parts.append(self.block(hash_id, n))
            remaining -= n
        return RequestSpec(
            prompt="".join(parts), max_tokens=row.output_length, target_n_in=row.input_length
        )


async def replay(
    cfg: EndpointConfig,
    trace: Trace,
    prompts: TracePrompts,
    *,
    max_concurrency: int | None = None,
    limits: ClientLimits | None = None,
    progress: ProgressCallback | None = None,
) -> tuple[Point, list[RequestTiming]]:
    """Send every row at its timestamp divided by the scale (open loop: a late server never
    delays later sends; latency is also reported from each planned send)."""
    specs = [prompts.spec(row, k) for k, row in enumerate(trace.rows)]
    scale = trace.identity.scale
    origin = trace.rows[0].timestamp_ms
    offsets = [int((row.timestamp_ms - origin) / scale * 1_000_000) for row in trace.rows]
    send = capped(stream_request, max_concurrency)
    label = f"trace x{scale:g}"
    state = LevelProgress(label, len(specs), None, perf_counter_ns())
    timings: list[RequestTiming] = []

    async def one(http: Any, k: int, t_sched: int) -> None:
        timing = RequestTiming(i=k, t_send_ns=0, t_sched_ns=t_sched)
        await send(http, cfg, specs[k], timing)
        timings.append(timing)
        state.done += 1
        state.errors += not timing.ok
        state.output_tokens += timing.n_out or 0
        if progress is not None:
            progress(state)

    async with (
        make_http_client(max_concurrency or 0, cfg.transport) as http,
        ClientMonitor(limits or ClientLimits()) as monitor,
    ):
        start = perf_counter_ns()
        tasks = []
        try:
            for k, offset in enumerate(offsets):
                t_sched = start + offset
                delay = (t_sched - perf_counter_ns()) / NS_PER_S
                if delay > 0:
                    await asyncio.sleep(delay)
                tasks.append(asyncio.create_task(one(http, k, t_sched)))
            await asyncio.gather(*tasks)
        finally:
            for task in tasks:
                task.cancel()
    timings.sort(key=lambda t: t.i)
    point = build_point(timings, label=label)
    point.client = monitor.result()
    point.client_bound = client_bound(point.client)
    return point, timings
