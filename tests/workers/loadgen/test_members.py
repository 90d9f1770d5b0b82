"""One plan split over the members of a fanned-out job, and their parts merged into one run."""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime

import pytest

from tests.workers.loadgen.support import WordWorkload
from workers.loadgen.client import EndpointConfig
from workers.loadgen.members import (
    MemberPart,
    MemberRun,
    PartsMismatch,
    member_part,
    merge_parts,
    run_member,
)
from workers.loadgen.metrics import NS_PER_S, build_point
from workers.loadgen.output import make_document
from workers.loadgen.runner import Level, LoadPlan, _Runner
from workers.result_facts import Deployment, Engine, ModelInfo, Quantization, Scenario
from workers.results import ServerMetrics, ServerSeries


def _plan(levels: list[Level], **options) -> LoadPlan:
    options.setdefault("requests", 9)
    return LoadPlan(levels=levels, **options)


def _members(url: str, plan: LoadPlan, members: int = 3) -> tuple[list[MemberRun], int]:
    cfg = EndpointConfig(base_url=url, model="m", timeout_s=30.0)
    start_at_ns = time.time_ns() + NS_PER_S // 2

    async def all_of_them() -> list[MemberRun]:
        return await asyncio.gather(
            *(
                run_member(
                    cfg, WordWorkload(), plan, member=k, members=members, start_at_ns=start_at_ns
                )
                for k in range(members)
            )
        )

    return asyncio.run(all_of_them()), start_at_ns


def _parts(members: tuple[list[MemberRun], int]) -> list[MemberPart]:
    runs, start_at_ns = members
    parts = []
    for k, run in enumerate(runs):
        document = make_document(
            model=ModelInfo(name="m"),
            deployment=Deployment(
                accelerator="H200",
                gpus=1,
                engine=Engine(name="e"),
                quantization=Quantization(weights="BF16"),
            ),
            scenario=Scenario(input_tokens=5, output_tokens=8, length_spread=0),
            result=run.result,
            started_at=datetime.now(UTC),
        )
        document.environment.worker = f"w{k}"
        parts.append(
            member_part(
                document,
                run,
                member=k,
                members=len(runs),
                start_at_ns=start_at_ns,
            )
        )
    return parts


def test_it_splits_a_closed_loop_level_by_request_and_by_concurrency():
    runner = _Runner(
        EndpointConfig(base_url="http://x", model="m"), WordWorkload(), _plan([]), None, None
    )
    shares = runner.shares(Level(concurrency=7), 3)
    assert [s.indices for s in shares] == [[0, 3, 6], [1, 4, 7], [2, 5, 8]]
    assert [s.concurrency for s in shares] == [3, 2, 2]  # 7 workers split, none lost


def test_members_send_the_open_loop_schedule_a_single_process_plans(start_fault_server):
    url = start_fault_server()
    plan = _plan([Level(rate=300.0)], seed=5, requests=12)
    members = _members(url, plan)
    parts = _parts(members)
    sched = {t["i"]: t["t_sched_ns"] for p in parts for t in p.levels[0].timings}
    runner = _Runner(EndpointConfig(base_url=url, model="m"), WordWorkload(), plan, None, None)
    planned = runner.shares(Level(rate=300.0), 1)[0].offsets_ns
    # The same Poisson schedule, request by request, whichever member sends it; request 0
    # is planned at start_at itself.
    assert sched[0] == members[1]
    assert [sched[i] - sched[0] for i in range(12)] == planned
    assert merge_parts(parts).points[0].requests.succeeded == 12


def test_the_merge_aggregates_every_member_s_requests_as_one_process_would(start_fault_server):
    url = start_fault_server("--itl-ms", "1")
    members = _members(url, _plan([Level(concurrency=3), Level(concurrency=6)], early_stop=False))
    runs = members[0]
    document = merge_parts(_parts(members), early_stop=False)
    assert [p.requests.succeeded for p in document.points] == [9, 9]
    for index, point in enumerate(document.points):
        assert sorted(r.i for r in point.records) == list(range(9))
        # The same requests on one process's clock (these members shared a host).
        union = [t for run in runs for t in run.result.timings[index]]
        alone = build_point(union, concurrency=point.concurrency, label=point.label)
        assert point.latency_ms.ttft.p99 == pytest.approx(alone.latency_ms.ttft.p99)
        assert point.latency_ms.e2el.p50 == pytest.approx(alone.latency_ms.e2el.p50)
        assert point.throughput.output_tok_s == pytest.approx(
            alone.throughput.output_tok_s, rel=1e-3
        )
        assert point.client.processes == 3
    members = document.environment.extra["members"]
    assert [m["member"] for m in members] == [0, 1, 2]
    assert all(isinstance(m["start_skew_ms"], float) for m in members)
    assert all(len(m["client"]) == 2 for m in members)
    assert len(document.environment.extra["members_level_start_skew_ms"]) == 2
    assert document.environment.worker == "3 members: w0, w1, w2"


def test_the_merge_stops_the_sweep_where_the_merged_levels_saturate(start_fault_server):
    # Every request fails: no member's share can tell, the merged first level does.
    url = start_fault_server("--mode", "inband_error")
    runs = _members(url, _plan([Level(concurrency=3), Level(concurrency=6)]))
    document = merge_parts(_parts(runs))
    assert [p.label for p in document.points] == ["c=3"]
    assert document.status == "failed"
    reason = document.environment.extra["stop_reason"]
    assert reason == "stopped after c=3: no request succeeded"
    # Skews of the levels kept only.
    assert len(document.environment.extra["members_level_start_skew_ms"]) == 1


def test_parts_that_are_not_every_member_of_one_plan_are_refused(start_fault_server):
    url = start_fault_server()
    parts = _parts(_members(url, _plan([Level(concurrency=3)])))
    with pytest.raises(PartsMismatch, match="expected members"):
        merge_parts(parts[:2])
    other = parts[2].model_copy(update={"start_at_ns": parts[2].start_at_ns + 1})
    with pytest.raises(PartsMismatch, match="one plan and one start"):
        merge_parts([*parts[:2], other])


def test_the_merged_run_carries_member_0s_scrape_of_the_servers_metrics(start_fault_server):
    """Member 0 alone scrapes /metrics (the one endpoint's one series); each merged level
    takes its slice, and the server's draft counters give the acceptance."""
    url = start_fault_server("--itl-ms", "1")
    members = _members(url, _plan([Level(concurrency=3), Level(concurrency=6)], early_stop=False))
    parts = _parts(members)
    for index, point in enumerate(parts[0].document.points):
        point.server = ServerMetrics(
            engine="vllm",
            interval_s=1.0,
            series=[
                ServerSeries(
                    name=name, source=name, kind="counter", t_ms=[0, 500], values=[0, rise]
                )
                for name, rise in (
                    ("spec_draft_tokens", 40 * (index + 1)),
                    ("spec_accepted_tokens", 30 * (index + 1)),
                    ("spec_drafts", 10 * (index + 1)),
                )
            ],
        )
    document = merge_parts(parts, early_stop=False)
    assert [p.server for p in document.points] == [p.server for p in parts[0].document.points]
    assert [p.speculative_acceptance.accepted_tokens for p in document.points] == [30, 60]


def test_a_merged_run_with_some_failed_requests_is_partial_by_the_one_status_rule(
    start_fault_server,
):
    url = start_fault_server("--mode", "cycle", "--cycle", "ok,ok,inband_error")
    document = merge_parts(_parts(_members(url, _plan([Level(concurrency=3)]))))
    [point] = document.points
    assert point.requests.failed > 0 and point.requests.succeeded > 0
    assert document.status == "partial"


def test_a_part_of_a_job_wider_than_sixteen_members_is_read(start_fault_server):
    """The bound on members is the server's (JOB_MAX_MEMBERS); a part checks its shape only."""
    url = start_fault_server()
    part = _parts(_members(url, _plan([Level(concurrency=3)])))[0].model_dump(mode="json")
    wide = MemberPart.model_validate({**part, "member": 20, "members": 32})
    assert (wide.member, wide.members) == (20, 32)
    with pytest.raises(ValueError, match="member 32 is not one of 32 members"):
        MemberPart.model_validate({**part, "member": 32, "members": 32})
