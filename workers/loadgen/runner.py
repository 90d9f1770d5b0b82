"""Load shapes: closed-loop concurrency sweeps and open-loop arrivals.

Closed loop: C workers, each sending its next request as soon as its previous one ends.
Open loop: requests are scheduled on a Poisson (or gamma-burst) clock whatever the server
does; each keeps its planned send time t_sched so that latency from t_sched is reported
(no coordinated omission). Warm-up requests run before the measured ones and are kept in
the per-request records but left out of every aggregate. The result document is output.py.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from time import perf_counter_ns
from typing import Any, Literal, Protocol

import numpy as np

from workers.loadgen.client import (
    EndpointConfig,
    RequestSpec,
    TokenCounter,
    make_http_client,
    stream_request,
)
from workers.loadgen.client_load import (
    ClientLimits,
    ClientMonitor,
    client_bound,
)
from workers.loadgen.metrics import (
    NS_PER_MS,
    NS_PER_S,
    RequestTiming,
    build_point,
    saturation_reason,
)
from workers.loadgen.shares import (
    InProcesses,
    capped,
    drain,
    drive_share,
    run_shares,
    start_pool,
)
from workers.result_facts import Slo
from workers.results import ClientLoad, Point


class Workload(Protocol):
    def warmup_specs(self, width: int) -> list[RequestSpec]:
        """Requests to send before a level of `width` concurrent requests (e.g. the shared
        prefixes, once per server slot they may land on)."""
        ...

    def spec(self, k: int) -> RequestSpec:
        """The k-th request of the run; k is unique across levels so prompts never repeat."""
        ...


@dataclass(slots=True)
class Level:
    concurrency: int | None = None
    rate: float | None = None
    name: str | None = None  # a level neither count nor rate describes (a trace replay)

    @property
    def label(self) -> str:
        if self.name is not None:
            return self.name
        return f"c={self.concurrency}" if self.rate is None else f"rate={self.rate:g}/s"


@dataclass(slots=True)
class LoadPlan:
    levels: list[Level]
    requests: int | None = None
    duration_s: float | None = None
    warmup: int = 0
    arrival: Literal["poisson", "gamma"] = "poisson"
    burstiness: float = 1.0  # gamma shape: 1 is Poisson, below 1 is burstier
    max_concurrency: int | None = None  # open loop: at most this many in flight
    slo: Slo | None = None
    early_stop: bool = True
    seed: int = 0
    client_limits: ClientLimits = field(default_factory=ClientLimits)
    processes: int = 1  # client processes sharing each level (request-bound plans only)

    def __post_init__(self) -> None:
        if self.requests is None and self.duration_s is None:
            raise ValueError("a load plan needs a request count or a duration")
        if self.processes > 1 and self.requests is None:
            raise ValueError("several client processes need a request count, not a duration")

    def prompts_to_verify(self) -> int:
        """How many prompts the verification pass counts before anything is measured: all
        of a request-bound run's (the measured requests then reuse them), the first ones of
        a duration-bound run (the server's usage checks the rest)."""
        if self.requests is not None:
            return len(self.levels) * (self.requests + self.warmup)
        return DURATION_CHECK_PROMPTS


DURATION_CHECK_PROMPTS = 64


@dataclass(slots=True)
class LevelProgress:
    label: str
    total: int | None
    duration_s: float | None
    started_ns: int
    done: int = 0
    errors: int = 0
    output_tokens: int = 0
    warmup: bool = False


ProgressCallback = Callable[[LevelProgress], None]


@dataclass
class SweepResult:
    points: list[Point] = field(default_factory=list)
    timings: list[list[RequestTiming]] = field(default_factory=list)
    levels: list[Level] = field(default_factory=list)
    stop_reason: str | None = None
    # Several client processes: how late the last of them started, per level.
    start_skew_ms: list[float] = field(default_factory=list)

    def add_level(
        self, level: Level, point: Point, timings: list[RequestTiming], plan: LoadPlan
    ) -> bool:
        """Keeps a finished level; True when the sweep stops early here (the reason kept)."""
        previous = self.points[-1] if self.points else None
        self.points.append(point)
        self.timings.append(timings)
        self.levels.append(level)
        if not plan.early_stop or level is plan.levels[-1]:
            return False
        reason = saturation_reason(point, previous, plan.slo)
        if reason is not None:
            self.stop_reason = f"stopped after {level.label}: {reason}"
        return reason is not None


def level_point(timings: list[RequestTiming], level: Level, plan: LoadPlan) -> Point:
    """A finished level's measured point."""
    return build_point(
        timings,
        concurrency=level.concurrency,
        request_rate=level.rate,
        label=level.label,
        slo=plan.slo,
    )


def powers_of_two(limit: int) -> list[int]:
    return [2**k for k in range(limit.bit_length()) if 2**k <= limit]


def parse_concurrency(text: str) -> list[int]:
    """'1,4,16' or 'pow2:64' (1, 2, 4, ..., 64)."""
    text = text.strip()
    if text.startswith("pow2:"):
        values = powers_of_two(int(text[5:]))
    else:
        values = [int(part) for part in text.split(",") if part.strip()]
    if not values or any(v < 1 for v in values):
        raise ValueError(f"concurrency must be positive integers, got {text!r}")
    return values


class _Runner:
    def __init__(
        self,
        cfg: EndpointConfig,
        workload: Workload,
        plan: LoadPlan,
        progress: ProgressCallback | None,
        count_tokens: TokenCounter | None,
    ) -> None:
        self.cfg = cfg
        self.workload = workload
        self.plan = plan
        self.progress = progress
        self.count_tokens = count_tokens
        self.next_spec = itertools.count()
        self.client_load: ClientLoad | None = None  # of the level last run

    def _report(self, state: LevelProgress, timing: RequestTiming) -> None:
        state.done += 1
        state.errors += timing.status != "ok"
        state.output_tokens += timing.n_out or 0
        if self.progress is not None:
            self.progress(state)

    async def _send(self, http: Any, i: int, t_sched: int | None, warmup: bool) -> RequestTiming:
        spec = self.workload.spec(next(self.next_spec))
        timing = RequestTiming(i=i, t_send_ns=0, t_sched_ns=t_sched, warmup=warmup)
        return await stream_request(http, self.cfg, spec, timing, self.count_tokens)

    async def _warmup(self, http: Any, level: Level, label: str) -> list[RequestTiming]:
        width = level.concurrency or self.plan.max_concurrency or 1
        specs = list(self.workload.warmup_specs(width))
        specs += [self.workload.spec(next(self.next_spec)) for _ in range(self.plan.warmup)]
        if not specs:
            return []
        state = LevelProgress(label, len(specs), None, perf_counter_ns(), warmup=True)
        width = max(1, min(width, len(specs)))
        timings: list[RequestTiming] = []

        async def one(item: tuple[int, RequestSpec]) -> None:
            i, spec = item
            timing = RequestTiming(i=i, t_send_ns=0, warmup=True)
            await stream_request(http, self.cfg, spec, timing, self.count_tokens)
            timings.append(timing)
            self._report(state, timing)

        await drain(enumerate(specs), width, one)
        # Warm-up indices come after the measured ones so records keep unique indices.
        for timing in timings:
            timing.i += 1_000_000_000
        return timings

    def pool_size(self, level: Level) -> int:
        """The HTTP connection pool a level needs: its concurrency, closed loop; open loop,
        its cap, or an unlimited pool (0) without one, so requests never queue inside it."""
        return (level.concurrency or 1) if level.rate is None else (self.plan.max_concurrency or 0)

    async def run_level(self, level: Level) -> list[RequestTiming]:
        plan = self.plan
        async with make_http_client(self.pool_size(level), self.cfg.transport) as http:
            timings = await self._warmup(http, level, level.label)
            state = LevelProgress(level.label, plan.requests, plan.duration_s, perf_counter_ns())
            # Over the measured requests only: warm-up load says nothing about the level.
            async with ClientMonitor(plan.client_limits) as monitor:
                if level.rate is None:
                    measured = await self._closed(http, level.concurrency or 1, state)
                else:
                    measured = await self._open(http, level.rate, state)
        self.client_load = monitor.result()
        return timings + sorted(measured, key=lambda t: t.i)

    async def warm(self, level: Level) -> list[RequestTiming]:
        """The level's warm-up alone, in this process (before client processes start)."""
        async with make_http_client(self.pool_size(level), self.cfg.transport) as http:
            return await self._warmup(http, level, level.label)

    def shares(self, level: Level, processes: int) -> list[Share]:
        """One level split over client processes from one plan: the k-th request keeps its
        prompt and, open loop, its planned send time, whichever process sends it."""
        plan = self.plan
        requests = plan.requests or 0
        specs = [self.workload.spec(next(self.next_spec)) for _ in range(requests)]
        times = self.planned_offsets(level, requests)
        shares = []
        for p in range(processes):
            mine = range(p, requests, processes)
            shares.append(
                Share(
                    cfg=self.cfg,
                    indices=list(mine),
                    specs=[specs[i] for i in mine],
                    offsets_ns=[times[i] for i in mine] if times else None,
                    concurrency=self.process_concurrency(level, p, processes),
                    limits=plan.client_limits,
                    count_tokens=self.count_tokens,
                )
            )
        return [share for share in shares if share.indices]

    def planned_offsets(self, level: Level, count: int) -> list[int]:
        """Open loop: the first `count` planned sends, in ns from the level's start, on the
        plan's arrival clock; closed loop: none."""
        offsets: list[int] = []
        if level.rate is not None:
            gaps = self._gaps_s(level.rate)
            t = 0
            for _ in range(count):
                offsets.append(t)
                t += int(next(gaps) * NS_PER_S)
        return offsets

    def process_concurrency(self, level: Level, p: int, processes: int) -> int:
        """Client process p's part of a level: closed loop, its workers (the concurrency
        dealt out as evenly as it goes); open loop, its share of the cap (0: none)."""
        if level.rate is None:
            width = level.concurrency or 1
            return width // processes + (p < width % processes)
        cap = self.plan.max_concurrency
        return max(1, cap // processes) if cap else 0

    def _deadline(self, start_ns: int) -> int | None:
        if self.plan.duration_s is None:
            return None
        return start_ns + int(self.plan.duration_s * NS_PER_S)

    async def closed_loop(
        self, concurrency: int, started_ns: int, one: Callable[[int], Awaitable[None]]
    ) -> None:
        """Closed loop: `concurrency` workers, each starting `one(i)` for the next index as
        soon as its previous one ends, until the plan's count or duration is spent."""
        deadline = self._deadline(started_ns)

        def indices() -> Iterator[int]:
            for i in itertools.count():
                if self.plan.requests is not None and i >= self.plan.requests:
                    return
                if deadline is not None and perf_counter_ns() >= deadline:
                    return
                yield i

        await drain(indices(), concurrency, one)

    async def _closed(
        self, http: Any, concurrency: int, state: LevelProgress
    ) -> list[RequestTiming]:
        timings: list[RequestTiming] = []

        async def one(i: int) -> None:
            timing = await self._send(http, i, None, False)
            timings.append(timing)
            self._report(state, timing)

        await self.closed_loop(concurrency, state.started_ns, one)
        return timings

    def _gaps_s(self, rate: float) -> Iterator[float]:
        rng = np.random.default_rng(self.plan.seed)
        shape = self.plan.burstiness if self.plan.arrival == "gamma" else 1.0
        while True:
            # Gamma with shape k and scale 1/(rate k) has mean 1/rate; k = 1 is exponential.
            for gap in rng.gamma(shape, 1.0 / (rate * shape), size=1024):
                yield float(gap)

    async def _open(self, http: Any, rate: float, state: LevelProgress) -> list[RequestTiming]:
        timings: list[RequestTiming] = []

        async def one(i: int, t_sched: int) -> None:
            timing = await self._send(http, i, t_sched, False)
            timings.append(timing)
            self._report(state, timing)

        await self.arrivals(rate, capped(one, self.plan.max_concurrency))
        return timings

    async def arrivals(
        self, rate: float, one: Callable[[int, int], Coroutine[Any, Any, None]]
    ) -> None:
        """Open loop: start `one(i, t_sched)` at each planned arrival, never waiting for
        earlier ones (no coordinated omission), until the plan's count or duration is spent;
        then wait for every started one."""
        tasks: list[asyncio.Task[None]] = []
        start = perf_counter_ns()
        deadline = self._deadline(start)
        t_sched = start
        gaps = self._gaps_s(rate)
        try:
            for i in itertools.count():
                if self.plan.requests is not None and i >= self.plan.requests:
                    break
                if deadline is not None and t_sched >= deadline:
                    break
                delay = (t_sched - perf_counter_ns()) / NS_PER_S
                if delay > 0:
                    await asyncio.sleep(delay)
                tasks.append(asyncio.create_task(one(i, t_sched)))
                t_sched += int(next(gaps) * NS_PER_S)
            await asyncio.gather(*tasks)
        finally:
            for task in tasks:
                task.cancel()


@dataclass
class Share:
    """What one client process sends at one level."""

    cfg: EndpointConfig
    indices: list[int]
    specs: list[RequestSpec]
    offsets_ns: list[int] | None  # open loop: planned sends from the common start
    concurrency: int  # closed loop: its workers; open loop: its cap (0: none)
    limits: ClientLimits
    count_tokens: TokenCounter | None = None
    start_ns: int = 0  # perf_counter_ns (CLOCK_MONOTONIC: one clock for the whole host)


def run_share(share: Share) -> tuple[list[RequestTiming], ClientLoad, int]:
    """Run in a client process: (timings, its client load, how late it started in ns)."""
    return asyncio.run(run_share_async(share))


async def run_share_async(share: Share) -> tuple[list[RequestTiming], ClientLoad, int]:
    timings: list[RequestTiming] = []

    async def send(http: Any, k: int, t_sched: int | None) -> None:
        timing = RequestTiming(i=share.indices[k], t_send_ns=0, t_sched_ns=t_sched)
        await stream_request(http, share.cfg, share.specs[k], timing, share.count_tokens)
        timings.append(timing)

    load, skew = await drive_share(share, len(share.specs), send)
    return timings, load, skew


def _run_level_in_processes(
    runner: _Runner, level: Level, pool: ProcessPoolExecutor, processes: int
) -> InProcesses:
    warm = asyncio.run(runner.warm(level))
    timings, load, bound, skew = run_shares(pool, run_share, runner.shares(level, processes))
    timings = warm + timings
    if runner.progress is not None:
        # Client processes report nothing while they run: the level, once done.
        measured = [t for t in timings if not t.warmup]
        state = LevelProgress(level.label, runner.plan.requests, None, perf_counter_ns())
        state.done = len(measured)
        state.errors = sum(not t.ok for t in measured)
        state.output_tokens = sum(t.n_out or 0 for t in measured)
        runner.progress(state)
    return timings, load, bound, skew


async def run_sweep(
    cfg: EndpointConfig,
    workload: Workload,
    plan: LoadPlan,
    *,
    result: SweepResult | None = None,
    progress: ProgressCallback | None = None,
    count_tokens: TokenCounter | None = None,
) -> SweepResult:
    """Run every level in order, appending each finished one to `result` as it ends, so a
    caller interrupted mid-sweep still holds the finished levels."""
    result = result if result is not None else SweepResult()
    runner = _Runner(cfg, workload, plan, progress, count_tokens)

    def in_processes(level: Level, pool: ProcessPoolExecutor) -> InProcesses:
        return _run_level_in_processes(runner, level, pool, plan.processes)

    return await sweep_levels(runner, result, in_processes)


class _LevelRunner(Protocol):
    plan: LoadPlan
    client_load: ClientLoad | None

    async def run_level(self, level: Level) -> list[RequestTiming]: ...


async def sweep_levels(
    runner: _LevelRunner,
    result: SweepResult,
    in_processes: Callable[[Level, ProcessPoolExecutor], InProcesses],
    describe: Callable[[list[RequestTiming], Point], None] | None = None,
) -> SweepResult:
    """The plan's levels in order, in this process or (--processes) by `in_processes`,
    each finished one appended to `result` until the stop rules end the sweep; `describe`
    adds what a kind of run reports beyond the point (a session run's per-turn figures)."""
    plan = runner.plan
    if plan.processes > 1:
        # Client processes block this thread while they run; the caller's loop waits.
        return await asyncio.to_thread(_sweep_in_processes, plan, result, in_processes, describe)
    for level in plan.levels:
        timings = await runner.run_level(level)
        point = level_point(timings, level, plan)
        if describe is not None:
            describe(timings, point)
        if runner.client_load is not None:
            point.client = runner.client_load
            point.client_bound = client_bound(runner.client_load)
        if result.add_level(level, point, timings, plan):
            break
    return result


def _sweep_in_processes(
    plan: LoadPlan,
    result: SweepResult,
    in_processes: Callable[[Level, ProcessPoolExecutor], InProcesses],
    describe: Callable[[list[RequestTiming], Point], None] | None,
) -> SweepResult:
    with start_pool(plan.processes) as pool:
        for level in plan.levels:
            timings, load, bound, skew_ns = in_processes(level, pool)
            point = level_point(timings, level, plan)
            if describe is not None:
                describe(timings, point)
            point.client, point.client_bound = load, bound
            result.start_skew_ms.append(skew_ns / NS_PER_MS)
            if result.add_level(level, point, timings, plan):
                break
    return result
