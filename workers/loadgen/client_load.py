"""How busy the load generator itself was: its CPU and event-loop lag per level, and whether a
level was client-bound (its timestamps then carry the client's own delay).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from time import perf_counter_ns

import numpy as np

from workers.loadgen.metrics import NS_PER_MS, NS_PER_S
from workers.results import ClientLoad


@dataclass(slots=True, frozen=True)
class ClientLimits:
    """When the client itself is the bottleneck: its process busy at or above `cpu` of one
    core, or its event loop running timers `loop_lag_ms` late or more (p99). Either way its
    timestamps carry its own queueing, so the level cannot stand for the server."""

    cpu: float = 0.9
    # Above a shared host's scheduling noise (10-20 ms seen on a busy 2-core machine); a
    # saturated loop runs late by hundreds of ms.
    loop_lag_ms: float = 50.0


LAG_PROBE_S = 0.005  # how often the loop-lag probe asks to run


class ClientMonitor:
    """Measures the client process over one level: CPU utilisation and event-loop lag.

    Lag is how late a timer set for LAG_PROBE_S from now actually ran: every callback that
    holds the loop (parsing, stamping, scheduling) delays it, as it delays reading the
    streams.
    """

    def __init__(self, limits: ClientLimits) -> None:
        self.limits = limits
        self.lags_ns: list[int] = []
        self._task: asyncio.Task[None] | None = None
        self._cpu0 = self._cpu1 = 0.0
        self._wall0 = self._wall1 = 0

    async def __aenter__(self) -> ClientMonitor:
        self._cpu0 = time.process_time()
        self._wall0 = perf_counter_ns()
        self._task = asyncio.create_task(self._probe())
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._cpu1 = time.process_time()
        self._wall1 = perf_counter_ns()
        if self._task is not None:
            self._task.cancel()
            # gather, not a suppressed await: a cancellation of the level itself (Ctrl-C)
            # arriving now must still propagate.
            await asyncio.gather(self._task, return_exceptions=True)

    async def _probe(self) -> None:
        interval_ns = int(LAG_PROBE_S * NS_PER_S)
        while True:
            before = perf_counter_ns()
            await asyncio.sleep(LAG_PROBE_S)
            self.lags_ns.append(max(0, perf_counter_ns() - before - interval_ns))

    def result(self) -> ClientLoad:
        wall_s = max(1e-9, (self._wall1 - self._wall0) / NS_PER_S)
        lags = np.asarray(self.lags_ns, dtype=np.float64) / NS_PER_MS
        return ClientLoad(
            cpu_utilization=(self._cpu1 - self._cpu0) / wall_s,
            loop_lag_p99_ms=float(np.percentile(lags, 99)) if lags.size else None,
            loop_lag_max_ms=float(lags.max()) if lags.size else None,
            cpu_threshold=self.limits.cpu,
            loop_lag_threshold_ms=self.limits.loop_lag_ms,
        )


def client_bound(load: ClientLoad) -> bool:
    """The level's client was saturated, by its own measurements and thresholds."""
    cpu_limit, lag_limit = load.cpu_threshold, load.loop_lag_threshold_ms
    busy = cpu_limit is not None and load.cpu_utilization >= cpu_limit
    lagging = (
        lag_limit is not None
        and load.loop_lag_p99_ms is not None
        and load.loop_lag_p99_ms >= lag_limit
    )
    return busy or lagging


def merge_client_loads(loads: list[ClientLoad]) -> ClientLoad:
    """Client processes together: mean CPU per process, the worst loop lag."""
    lags = [load.loop_lag_p99_ms for load in loads if load.loop_lag_p99_ms is not None]
    maxima = [load.loop_lag_max_ms for load in loads if load.loop_lag_max_ms is not None]
    return ClientLoad(
        cpu_utilization=sum(load.cpu_utilization for load in loads) / len(loads),
        loop_lag_p99_ms=max(lags) if lags else None,
        loop_lag_max_ms=max(maxima) if maxima else None,
        cpu_threshold=loads[0].cpu_threshold,
        loop_lag_threshold_ms=loads[0].loop_lag_threshold_ms,
        processes=len(loads),
    )
