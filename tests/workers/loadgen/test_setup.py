"""One load setup for the CLI and a job (workers/loadgen/setup.py): the bench's flags and a
job's spec become the same `LoadSpec`, and from it and the scenario the same plan and prompts."""

from __future__ import annotations

import argparse

import pytest

from workers.loadgen.cli import register
from workers.loadgen.cli_args import CliError, load_spec
from workers.loadgen.client import EndpointConfig
from workers.loadgen.client_load import ClientLimits
from workers.loadgen.load_spec import LoadSpec
from workers.loadgen.prompts import CalibratedCounter, EndpointTokenizer, usage_probe
from workers.loadgen.runner import Level
from workers.loadgen.setup import load_plan, load_setup, scenario_load_facts
from workers.result_facts import Scenario, Slo
from workers.tasks import JobSpec

BASE = ["--endpoint", "http://127.0.0.1:9", "--model", "m"]


def bench_args(*flags: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["bench", *BASE, *flags])
    args.seed = 7 if args.seed is None else args.seed
    return args


def job_load(**options: object) -> LoadSpec:
    """The load a worker reads from a job's spec."""
    spec = {
        "job_id": 1,
        "idempotency_key": "k",
        "kind": "load",
        "server_url": "http://127.0.0.1:9",
        "endpoint": {"url": "http://127.0.0.1:9", "served_model": "m"},
        "model": {"name": "m"},
        "deployment": {
            "accelerator": "H200",
            "gpus": 1,
            "engine": {"name": "e"},
            "quantization": {"weights": "BF16"},
        },
        "load": options,
    }
    load = JobSpec.model_validate(spec).load
    assert load is not None
    return load


def test_the_clis_flags_and_a_jobs_options_make_the_same_plan():
    args = bench_args(
        "--rate", "1,2", "--arrival", "gamma", "--burstiness", "0.5", "--max-concurrency", "8",
        "--requests", "20", "--warmup", "2", "--no-early-stop", "--processes", "2",
        "--prefix-groups", "3", "--client-cpu-limit", "0.7", "--client-lag-limit-ms", "30",
    )  # fmt: skip
    from_cli = load_spec(args, args.concurrency)
    from_job = job_load(
        rates=[1, 2], arrival="gamma", burstiness=0.5, max_concurrency=8, requests=20,
        warmup=2, seed=7, early_stop=False, processes=2, prefix_groups=3,
        client_cpu_limit=0.7, client_lag_limit_ms=30,
    )  # fmt: skip
    assert from_cli == from_job
    slo = Slo(ttft_ms=500)
    plan = load_plan(from_job, slo)
    assert plan == load_plan(from_cli, slo)
    assert plan.levels == [Level(rate=1.0), Level(rate=2.0)]
    assert (plan.arrival, plan.burstiness, plan.max_concurrency) == ("gamma", 0.5, 8)
    assert (plan.requests, plan.warmup, plan.seed, plan.slo) == (20, 2, 7, slo)
    assert (plan.early_stop, plan.processes) == (False, 2)
    assert plan.client_limits == ClientLimits(cpu=0.7, loop_lag_ms=30)
    assert scenario_load_facts(from_job, slo) == {
        "arrival": "open",
        "warmup_requests": 2,
        "duration_s": None,
        "request_count": 20,
        "slo": slo,
    }


def test_a_job_that_states_no_client_limits_gets_the_load_generators_own():
    plan = load_plan(job_load(concurrency=[1, 4], duration_s=5), None)
    assert plan.levels == [Level(concurrency=1), Level(concurrency=4)]
    assert plan.client_limits == ClientLimits()
    assert (plan.early_stop, plan.arrival, plan.processes) == (True, "poisson", 1)


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--requests", "4", "--prefix-groups", "0"], "--prefix-groups: Input should be greater"),
        (["--requests", "4", "--burstiness", "0"], "--burstiness: Input should be greater than 0"),
        (["--requests", "4", "--max-concurrency", "0"], "--max-concurrency: Input should be"),
        (["--duration", "5", "--processes", "2"], "--processes needs --requests"),
    ],
)
def test_a_load_flag_the_spec_refuses_is_named_in_the_clis_error(flags, message):
    args = bench_args(
        "--concurrency", "1", *(flags if "--duration" in flags else [*flags, "--requests", "4"])
    )
    with pytest.raises(CliError, match=message):
        load_spec(args, args.concurrency)


def test_the_setup_spreads_the_shared_prefix_over_the_groups_asked_for(start_fault_server):
    url = start_fault_server()
    cfg = EndpointConfig(base_url=url, model="m")
    counter = EndpointTokenizer.probe(cfg) or CalibratedCounter(usage_probe(cfg))
    scenario = Scenario(
        input_tokens=64, output_tokens=4, length_spread=0, prefix_cache_hit_rate=0.5
    )
    one = load_setup(cfg, counter, scenario, job_load(requests=4, seed=3))
    three = load_setup(cfg, counter, scenario, job_load(requests=4, seed=3, prefix_groups=3))
    assert len(one.workload.prefixes) == 1
    assert len(three.workload.prefixes) == 3 and len(set(three.workload.prefixes)) == 3
    assert three.plan == load_plan(job_load(requests=4, seed=3, prefix_groups=3), None)
    assert (three.seed, three.overhead) == (3, one.overhead)


def test_the_setup_refuses_a_scenario_that_does_not_state_its_spread_or_prefix():
    cfg = EndpointConfig(base_url="http://127.0.0.1:9", model="m")
    unstated = Scenario(input_tokens=64, output_tokens=4)
    with pytest.raises(ValueError, match="length spread and prefix hit rate"):
        counter = CalibratedCounter(lambda text: len(text.split()))
        load_setup(cfg, counter, unstated, job_load(requests=4))
