"""The client knows when it is the bottleneck: CPU and event-loop lag per level."""

from __future__ import annotations

import asyncio
import time

from tests.workers.loadgen.support import WordWorkload
from tests.workers.loadgen.test_cli import bench
from workers.loadgen.client import EndpointConfig
from workers.loadgen.client_load import ClientLimits, client_bound
from workers.loadgen.runner import Level, LoadPlan, run_sweep
from workers.results import ClientLoad, parse_document


def test_a_level_is_client_bound_when_cpu_or_loop_lag_reaches_its_threshold():
    limits = {"cpu_threshold": 0.9, "loop_lag_threshold_ms": 10.0}
    assert not client_bound(ClientLoad(cpu_utilization=0.5, loop_lag_p99_ms=2.0, **limits))
    assert client_bound(ClientLoad(cpu_utilization=0.95, loop_lag_p99_ms=2.0, **limits))
    assert client_bound(ClientLoad(cpu_utilization=0.5, loop_lag_p99_ms=10.0, **limits))
    assert not client_bound(ClientLoad(cpu_utilization=0.5, loop_lag_p99_ms=None, **limits))


async def starved_sweep(url: str, limits: ClientLimits):
    """A sweep sharing its event loop with a coroutine that holds the loop for 50 ms at a
    time, as a client parsing too many streams would."""
    cfg = EndpointConfig(base_url=url, model="m", timeout_s=30)
    plan = LoadPlan(levels=[Level(concurrency=2)], requests=4, client_limits=limits)
    done = asyncio.Event()

    async def hog() -> None:
        while not done.is_set():
            end = time.perf_counter() + 0.05
            while time.perf_counter() < end:
                pass
            await asyncio.sleep(0)

    hogging = asyncio.create_task(hog())
    try:
        return await run_sweep(cfg, WordWorkload(max_tokens=8), plan)
    finally:
        done.set()
        await hogging


def test_a_starved_client_marks_its_level_client_bound(start_fault_server):
    # The server paces tokens, so the level lasts while the hog holds the loop.
    url = start_fault_server("--itl-ms", "20")
    result = asyncio.run(starved_sweep(url, ClientLimits(cpu=1e9, loop_lag_ms=1.0)))
    point = result.points[0]
    assert point.requests.succeeded == 4
    load = point.client
    assert load is not None and load.loop_lag_threshold_ms == 1.0
    # The flag follows the level's own measurement: its loop lag reached the threshold.
    assert load.loop_lag_p99_ms is not None and load.loop_lag_p99_ms >= 1.0
    assert point.client_bound is True


def test_every_level_records_its_client_load_and_the_flag_agrees(start_fault_server):
    url = start_fault_server()
    result = asyncio.run(starved_sweep(url, ClientLimits(cpu=1e9, loop_lag_ms=1e9)))
    point = result.points[0]
    assert point.client is not None and point.client.cpu_utilization > 0
    assert point.client_bound is False  # thresholds no measurement can reach


def test_the_cli_marks_client_bound_levels_in_its_output_and_the_document(
    start_fault_server, tmp_path, capsys
):
    out = tmp_path / "run.json"
    code = bench(
        start_fault_server(),
        out,
        *("--input-tokens", "20", "--output-tokens", "8", "--requests", "4"),
        *("--concurrency", "1,2", "--no-early-stop"),
        # A client that counts any CPU use as saturation: every level is client-bound.
        *("--client-cpu-limit", "0"),
    )
    assert code == 0
    document = parse_document(out.read_text())
    assert [p.client_bound for p in document.points] == [True, True]
    assert all(p.client.cpu_threshold == 0 for p in document.points)
    err = capsys.readouterr().err
    assert err.count("[CLIENT-BOUND cpu") == 2
    assert "client-bound at c=1, c=2" in err
