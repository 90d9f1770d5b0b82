"""The load generator's own ceiling, against the in-repo fast server.

    .venv/bin/python bench/loadgen_capacity.py [--streams 1,64,512,2048] [--seconds 3]

The client runs on one core (CPU 0), the fault server on another (CPU 1) streaming as fast
as it can. For each number of concurrent streams it prints, for our client (httpx over the
aiohttp transport, the default), our client over httpx's own transport, and a minimal
aiohttp reader written the way most peer tools read SSE (line iteration, json.loads):

- SSE events/s and tokens/s sustained over a closed-loop run of --seconds,
- client-added TTFT error: client TTFT arrival minus the server's own send timestamp of the
  first event (same monotonic clock), p50 and p99, in ms,
- memory per open stream: RSS growth with N streams held open, divided by N,
and our events/s as a ratio to the minimal reader's. Not a test: numbers vary by machine.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import resource
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import aiohttp
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from workers.loadgen.client import (  # noqa: E402
    EndpointConfig,
    RequestSpec,
    make_http_client,
    stream_request,
)
from workers.loadgen.metrics import RequestTiming  # noqa: E402
from workers.testing.processes import fault_server  # noqa: E402

TOKENS = 128  # per request, one per event


@dataclass
class Sample:
    events: int
    seconds: float
    ttft_errors_ms: list[float]

    @property
    def events_per_s(self) -> float:
        return self.events / self.seconds


def _rss_bytes() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * resource.getpagesize()


# --- our client ----------------------------------------------------------------------


def _cfg(url: str, transport: str) -> EndpointConfig:
    # No continuous usage: the server then renders each response once and writes it whole.
    return EndpointConfig(
        base_url=url, model="bench", continuous_usage=False, transport=transport, timeout_s=600
    )


async def ours(
    url: str, streams: int, seconds: float, transport: str, tokens: int = TOKENS
) -> Sample:
    cfg = _cfg(url, transport)
    spec = RequestSpec(prompt="the city", max_tokens=tokens)
    events = 0
    errors: list[float] = []
    deadline = time.perf_counter_ns() + int(seconds * 1e9)

    async with make_http_client(streams, transport) as http:

        async def worker() -> None:
            nonlocal events
            while time.perf_counter_ns() < deadline:
                timing = await stream_request(http, cfg, spec, RequestTiming(i=0, t_send_ns=0))
                if timing.status != "ok":
                    raise RuntimeError(f"bench request failed: {timing.status} {timing.error}")
                events += timing.chunks
                if timing.server_first_ns is not None:
                    errors.append((timing.text_ns[0] - timing.server_first_ns) / 1e6)

        start = time.perf_counter_ns()
        await asyncio.gather(*(worker() for _ in range(streams)))
        elapsed = (time.perf_counter_ns() - start) / 1e9
    return Sample(events, elapsed, errors)


# --- the minimal aiohttp reader (what peer tools do) -------------------------------


async def minimal(url: str, streams: int, seconds: float, tokens: int = TOKENS) -> Sample:
    body = {
        "model": "bench",
        "prompt": "the city",
        "max_tokens": tokens,
        "stream": True,
        "stream_options": {"include_usage": True},
        "ignore_eos": True,
    }
    events = 0
    errors: list[float] = []
    deadline = time.perf_counter_ns() + int(seconds * 1e9)
    connector = aiohttp.TCPConnector(limit=streams)
    timeout = aiohttp.ClientTimeout(total=600)
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:

        async def one() -> None:
            nonlocal events
            first = True
            async with session.post(url + "/v1/completions", json=body) as response:
                async for line in response.content:
                    line = line.strip()
                    if not line:
                        continue
                    data = line.removeprefix(b"data: ")
                    if data == b"[DONE]":
                        break
                    now = time.perf_counter_ns()
                    event = json.loads(data)
                    choices = event.get("choices")
                    if choices and choices[0].get("text"):
                        events += 1
                        if first and "server_ns" in event:
                            errors.append((now - event["server_ns"]) / 1e6)
                        first = False

        async def worker() -> None:
            while time.perf_counter_ns() < deadline:
                await one()

        start = time.perf_counter_ns()
        await asyncio.gather(*(worker() for _ in range(streams)))
        elapsed = (time.perf_counter_ns() - start) / 1e9
    return Sample(events, elapsed, errors)


# --- memory per open stream ----------------------------------------------------------


async def _hold_open(
    streams: int, start_one: Callable[[], Awaitable[None]], ready: list[int]
) -> int:
    gc.collect()
    before = _rss_bytes()
    tasks = [asyncio.create_task(start_one()) for _ in range(streams)]
    while len(ready) < streams:
        await asyncio.sleep(0.05)
        if any(task.done() for task in tasks):
            raise RuntimeError("a held stream ended early")
    gc.collect()
    grown = _rss_bytes() - before
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    return max(0, grown) // streams


async def memory_ours(url: str, streams: int, transport: str) -> int:
    cfg = _cfg(url, transport)
    spec = RequestSpec(prompt="the city", max_tokens=TOKENS)
    ready: list[int] = []
    async with make_http_client(streams, transport) as http:

        async def start_one() -> None:
            timing = RequestTiming(i=0, t_send_ns=0)
            task = asyncio.create_task(stream_request(http, cfg, spec, timing))
            while not timing.text_ns:
                await asyncio.sleep(0.01)
            ready.append(1)
            await task

        return await _hold_open(streams, start_one, ready)


async def memory_minimal(url: str, streams: int) -> int:
    body = {"model": "bench", "prompt": "the city", "max_tokens": TOKENS, "stream": True}
    ready: list[int] = []
    connector = aiohttp.TCPConnector(limit=streams)
    async with aiohttp.ClientSession(connector=connector) as session:

        async def start_one() -> None:
            async with session.post(url + "/v1/completions", json=body) as response:
                async for line in response.content:
                    if line.startswith(b"data: {"):
                        ready.append(1)
                        break
                await asyncio.sleep(3600)

        return await _hold_open(streams, start_one, ready)


def _p(values: list[float], q: float) -> float:
    return float(np.percentile(values, q)) if values else float("nan")


def _memory_in_fresh_process(client: str, streams: int, url: str, cpu: int) -> int:
    """Bytes per open stream, measured in a new interpreter: a process that has already run
    other loads keeps its grown heap, and RSS would not move."""
    command = [sys.executable, __file__, "--memory", client, str(streams), url]
    done = subprocess.run(
        command,
        capture_output=True,
        text=True,
        check=True,
        preexec_fn=lambda: os.sched_setaffinity(0, {cpu}),
    )
    return int(done.stdout.strip().splitlines()[-1])


def _memory_main(client: str, streams: int, url: str) -> None:
    if client == "minimal":
        per_stream = asyncio.run(memory_minimal(url, streams))
    else:
        per_stream = asyncio.run(memory_ours(url, streams, client))
    print(per_stream)


def main() -> None:
    if len(sys.argv) == 5 and sys.argv[1] == "--memory":
        _memory_main(sys.argv[2], int(sys.argv[3]), sys.argv[4])
        return
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--streams", default="1,64,512,2048")
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--itl-ms", type=float, default=20.0, help="paced server for TTFT error")
    parser.add_argument("--skip-httpx", action="store_true", help="skip httpx's own transport")
    args = parser.parse_args()
    levels = [int(s) for s in args.streams.split(",")]
    cpus = sorted(os.sched_getaffinity(0))
    client_cpu, server_cpu = cpus[0], cpus[-1]
    os.sched_setaffinity(0, {client_cpu})
    print(
        f"client on CPU {client_cpu}, servers on CPU {server_cpu}; throughput: {TOKENS} tokens "
        f"per request as fast as possible; TTFT error: 64 tokens per request paced at "
        f"{args.itl_ms:g} ms/token"
    )
    header = (
        f"{'streams':>7} {'client':<16} {'events/s':>10} {'tokens/s':>10} {'ratio':>6} "
        f"{'TTFTerr p50':>11} {'p99 ms':>8} {'KiB/stream':>10}"
    )
    clients = ["ours (aiohttp)"] + ([] if args.skip_httpx else ["ours (httpx)"])
    clients.append("minimal aiohttp")
    paced_args = ("--itl-ms", f"{args.itl_ms}")
    with (
        fault_server(cpu=server_cpu) as fast,
        fault_server(*paced_args, cpu=server_cpu) as paced,
        fault_server("--mode", "stall", cpu=server_cpu) as stall,
    ):
        print(header)
        for streams in levels:
            results: dict[str, tuple[Sample, Sample, int]] = {}
            for name in clients:
                if name == "minimal aiohttp":
                    sample = asyncio.run(minimal(fast, streams, args.seconds))
                    latency = asyncio.run(minimal(paced, streams, args.seconds, tokens=64))
                    memory = _memory_in_fresh_process("minimal", streams, stall, client_cpu)
                else:
                    transport = "aiohttp" if "aiohttp" in name else "httpx"
                    sample = asyncio.run(ours(fast, streams, args.seconds, transport))
                    latency = asyncio.run(ours(paced, streams, args.seconds, transport, tokens=64))
                    memory = _memory_in_fresh_process(transport, streams, stall, client_cpu)
                results[name] = (sample, latency, memory)
            baseline = results["minimal aiohttp"][0].events_per_s
            for name, (sample, latency, memory) in results.items():
                ratio = sample.events_per_s / baseline if baseline else float("nan")
                errors = latency.ttft_errors_ms
                print(
                    f"{streams:>7} {name:<16} {sample.events_per_s:>10.0f} "
                    f"{sample.events_per_s:>10.0f} {ratio:>6.2f} {_p(errors, 50):>11.3f} "
                    f"{_p(errors, 99):>8.3f} {memory / 1024:>10.1f}",
                    flush=True,
                )


if __name__ == "__main__":
    main()
