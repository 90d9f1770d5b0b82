"""--processes N: one plan, several client processes, one document."""

from __future__ import annotations

from itertools import pairwise

from tests.workers.loadgen.support import sweep
from tests.workers.loadgen.test_cli import bench
from workers.loadgen.runner import Level
from workers.results import parse_document


def test_a_closed_loop_level_is_shared_by_client_processes_and_merged(start_fault_server):
    url = start_fault_server()
    result = sweep(url, requests=7, levels=[Level(concurrency=3)], processes=2)
    point = result.points[0]
    assert point.requests.succeeded == 7, point.errors
    assert sorted(r.i for r in point.records) == list(range(7))
    assert point.client is not None and point.client.processes == 2
    assert point.client_bound is not None
    assert len(result.start_skew_ms) == 1


def test_open_loop_arrivals_are_planned_once_whatever_the_process_count(start_fault_server):
    url = start_fault_server()

    def planned_offsets(processes: int) -> list[int]:
        result = sweep(url, requests=12, levels=[Level(rate=200.0)], processes=processes, seed=4)
        timings = sorted((t for t in result.timings[0] if not t.warmup), key=lambda t: t.i)
        assert all(t.ok for t in timings)
        return [t.t_sched_ns - timings[0].t_sched_ns for t in timings]

    # The same Poisson schedule, request by request, in one process or split over three.
    assert planned_offsets(3) == planned_offsets(1)


def test_the_cli_runs_several_client_processes_into_one_document(start_fault_server, tmp_path):
    out = tmp_path / "run.json"
    code = bench(
        start_fault_server(),
        out,
        *("--input-tokens", "20", "--output-tokens", "8", "--requests", "6"),
        *("--concurrency", "1,4", "--no-early-stop", "--processes", "2"),
    )
    assert code == 0
    document = parse_document(out.read_text())
    assert [p.requests.succeeded for p in document.points] == [6, 6]
    assert all(p.client.processes == 2 for p in document.points)
    assert len(document.environment.extra["client_start_skew_ms"]) == 2
    assert all(p.prompt_length_mismatch_rate == 0 for p in document.points)


def test_processes_need_a_request_count(start_fault_server, tmp_path, capsys):
    out = tmp_path / "run.json"
    code = bench(
        start_fault_server(),
        out,
        *("--input-tokens", "20", "--output-tokens", "8", "--duration", "1"),
        *("--processes", "2"),
    )
    assert code == 2
    assert "--processes needs --requests" in capsys.readouterr().err


def test_the_cli_splits_sessions_over_client_processes_each_session_in_one(
    start_fault_server, tmp_path
):
    out = tmp_path / "run.json"
    code = bench(
        start_fault_server(),
        out,
        *("--scenario", "chat", "--turns", "3", "--output-tokens", "4", "--requests", "5"),
        *("--concurrency", "3", "--processes", "2"),
    )
    assert code == 0
    document = parse_document(out.read_text())
    [point] = document.points
    assert point.requests.succeeded == 15, point.errors
    assert point.client.processes == 2
    assert (point.sessions.total, point.sessions.completed) == (5, 5)
    assert [(t.turn, t.succeeded) for t in point.turns] == [(0, 5), (1, 5), (2, 5)]
    # Every turn of a session came from the process that held its conversation: request
    # indices are session * turns + turn, and each session's turns follow one another.
    by_session: dict[int, list] = {}
    for record in point.records:
        by_session.setdefault(record.session, []).append(record)
    for session, records in by_session.items():
        records.sort(key=lambda r: r.turn)
        assert [r.i for r in records] == [session * 3 + t for t in range(3)]
        assert all(a.t_send_ms < b.t_send_ms for a, b in pairwise(records))
    assert len(document.environment.extra["client_start_skew_ms"]) == 1
