"""One load job across several workers of a pool: each member runs share k of N of one plan,
and the server merges the members' parts into one run.

Every member builds the same plan from the job's seed, so every member computes the same
N shares (`_Runner.shares`: request k, k+N, ...; open-loop arrival times planned once;
closed-loop concurrency split) and sends only its own. The first level starts at the job's
`start_at`, a wall-clock instant the server chose once: hosts share no monotonic clock, and
NTP keeps wall clocks within a few milliseconds on a pool's hosts. Later levels start when
each member has finished its share of the previous one (members do not talk to each other);
the merge records how far apart they started, per level.

A part carries the member's timings on the wall clock (ns since the epoch), so the merge can
put every member's requests on one axis and aggregate them with `build_point`, the one
definition of every figure a single-process run reports. Pure apart from `run_member`.
"""

from __future__ import annotations

import dataclasses
import time
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from workers.figures import run_status
from workers.loadgen.client import EndpointConfig, TokenCounter
from workers.loadgen.client_load import client_bound, merge_client_loads
from workers.loadgen.metrics import NS_PER_MS, RequestTiming, build_point, saturation_reason
from workers.loadgen.runner import (
    LoadPlan,
    ProgressCallback,
    SweepResult,
    Workload,
    _Runner,
    level_point,
    run_share_async,
)
from workers.loadgen.scrape import server_acceptance
from workers.results import ClientLoad, Point, ResultDocument

# RequestTiming fields on a clock; the rest are counts, flags and text.
_CLOCK_FIELDS = ("t_send_ns", "t_sched_ns", "t_out_ns", "t_end_ns")


class MemberLevel(BaseModel):
    """What one member measured at one level."""

    model_config = ConfigDict(extra="forbid")

    label: str | None = None
    concurrency: int | None = None
    rate: float | None = None
    started_ns: int | None = Field(None, description="wall clock; None: no share at this level")
    client: ClientLoad | None = None
    timings: list[dict[str, Any]] = Field(default_factory=list)


class MemberPart(BaseModel):
    """One member's share of a job, as it submits it (never stored as a run by itself)."""

    model_config = ConfigDict(extra="forbid")

    # The bound on `members` is the server's (settings.JOB_MAX_MEMBERS, checked when the job
    # is asked for): a part checks only its shape, so it never refuses what the server allows.
    member: int = Field(ge=0)
    members: int = Field(ge=2)
    start_at_ns: int
    start_skew_ms: float = Field(description="the first level's actual start - start_at")
    document: ResultDocument = Field(description="its share alone, without request records")
    levels: list[MemberLevel]

    @model_validator(mode="after")
    def _member_of_members(self) -> MemberPart:
        if self.member >= self.members:
            raise ValueError(f"member {self.member} is not one of {self.members} members")
        return self


def timing_on_wall_clock(timing: RequestTiming, offset_ns: int) -> dict[str, Any]:
    """A timing as JSON with its perf_counter times moved to the wall clock; the answer's text
    (multi-turn sessions only) is left behind."""
    data = {f.name: getattr(timing, f.name) for f in dataclasses.fields(timing)}
    for name in _CLOCK_FIELDS:
        if data[name] is not None:
            data[name] += offset_ns
    data["text_ns"] = [t + offset_ns for t in timing.text_ns]
    data["text"] = None
    return data


def timing_from_json(data: dict[str, Any]) -> RequestTiming:
    return RequestTiming(**data)


@dataclasses.dataclass
class MemberRun:
    result: SweepResult  # its share alone: the member's own document is made from it
    levels: list[MemberLevel]
    start_skew_ms: float


def _wall_offset_ns() -> int:
    return time.time_ns() - time.perf_counter_ns()


async def run_member(
    cfg: EndpointConfig,
    workload: Workload,
    plan: LoadPlan,
    *,
    member: int,
    members: int,
    start_at_ns: int,
    count_tokens: TokenCounter | None = None,
    progress: ProgressCallback | None = None,
) -> MemberRun:
    """Run share `member` of `members` of every level of the plan, the first level from
    `start_at_ns` (wall clock). Every level runs: early stop is the merge's decision, since
    one member's share cannot tell that the level saturated the endpoint."""
    runner = _Runner(cfg, workload, plan, progress, count_tokens)
    offset = _wall_offset_ns()
    result = SweepResult()
    levels: list[MemberLevel] = []
    skew_ms = 0.0
    for index, level in enumerate(plan.levels):
        # Its own warm-up: out of every aggregate, and each member's connections need it.
        warm = await runner.warm(level)
        shares = runner.shares(level, members)
        entry = MemberLevel(label=level.label, concurrency=level.concurrency, rate=level.rate)
        levels.append(entry)
        if member >= len(shares):  # fewer requests than members at this level
            continue
        share = shares[member]
        share.start_ns = start_at_ns - offset if index == 0 else time.perf_counter_ns()
        timings, load, late_ns = await run_share_async(share)
        if index == 0:
            skew_ms = late_ns / NS_PER_MS
        entry.started_ns = share.start_ns + late_ns + offset
        entry.client = load
        entry.timings = [timing_on_wall_clock(t, offset) for t in timings]
        mine = warm + sorted(timings, key=lambda t: t.i)
        point = level_point(mine, level, plan)
        point.client, point.client_bound = load, client_bound(load)
        result.points.append(point)
        result.timings.append(mine)
        result.levels.append(level)
    return MemberRun(result=result, levels=levels, start_skew_ms=skew_ms)


def member_part(
    document: ResultDocument, run: MemberRun, *, member: int, members: int, start_at_ns: int
) -> MemberPart:
    """The part a member submits: its records travel as timings, so the document drops them."""
    lean = document.model_copy(deep=True)
    for point in lean.points:
        point.records = None
    return MemberPart(
        member=member,
        members=members,
        start_at_ns=start_at_ns,
        start_skew_ms=run.start_skew_ms,
        document=lean,
        levels=run.levels,
    )


class PartsMismatch(ValueError):
    """Parts that are not the N shares of one plan."""


def merge_parts(parts: list[MemberPart], *, early_stop: bool = True) -> ResultDocument:
    """The members' parts as one result document: each level's timings from every member,
    ordered by request index, aggregated by `build_point` as one process's would be; early
    stop judged on the merged levels; each member's start skew and client load kept in the
    environment."""
    parts = sorted(parts, key=lambda p: p.member)
    n = parts[0].members if parts else 0
    if [p.member for p in parts] != list(range(n)) or any(p.members != n for p in parts):
        raise PartsMismatch(f"expected members 0..{n - 1}, got {[p.member for p in parts]}")
    shapes = {tuple((lv.label, lv.concurrency, lv.rate) for lv in p.levels) for p in parts}
    if len(shapes) != 1 or len({p.start_at_ns for p in parts}) != 1:
        raise PartsMismatch("the parts do not share one plan and one start")
    base = parts[0].document.model_copy(deep=True)
    slo = base.scenario.slo if base.scenario is not None else None
    points: list[Point] = []
    level_skews: list[float] = []
    stop_reason = None
    count = len(parts[0].levels)
    scraped = _server_series(parts[0])
    for index in range(count):
        at_level = [p.levels[index] for p in parts]
        level = at_level[0]
        timings = sorted(
            (timing_from_json(t) for lv in at_level for t in lv.timings), key=lambda t: t.i
        )
        point = build_point(
            timings,
            concurrency=level.concurrency,
            request_rate=level.rate,
            label=level.label,
            slo=slo,
        )
        point.server = scraped.get(index)
        if point.server is not None and point.speculative_acceptance is None:
            point.speculative_acceptance = server_acceptance(point.server)
        loads = [lv.client for lv in at_level if lv.client is not None]
        if loads:
            point.client = merge_client_loads(loads)
            point.client_bound = any(client_bound(load) for load in loads)
        starts = [lv.started_ns for lv in at_level if lv.started_ns is not None]
        level_skews.append((max(starts) - min(starts)) / NS_PER_MS if starts else 0.0)
        previous = points[-1] if points else None
        points.append(point)
        if early_stop and index < count - 1:
            reason = saturation_reason(point, previous, slo)
            if reason is not None:
                stop_reason = f"stopped after {point.label}: {reason}"
                break
    base.points = points
    base.status = run_status(p.requests for p in points)
    environments = [p.document.environment for p in parts]
    base.environment.started_at = min(
        (e.started_at for e in environments if e.started_at), default=None
    )
    base.environment.finished_at = max(
        (e.finished_at for e in environments if e.finished_at), default=None
    )
    workers = ", ".join(e.worker or "?" for e in environments)
    base.environment.worker = f"{n} members: {workers}"[:200]
    extra = dict(base.environment.extra)
    extra.pop("stop_reason", None)
    if stop_reason:
        extra["stop_reason"] = stop_reason
    extra["members"] = [
        {
            "member": p.member,
            "worker": p.document.environment.worker,
            "host": p.document.environment.host,
            "start_skew_ms": p.start_skew_ms,
            "client": [lv.client.model_dump(mode="json") if lv.client else None for lv in p.levels],
        }
        for p in parts
    ]
    extra["members_start_at"] = datetime.fromtimestamp(parts[0].start_at_ns / 1e9, UTC).isoformat()
    extra["members_level_start_skew_ms"] = level_skews[: len(points)]
    base.environment.extra = extra
    return base


def _server_series(part: MemberPart) -> dict[int, Any]:
    """Level index -> the slice of the server's /metrics in `part`'s points: member 0 is the
    one that scrapes (workers/loadgen/measure.py `measure_member`), over its own share's
    window of each level, which the other members' shares overlap from the same start."""
    ran = [i for i, level in enumerate(part.levels) if level.started_ns is not None]
    return {
        index: point.server
        for index, point in zip(ran, part.document.points, strict=False)
        if point.server is not None
    }
