"""How a level's requests go out: by workers in this process (drain, capped) or split over
client processes that start at one instant (drive_share in each, run_shares over them).

The request runner (runner.py), sessions and trace replay all send through these; what an
item is (a request, a session, a trace line) is the caller's `send`.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import time
from collections.abc import Awaitable, Callable, Coroutine, Iterable
from concurrent.futures import ProcessPoolExecutor
from time import perf_counter_ns
from typing import Any, Protocol

from workers.loadgen.client import EndpointConfig, make_http_client
from workers.loadgen.client_load import (
    ClientLimits,
    ClientMonitor,
    client_bound,
    merge_client_loads,
)
from workers.loadgen.metrics import NS_PER_S, RequestTiming
from workers.results import ClientLoad


async def drain[T](items: Iterable[T], width: int, each: Callable[[T], Awaitable[None]]) -> None:
    """`width` workers sharing one pass over `items`: each worker runs `each` on the next
    item as soon as its previous one ends."""
    queue = iter(items)

    async def worker() -> None:
        for item in queue:
            await each(item)

    await asyncio.gather(*(worker() for _ in range(width)))


def capped[**P, R](
    call: Callable[P, Coroutine[Any, Any, R]], cap: int | None
) -> Callable[P, Coroutine[Any, Any, R]]:
    """`call`, with at most `cap` calls in flight at once (no cap: `call` as it is)."""
    if not cap:
        return call
    slots = asyncio.Semaphore(cap)

    async def limited(*args: P.args, **kwargs: P.kwargs) -> R:
        async with slots:
            return await call(*args, **kwargs)

    return limited


async def wait_for_start(start_ns: int) -> int:
    """Sleep until start_ns (perf_counter_ns); how late this process woke, in ns."""
    delay = (start_ns - perf_counter_ns()) / NS_PER_S
    if delay > 0:
        await asyncio.sleep(delay)
    return perf_counter_ns() - start_ns


class _ShareLike(Protocol):
    """What a client process needs of its share (a Share of requests or one of sessions)."""

    cfg: EndpointConfig
    offsets_ns: list[int] | None
    concurrency: int
    limits: ClientLimits
    start_ns: int


async def drive_share(
    share: _ShareLike, count: int, send: Callable[[Any, int, int | None], Awaitable[None]]
) -> tuple[ClientLoad, int]:
    """In a client process: wait for the common start, then `send(http, k, t_sched)` each of
    the share's `count` items under a client monitor: (its client load, how late it started
    in ns)."""
    skew = await wait_for_start(share.start_ns)
    async with make_http_client(share.concurrency, share.cfg.transport) as http:

        async def one(k: int, t_sched: int | None) -> None:
            await send(http, k, t_sched)

        async with ClientMonitor(share.limits) as monitor:
            await send_share(
                one,
                count,
                concurrency=share.concurrency,
                start_ns=share.start_ns,
                offsets_ns=share.offsets_ns,
            )
    return monitor.result(), skew


async def send_share(
    send: Callable[[int, int | None], Coroutine[Any, Any, None]],
    count: int,
    *,
    concurrency: int,
    start_ns: int,
    offsets_ns: list[int] | None,
) -> None:
    """One client process's share of a level: `send(k, t_sched)` for each of its `count`
    items, by `concurrency` workers (closed loop) or at start_ns + its offsets (open loop,
    at most `concurrency` in flight when that is set)."""
    if offsets_ns is None:

        async def closed(k: int) -> None:
            await send(k, None)

        await drain(range(count), max(1, concurrency), closed)
        return
    one = capped(send, concurrency)
    tasks: list[asyncio.Task[None]] = []
    for k, offset in enumerate(offsets_ns):
        t_sched = start_ns + offset
        wait = (t_sched - perf_counter_ns()) / NS_PER_S
        if wait > 0:
            await asyncio.sleep(wait)
        tasks.append(asyncio.create_task(one(k, t_sched)))
    await asyncio.gather(*tasks)


# Client processes start this long after their level is handed out, all at one instant.
START_MARGIN_S = 0.5


# A level run in client processes: (timings, merged client load, client-bound, start skew ns).
InProcesses = tuple[list[RequestTiming], ClientLoad, bool, int]


def run_shares[S: _ShareLike](
    pool: ProcessPoolExecutor,
    run: Callable[[S], tuple[list[RequestTiming], ClientLoad, int]],
    shares: list[S],
) -> InProcesses:
    """Run a level's shares in the client processes, all starting at one instant a start
    margin from now: (timings by index, their merged client load, whether any process was
    client-bound, the latest start in ns)."""
    start = perf_counter_ns() + int(START_MARGIN_S * NS_PER_S)
    for share in shares:
        share.start_ns = start
    results = list(pool.map(run, shares))
    timings = sorted((t for r in results for t in r[0]), key=lambda t: t.i)
    loads = [r[1] for r in results]
    bound = any(client_bound(load) for load in loads)
    return timings, merge_client_loads(loads), bound, max(r[2] for r in results)


def start_pool(processes: int) -> ProcessPoolExecutor:
    """Client processes, started and importing before the first level, so that a level's
    start margin covers only the hand-over."""
    pool = ProcessPoolExecutor(processes, mp_context=multiprocessing.get_context("spawn"))
    list(pool.map(time.sleep, [0.2] * processes))
    return pool
