"""The load generator's own ceiling, against baselines measured in the same run.

    .venv/bin/python bench/loadgen_capacity.py [--streams 1,64,512] [--seconds 2]

Server: a pre-rendered SSE server (below, `--serve`): each response is one write of bytes
rendered once, with only the first event's server timestamp filled in, so the server is
never the bottleneck. It runs on its own cores; clients run pinned to the others.

Clients, side by side on one core each:
- ours: `stream_request`, the load generator's whole per-event path (SSE parse, JSON, arrival
  stamps, token accounting) over its aiohttp transport;
- bare aiohttp: an aiohttp reader that iterates SSE lines and parses nothing (no JSON, no
  stamps): the least an aiohttp client does per event, the baseline ours must approach;
- raw asyncio: an asyncio.Protocol on a socket, no HTTP library, no per-event work at all
  (it counts bytes against Content-Length): the physical limit.

Printed: events/s per client and ours as a ratio to each baseline at each stream count;
events/s of ours with 1, 2, ... client processes (one per core, the machine's cores minus
the server's) and the scaling against 1 process; client-added TTFT error (client arrival
stamp minus the server's send stamp, one monotonic clock) at saturation and at a paced
rate typical of a real node (--paced-streams x --paced-tok-s, from the fault server); and
memory per open stream. Not a test: numbers vary by machine; ratios are the point.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import re
import resource
import socket
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
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
from workers.testing.processes import fault_server, free_port  # noqa: E402

TOKENS = 128  # per response, one per event
_STAMP = re.compile(rb'"server_ns": *(\d+)')


# --- the pre-rendered server -----------------------------------------------------------


def render(tokens: int) -> tuple[bytes, bytes]:
    """(bytes before the first event's timestamp, bytes after it) of one whole response."""
    choice = b'"choices":[{"index":0,"text":" tok","finish_reason":null}]}\n\n'
    event = b'data: {"id":"b","object":"text_completion","model":"bench",' + choice
    first = b'data: {"id":"b","object":"text_completion","model":"bench","server_ns":'
    first_tail = b"," + choice
    usage = b'"usage":{"prompt_tokens":2,"completion_tokens":%d}' % tokens
    last = (
        b'data: {"choices":[{"index":0,"text":"","finish_reason":"length"}],'
        + usage
        + b"}\n\ndata: [DONE]\n\n"
    )
    body_len = len(first) + 19 + len(first_tail) + len(event) * (tokens - 1) + len(last)
    head = (
        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
        b"Content-Length: %d\r\n\r\n" % body_len
    )
    return head + first, first_tail + event * (tokens - 1) + last


class _Serve(asyncio.Protocol):
    def __init__(self, before: bytes, after: bytes) -> None:
        self.before, self.after = before, after
        self.buffer = b""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while True:
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            match = re.search(rb"(?i)content-length:\s*(\d+)", self.buffer[:end])
            total = end + 4 + (int(match.group(1)) if match else 0)
            if len(self.buffer) < total:
                return
            self.buffer = self.buffer[total:]
            stamp = b"%19d" % time.monotonic_ns()  # space-padded: still JSON
            self.transport.write(self.before + stamp + self.after)  # type: ignore[attr-defined]


def serve(port: int, tokens: int) -> None:
    """One server process; several share the port (SO_REUSEPORT)."""
    before, after = render(tokens)

    async def main() -> None:
        loop = asyncio.get_running_loop()
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.bind(("127.0.0.1", port))
        server = await loop.create_server(lambda: _Serve(before, after), sock=sock, backlog=4096)
        print("ready", flush=True)
        async with server:
            await server.serve_forever()

    asyncio.run(main())


class PreRendered:
    """`processes` server processes on `cpus`, sharing one port."""

    def __init__(self, cpus: list[int], tokens: int = TOKENS) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.processes = []
        for cpu in cpus:
            process = subprocess.Popen(
                [sys.executable, __file__, "--serve", str(self.port), str(tokens)],
                stdout=subprocess.PIPE,
                preexec_fn=lambda cpu=cpu: os.sched_setaffinity(0, {cpu}),
            )
            assert process.stdout is not None
            process.stdout.readline()  # "ready"
            self.processes.append(process)

    def __enter__(self) -> PreRendered:
        return self

    def __exit__(self, *exc: object) -> None:
        for process in self.processes:
            process.terminate()
            process.wait(timeout=10)


# --- clients ---------------------------------------------------------------------------


@dataclass
class Sample:
    responses: int = 0
    seconds: float = 0.0
    ttft_errors_ms: list[float] = field(default_factory=list)
    cpu: float = 0.0  # the client process's CPU time / wall time (1.0: one core busy)

    def events_per_s(self, tokens: int = TOKENS) -> float:
        return self.responses * tokens / self.seconds if self.seconds else 0.0


def _closed_loop(
    streams: int, seconds: float, one: Callable[[Sample], Awaitable[None]], stagger_s: float
) -> Callable[[], Awaitable[Sample]]:
    async def run() -> Sample:
        sample = Sample()
        deadline = time.perf_counter() + seconds

        async def worker(k: int) -> None:
            # Spread first sends over one response time, as on a node in steady state;
            # all streams starting at one instant would measure a burst instead.
            await asyncio.sleep(stagger_s * k / streams)
            while time.perf_counter() < deadline:
                await one(sample)

        start = time.perf_counter()
        await asyncio.gather(*(worker(k) for k in range(streams)))
        sample.seconds = time.perf_counter() - start
        return sample

    return run


def _cfg(url: str) -> EndpointConfig:
    # No continuous usage: the fault server then renders each paced response alike.
    return EndpointConfig(base_url=url, model="bench", continuous_usage=False, timeout_s=600)


async def ours(
    url: str, streams: int, seconds: float, tokens: int = TOKENS, stagger_s: float = 0.0
) -> Sample:
    cfg = _cfg(url)
    spec = RequestSpec(prompt="the city", max_tokens=tokens)
    async with make_http_client(streams) as http:

        async def one(sample: Sample) -> None:
            timing = await stream_request(http, cfg, spec, RequestTiming(i=0, t_send_ns=0))
            if timing.status != "ok":
                raise RuntimeError(f"bench request failed: {timing.status} {timing.error}")
            sample.responses += 1
            if timing.server_first_ns is not None:
                sample.ttft_errors_ms.append((timing.text_ns[0] - timing.server_first_ns) / 1e6)

        return await _closed_loop(streams, seconds, one, stagger_s)()


_BODY = b'{"model":"bench","prompt":"the city","max_tokens":%d,"stream":true}'


async def bare_aiohttp(
    url: str, streams: int, seconds: float, tokens: int = TOKENS, stagger_s: float = 0.0
) -> Sample:
    """Iterates the body's SSE lines with aiohttp and counts `data:` lines; parses nothing:
    the least any aiohttp client does per event."""
    body = _BODY % tokens
    connector = aiohttp.TCPConnector(limit=streams)
    headers = {"Content-Type": "application/json"}
    async with aiohttp.ClientSession(connector=connector) as session:

        async def one(sample: Sample) -> None:
            events = 0
            async with session.post(url + "/v1/completions", data=body, headers=headers) as r:
                async for line in r.content:
                    if line[:6] != b"data: ":
                        continue
                    if not events:
                        stamp = time.perf_counter_ns()
                        match = _STAMP.search(line)
                        if match:
                            sample.ttft_errors_ms.append((stamp - int(match.group(1))) / 1e6)
                    events += 1
            if events < tokens:
                raise RuntimeError("bare aiohttp: short response")
            sample.responses += 1

        return await _closed_loop(streams, seconds, one, stagger_s)()


class _RawStream(asyncio.Protocol):
    """One keep-alive connection that sends a request whenever the last response is whole."""

    def __init__(
        self, request: bytes, sample: Sample, deadline: float, done: asyncio.Future, delay: float
    ) -> None:
        self.request, self.sample, self.deadline, self.done = request, sample, deadline, done
        self.delay = delay
        self.need = -1  # body bytes still to come; -1: headers not seen yet
        self.chunked = False  # the fault server's paced responses: ends at "0\r\n\r\n"
        self.tail = b""
        self.head = b""
        self.first = True

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport
        write = transport.write  # type: ignore[attr-defined]
        asyncio.get_running_loop().call_later(self.delay, write, self.request)

    def data_received(self, data: bytes) -> None:
        if self.need < 0:
            self.head += data
            end = self.head.find(b"\r\n\r\n")
            if end < 0:
                return
            length = re.search(rb"(?i)content-length:\s*(\d+)", self.head[:end])
            self.chunked = length is None
            data = self.head[end + 4 :]
            self.need, self.head = int(length.group(1)) if length else 1, b""
        if self.first and data:
            stamp = time.perf_counter_ns()
            match = _STAMP.search(data)
            if match:
                self.sample.ttft_errors_ms.append((stamp - int(match.group(1))) / 1e6)
            self.first = False
        if self.chunked:
            self.tail = (self.tail + data)[-5:]
            ended = self.tail == b"0\r\n\r\n"
        else:
            self.need -= len(data)
            ended = self.need <= 0
        if ended:
            self.tail = b""
            self.sample.responses += 1
            self.need, self.first = -1, True
            if time.perf_counter() < self.deadline:
                self.transport.write(self.request)  # type: ignore[attr-defined]
            elif not self.done.done():
                self.done.set_result(None)

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.done.done():
            self.done.set_result(None)


async def raw_asyncio(
    url: str, streams: int, seconds: float, tokens: int = TOKENS, stagger_s: float = 0.0
) -> Sample:
    host, port = url.removeprefix("http://").split(":")
    body = _BODY % tokens
    request = (
        b"POST /v1/completions HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n"
        b"Content-Length: %d\r\n\r\n%s" % (host.encode(), len(body), body)
    )
    loop = asyncio.get_running_loop()
    sample = Sample()
    start = time.perf_counter()
    deadline = start + seconds
    finished = [loop.create_future() for _ in range(streams)]
    transports = []
    for k, done in enumerate(finished):
        delay = stagger_s * k / streams
        transport, _ = await loop.create_connection(
            lambda done=done, delay=delay: _RawStream(request, sample, deadline, done, delay),
            host,
            int(port),
        )
        transports.append(transport)
    await asyncio.gather(*finished)
    sample.seconds = time.perf_counter() - start
    for transport in transports:
        transport.close()
    return sample


CLIENTS: dict[str, Callable[..., Awaitable[Sample]]] = {
    "ours": ours,
    "bare aiohttp": bare_aiohttp,
    "raw asyncio": raw_asyncio,
}


# --- memory per open stream ------------------------------------------------------------


def _rss_bytes() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * resource.getpagesize()


async def memory_ours(url: str, streams: int) -> int:
    """RSS growth per stream held open (first event read, then the server stalls)."""
    cfg = _cfg(url)
    spec = RequestSpec(prompt="the city", max_tokens=TOKENS)
    async with make_http_client(streams) as http:
        gc.collect()
        before = _rss_bytes()
        timings = [RequestTiming(i=0, t_send_ns=0) for _ in range(streams)]
        tasks = [asyncio.create_task(stream_request(http, cfg, spec, t)) for t in timings]
        while not all(t.text_ns for t in timings):
            await asyncio.sleep(0.05)
            if any(task.done() for task in tasks):
                raise RuntimeError("a held stream ended early")
        gc.collect()
        grown = _rss_bytes() - before
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    return max(0, grown) // streams


# --- subprocess entry points -----------------------------------------------------------


def _worker_main(
    client: str, url: str, streams: int, seconds: float, tokens: int, stagger_s: float
) -> None:
    cpu0, wall0 = time.process_time(), time.perf_counter()
    sample = asyncio.run(CLIENTS[client](url, streams, seconds, tokens, stagger_s))
    cpu = (time.process_time() - cpu0) / (time.perf_counter() - wall0)
    errors = " ".join(f"{e:.4f}" for e in sample.ttft_errors_ms)
    print(f"{sample.responses} {sample.seconds:.6f} {cpu:.4f} {errors}")


def run_client(
    client: str,
    url: str,
    streams: int,
    seconds: float,
    cpu: int,
    tokens: int = TOKENS,
    stagger_s: float = 0.0,
) -> Sample:
    """One client in a fresh process pinned to `cpu` (no heap or loop state carried over)."""
    command = [sys.executable, __file__, "--worker", client, url, str(streams), str(seconds)]
    done = subprocess.run(
        [*command, str(tokens), str(stagger_s)],
        capture_output=True,
        text=True,
        check=True,
        preexec_fn=lambda: os.sched_setaffinity(0, {cpu}),
    )
    parts = done.stdout.split()
    return Sample(int(parts[0]), float(parts[1]), [float(e) for e in parts[3:]], float(parts[2]))


def run_processes(url: str, streams: int, seconds: float, cpus: list[int]) -> float:
    """Events/s of `ours` in len(cpus) processes at once, streams split between them."""
    per = max(1, streams // len(cpus))
    command = [sys.executable, __file__, "--worker", "ours", url, str(per), str(seconds)]
    processes = [
        subprocess.Popen(
            [*command, str(TOKENS), "0"],
            stdout=subprocess.PIPE,
            text=True,
            preexec_fn=lambda cpu=cpu: os.sched_setaffinity(0, {cpu}),
        )
        for cpu in cpus
    ]
    total = 0.0
    for process in processes:
        out, _ = process.communicate(timeout=seconds * 10 + 60)
        responses, elapsed = out.split()[:2]
        total += int(responses) * TOKENS / float(elapsed)
    return total


def _p(values: list[float], q: float) -> str:
    return f"{np.percentile(values, q):.2f}" if values else "-"


def main() -> None:
    if len(sys.argv) == 4 and sys.argv[1] == "--serve":
        serve(int(sys.argv[2]), int(sys.argv[3]))
        return
    if len(sys.argv) == 8 and sys.argv[1] == "--worker":
        client, url, streams, seconds, tokens, stagger = sys.argv[2:]
        _worker_main(client, url, int(streams), float(seconds), int(tokens), float(stagger))
        return
    if len(sys.argv) == 4 and sys.argv[1] == "--memory":
        print(asyncio.run(memory_ours(sys.argv[3], int(sys.argv[2]))))
        return
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--streams", default="1,64,512")
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--rounds", type=int, default=3, help="interleaved repeats per level")
    parser.add_argument("--paced-streams", type=int, default=512)
    parser.add_argument("--paced-tok-s", type=float, default=30.0)
    parser.add_argument("--memory-streams", type=int, default=512)
    parser.add_argument("--max-processes", type=int, default=0, help="0: the cores allow")
    args = parser.parse_args()
    cpus = sorted(os.sched_getaffinity(0))
    # A quarter of the cores (at least one) serve; the rest are client cores.
    n_server = max(1, len(cpus) // 4) if len(cpus) > 2 else 1
    server_cpus, client_cpus = cpus[-n_server:], cpus[:-n_server] or cpus[:1]
    if args.max_processes:
        client_cpus = client_cpus[: args.max_processes]
    print(
        f"{len(cpus)} CPUs: clients on {client_cpus}, pre-rendered server on {server_cpus}; "
        f"{TOKENS} events per response, {args.seconds:g} s per measurement"
    )
    with PreRendered(server_cpus) as server:
        print("\n-- one client process (one core): events/s and TTFT error at saturation")
        print(
            f"{'streams':>7} {'client':<13} {'events/s':>10} {'ours/this (range)':>21} "
            f"{'TTFT err p50':>12} {'p99 ms':>8}"
        )
        for streams in [int(s) for s in args.streams.split(",")]:
            # Rounds interleave the clients, so a neighbour's load on a shared machine hits
            # them alike; medians over rounds are printed, ratios are per-round medians.
            rounds: dict[str, list[Sample]] = {name: [] for name in CLIENTS}
            for _ in range(args.rounds):
                for name in CLIENTS:
                    sample = run_client(name, server.url, streams, args.seconds, client_cpus[0])
                    rounds[name].append(sample)
            for name, samples in rounds.items():
                rates = [x.events_per_s() for x in samples]
                ratios = [o.events_per_s() / r for o, r in zip(rounds["ours"], rates, strict=True)]
                errors = [e for x in samples for e in x.ttft_errors_ms]
                print(
                    f"{streams:>7} {name:<13} {np.median(rates):>10.0f} "
                    f"{np.median(ratios):>9.2f} ({min(ratios):.2f}-{max(ratios):.2f}) "
                    f"{_p(errors, 50):>12} {_p(errors, 99):>8}",
                    flush=True,
                )
        counts = sorted({1, 2, 4, 8, 16, len(client_cpus)} & set(range(1, len(client_cpus) + 1)))
        print("\n-- ours in N processes, one core each (512 streams split between them)")
        print(f"{'processes':>9} {'events/s':>10} {'vs 1 process':>12}")
        single = None
        for n in counts:
            rate = run_processes(server.url, 512, args.seconds, client_cpus[:n])
            single = single or rate
            print(f"{n:>9} {rate:>10.0f} {rate / single:>11.2f}x", flush=True)

    itl_ms = 1000.0 / args.paced_tok_s
    print(
        f"\n-- TTFT error at a paced rate: {args.paced_streams} streams x "
        f"{args.paced_tok_s:g} tok/s (fault server, {itl_ms:.1f} ms/token, 32 tokens, "
        "first sends spread over one response time)"
    )
    with fault_server("--itl-ms", f"{itl_ms}", cpu=server_cpus[0]) as paced:
        for name in CLIENTS:
            sample = run_client(
                name,
                paced,
                args.paced_streams,
                args.seconds * 2,
                client_cpus[0],
                tokens=32,
                stagger_s=32 * itl_ms / 1000,
            )
            errors = sample.ttft_errors_ms
            print(
                f"{name:<13} TTFT err p50 {_p(errors, 50)} ms  p99 {_p(errors, 99)} ms  "
                f"client CPU {sample.cpu:.0%} of a core"
            )
    with fault_server("--mode", "stall", cpu=server_cpus[0]) as stall:
        done = subprocess.run(
            [sys.executable, __file__, "--memory", str(args.memory_streams), stall],
            capture_output=True,
            text=True,
            check=True,
            preexec_fn=lambda: os.sched_setaffinity(0, {client_cpus[0]}),
        )
        per_stream = int(done.stdout.strip().splitlines()[-1])
    print(f"\n-- memory: ours {per_stream / 1024:.1f} KiB per open stream ({args.memory_streams})")


if __name__ == "__main__":
    main()
