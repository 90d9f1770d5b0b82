"""Multi-turn sessions: conversations whose turns depend on earlier ones.

Turn t's prompt is the whole conversation so far (every earlier message and the server's
own answers, as text) plus one new user or tool message; it is sent only once the previous
answer has arrived, after an optional think time. A server with a prefix cache then finds
the earlier turns cached, so the hit rate rises with the turn index while the context
grows. Sessions, not requests, are what a level's concurrency and arrival rate count.
"""

from __future__ import annotations

import asyncio
import itertools
import random
from collections import defaultdict
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from time import perf_counter_ns
from typing import Any

from workers.loadgen.client import EndpointConfig, RequestSpec, make_http_client, stream_request
from workers.loadgen.client_load import (
    ClientLimits,
    ClientMonitor,
)
from workers.loadgen.metrics import NS_PER_S, RequestTiming, distribution
from workers.loadgen.prompts import PromptBuilder, code_words
from workers.loadgen.runner import (
    Level,
    LevelProgress,
    LoadPlan,
    ProgressCallback,
    SweepResult,
    _Runner,
    sweep_levels,
)
from workers.loadgen.session_shapes import (  # noqa: F401 - re-exported for callers
    SESSION_PRESETS,
    mean_context_tokens,
    session_dataset,
)
from workers.loadgen.shares import InProcesses, capped, drain, drive_share, run_shares
from workers.result_facts import SessionScenario
from workers.results import ClientLoad, Point, SessionStats, TurnStats

_SESSION_KEY = 10**6  # seeds message text apart from a key's turn index


class SessionWorkload:
    """Message texts of exact token lengths, the same for the same seed and session key."""

    def __init__(self, builder: PromptBuilder, shape: SessionScenario, *, seed: int = 0) -> None:
        self.builder = builder
        self.shape = shape
        self.seed = seed
        rng = random.Random(f"{seed}:session-system")
        self.system = (
            builder.fit(shape.system_tokens, rng, lead=code_words(0)) if shape.system_tokens else ""
        )

    def message(self, key: int, turn: int) -> str:
        rng = random.Random(f"{self.seed}:session:{key}:{turn}")
        n = self.shape.first_tokens if turn == 0 else self.shape.turn_tokens
        # The session's own code leads its first message, so sessions diverge right after
        # the shared system prompt.
        return self.builder.fit(n, rng, lead=code_words(key * _SESSION_KEY + turn + 1))


@dataclass(slots=True)
class Conversation:
    """One session's history; `spec` is the next turn's request."""

    workload: SessionWorkload
    cfg: EndpointConfig
    key: int
    prompt: str = ""
    messages: list[dict[str, str]] | None = None

    def spec(self, turn: int) -> RequestSpec:
        message = self.workload.message(self.key, turn)
        max_tokens = self.workload.shape.output_tokens
        if self.cfg.api == "chat":
            if self.messages is None:
                system = self.workload.system
                self.messages = [{"role": "system", "content": system}] if system else []
            self.messages.append({"role": "user", "content": message})
            return RequestSpec(prompt=message, max_tokens=max_tokens, messages=list(self.messages))
        if turn == 0:
            system = self.workload.system
            self.prompt = f"{system}\n{message}" if system else message
        else:
            self.prompt = f"{self.prompt}\n{message}"
        return RequestSpec(prompt=self.prompt, max_tokens=max_tokens)

    def answered(self, text: str) -> None:
        if self.messages is not None:
            self.messages.append({"role": "assistant", "content": text})
        else:
            self.prompt += text


class _SessionRunner:
    def __init__(
        self,
        cfg: EndpointConfig,
        workload: SessionWorkload,
        plan: LoadPlan,
        progress: ProgressCallback | None,
    ) -> None:
        self.cfg = cfg
        self.workload = workload
        self.plan = plan
        # The request runner's arrival clock and progress reporting, shared; it never draws
        # a prompt from the session workload (not a prompt Workload), so the type differs.
        self.base = _Runner(cfg, workload, plan, progress, None)  # type: ignore[arg-type]
        self.keys = itertools.count()  # unique across levels: no session is ever repeated
        self.client_load: ClientLoad | None = None

    async def session(
        self,
        http: Any,
        index: int,
        requests: itertools.count[int],
        state: LevelProgress,
        t_sched: int | None = None,
        warmup: bool = False,
        key: int | None = None,
    ) -> list[RequestTiming]:
        key = next(self.keys) if key is None else key
        conversation = Conversation(self.workload, self.cfg, key)
        shape = self.workload.shape
        timings: list[RequestTiming] = []
        for turn in range(shape.turns):
            if turn and shape.think_time_s:
                await asyncio.sleep(shape.think_time_s)
            timing = RequestTiming(
                i=next(requests),
                t_send_ns=0,
                # Open loop plans a session's start; later turns wait on their answers.
                t_sched_ns=t_sched if turn == 0 else None,
                warmup=warmup,
                session=index,
                turn=turn,
            )
            await stream_request(http, self.cfg, conversation.spec(turn), timing, keep_text=True)
            answer, timing.text = timing.text or "", None  # the answer lives in the history
            timings.append(timing)
            self.base._report(state, timing)
            if not timing.ok:
                break  # the conversation cannot go on without its answer
            conversation.answered(answer)
        return timings

    async def run_level(self, level: Level) -> list[RequestTiming]:
        plan = self.plan
        requests = itertools.count()
        async with make_http_client(self.base.pool_size(level), self.cfg.transport) as http:
            warm = await self._warmup(http, level)
            total = plan.requests * self.workload.shape.turns if plan.requests else None
            state = LevelProgress(level.label, total, plan.duration_s, perf_counter_ns())
            async with ClientMonitor(plan.client_limits) as monitor:
                if level.rate is None:
                    measured = await self._closed(http, level.concurrency or 1, requests, state)
                else:
                    measured = await self._open(http, level.rate, requests, state)
        self.client_load = monitor.result()
        return warm + sorted(measured, key=lambda t: t.i)

    async def _warmup(self, http: Any, level: Level) -> list[RequestTiming]:
        """Whole warm-up sessions (the shared system prompt reaches the cache), excluded."""
        if not self.plan.warmup:
            return []
        state = LevelProgress(level.label, None, None, perf_counter_ns(), warmup=True)
        requests = itertools.count(1_000_000_000)  # after the measured indices
        width = max(1, min(level.concurrency or self.plan.max_concurrency or 1, self.plan.warmup))
        timings: list[RequestTiming] = []

        async def one(s: int) -> None:
            timings.extend(await self.session(http, s, requests, state, warmup=True))

        await drain(range(self.plan.warmup), width, one)
        return timings

    async def _closed(
        self, http: Any, concurrency: int, requests: itertools.count[int], state: LevelProgress
    ) -> list[RequestTiming]:
        timings: list[RequestTiming] = []

        async def one(s: int) -> None:
            timings.extend(await self.session(http, s, requests, state))

        await self.base.closed_loop(concurrency, state.started_ns, one)
        return timings

    async def _open(
        self, http: Any, rate: float, requests: itertools.count[int], state: LevelProgress
    ) -> list[RequestTiming]:
        timings: list[RequestTiming] = []

        async def one(s: int, t_sched: int) -> None:
            timings.extend(await self.session(http, s, requests, state, t_sched))

        await self.base.arrivals(rate, capped(one, self.plan.max_concurrency))
        return timings


def session_stats(
    timings: Sequence[RequestTiming], turns: int
) -> tuple[list[TurnStats], SessionStats]:
    """Per turn index: TTFT, mean context and cache hit rate; per session: completion time
    (first send to last byte of the last answer) of those whose every turn succeeded."""
    measured = [t for t in timings if not t.warmup and t.turn is not None]
    by_turn: dict[int, list[RequestTiming]] = defaultdict(list)
    by_session: dict[int, list[RequestTiming]] = defaultdict(list)
    for timing in measured:
        # A session's timings always carry their turn and session (_SessionRunner sets them).
        by_turn[timing.turn].append(timing)  # type: ignore[index]
        by_session[timing.session].append(timing)  # type: ignore[index]
    stats = []
    for turn in sorted(by_turn):
        group = by_turn[turn]
        oks = [t for t in group if t.ok]
        contexts = [t.n_in for t in oks if t.n_in is not None]
        reported = [t for t in oks if t.cached is not None and t.n_in]
        n_in = sum(t.n_in or 0 for t in reported)  # `reported` holds the stated ones
        hit = min(1.0, sum(t.cached or 0 for t in reported) / n_in) if n_in else None
        stats.append(
            TurnStats(
                turn=turn,
                requests=len(group),
                succeeded=len(oks),
                context_tokens_mean=sum(contexts) / len(contexts) if contexts else None,
                ttft_ms=distribution((v for t in oks if (v := t.ttft_ns()) is not None), 1_000_000),
                prefix_cache_hit_rate=hit,
            )
        )
    completions = [
        (max(t.last_ns() for t in group) - min(t.t_send_ns for t in group)) / NS_PER_S
        for group in by_session.values()
        if len(group) == turns and all(t.ok for t in group)
    ]
    sessions = SessionStats(
        total=len(by_session),
        completed=len(completions),
        completion_s=distribution(completions),
    )
    return stats, sessions


async def run_session_sweep(
    cfg: EndpointConfig,
    workload: SessionWorkload,
    plan: LoadPlan,
    *,
    result: SweepResult | None = None,
    progress: ProgressCallback | None = None,
) -> SweepResult:
    """Every level in order (a level's `requests` counts sessions), appending each finished
    one to `result` as it ends, as `run_sweep` does."""
    result = result if result is not None else SweepResult()
    runner = _SessionRunner(cfg, workload, plan, progress)

    def in_processes(level: Level, pool: ProcessPoolExecutor) -> InProcesses:
        return _level_in_processes(runner, level, pool)

    def describe(timings: list[RequestTiming], point: Point) -> None:
        point.turns, point.sessions = session_stats(timings, workload.shape.turns)

    return await sweep_levels(runner, result, in_processes, describe)


# Several client processes (--processes): sessions split by session, each staying in one
# process, since a turn's prompt carries the answers its own process received.


@dataclass
class _Messages:
    """A SessionWorkload's texts for the sessions of one share, built in the parent: the
    prompt builder (and the tokenizer behind it) never travels to a client process."""

    shape: SessionScenario
    system: str
    texts: dict[tuple[int, int], str] = field(default_factory=dict)

    def message(self, key: int, turn: int) -> str:
        return self.texts[(key, turn)]


@dataclass
class SessionShare:
    """What one client process runs at one level: whole sessions, by index."""

    cfg: EndpointConfig
    sessions: list[int]
    keys: list[int]
    messages: _Messages
    offsets_ns: list[int] | None  # open loop: each session's planned start
    concurrency: int  # closed loop: its sessions at once; open loop: its cap (0: none)
    limits: ClientLimits
    start_ns: int = 0  # perf_counter_ns: one clock for the whole host


def _session_shares(runner: _SessionRunner, level: Level, processes: int) -> list[SessionShare]:
    """Session s goes to process s % N with its key, its texts and, open loop, its start on
    the one schedule planned here, so the split sends what one process would have sent."""
    plan, shape = runner.plan, runner.workload.shape
    count = plan.requests or 0
    keys = [next(runner.keys) for _ in range(count)]
    starts = runner.base.planned_offsets(level, count)
    shares = []
    for p in range(processes):
        mine = list(range(p, count, processes))
        texts = {
            (keys[s], turn): runner.workload.message(keys[s], turn)
            for s in mine
            for turn in range(shape.turns)
        }
        shares.append(
            SessionShare(
                cfg=runner.cfg,
                sessions=mine,
                keys=[keys[s] for s in mine],
                messages=_Messages(shape, runner.workload.system, texts),
                offsets_ns=[starts[s] for s in mine] if starts else None,
                concurrency=runner.base.process_concurrency(level, p, processes),
                limits=plan.client_limits,
            )
        )
    return [share for share in shares if share.sessions]


def run_session_share(share: SessionShare) -> tuple[list[RequestTiming], ClientLoad, int]:
    """Run in a client process: (timings, its client load, how late it started in ns)."""
    return asyncio.run(_run_session_share(share))


async def _run_session_share(share: SessionShare) -> tuple[list[RequestTiming], ClientLoad, int]:
    plan = LoadPlan(levels=[], requests=len(share.sessions), client_limits=share.limits)
    # A client process gets the share's messages, which answer what the runner asks of a
    # SessionWorkload (duck-typed) without its prompt builder.
    runner = _SessionRunner(share.cfg, share.messages, plan, None)  # type: ignore[arg-type]
    turns = share.messages.shape.turns
    state = LevelProgress("", None, None, perf_counter_ns())  # counts only: no progress here
    timings: list[RequestTiming] = []

    async def session(http: Any, k: int, t_sched: int | None) -> None:
        s = share.sessions[k]
        # Request indices by session and turn: unique across processes.
        requests = itertools.count(s * turns)
        timings.extend(await runner.session(http, s, requests, state, t_sched, key=share.keys[k]))

    load, skew = await drive_share(share, len(share.sessions), session)
    return timings, load, skew


def _level_in_processes(
    runner: _SessionRunner, level: Level, pool: ProcessPoolExecutor
) -> InProcesses:
    async def warm() -> list[RequestTiming]:
        async with make_http_client(level.concurrency or 1, runner.cfg.transport) as http:
            return await runner._warmup(http, level)

    warmed = asyncio.run(warm())
    shares = _session_shares(runner, level, runner.plan.processes)
    timings, load, bound, skew = run_shares(pool, run_session_share, shares)
    return warmed + timings, load, bound, skew
