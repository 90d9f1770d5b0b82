"""One load setup from a scenario and a load spec, for the CLI's bench and a job alike.

`inferboard-worker bench` (workers/loadgen/modes.py) states its flags as a `LoadSpec`; a
job's spec carries one (workers/tasks.py, checked by the server in apps/jobs/specs.py).
Both then build their levels and prompts here, so anything the CLI can ask of a run a
scheduled job can ask too.
"""

from __future__ import annotations

from typing import Any

from workers.loadgen.client import EndpointConfig
from workers.loadgen.client_load import ClientLimits
from workers.loadgen.load_spec import LoadSpec
from workers.loadgen.measure import LoadSetup, ScrapeOptions
from workers.loadgen.prompts import TokenCounter, scenario_workload
from workers.loadgen.runner import Level, LoadPlan
from workers.result_facts import Scenario, Slo


def load_plan(load: LoadSpec, slo: Slo | None) -> LoadPlan:
    """The levels and their rules: open loop at `rates` when given, else closed loop."""
    if load.rates:
        levels = [Level(rate=rate) for rate in load.rates]
    else:
        levels = [Level(concurrency=c) for c in load.concurrency]
    stated = {"cpu": load.client_cpu_limit, "loop_lag_ms": load.client_lag_limit_ms}
    limits = {name: value for name, value in stated.items() if value is not None}
    return LoadPlan(
        levels=levels,
        requests=load.requests,
        duration_s=load.duration_s,
        warmup=load.warmup,
        arrival=load.arrival,
        burstiness=load.burstiness,
        max_concurrency=load.max_concurrency,
        slo=slo,
        early_stop=load.early_stop,
        seed=load.seed,
        client_limits=ClientLimits(**limits),
        processes=load.processes,
    )


def scenario_load_facts(load: LoadSpec, slo: Slo | None) -> dict[str, Any]:
    """What the result document's scenario says of the load, as the plan runs it."""
    return {
        "arrival": "open" if load.rates else "closed",
        "warmup_requests": load.warmup,
        "duration_s": load.duration_s,
        "request_count": load.requests,
        "slo": slo,
    }


def load_setup(
    cfg: EndpointConfig,
    counter: TokenCounter,
    scenario: Scenario,
    load: LoadSpec,
    *,
    allow_length_mismatch: bool = False,
    scrape: ScrapeOptions | None = None,
) -> LoadSetup:
    """The run's prompts (sized by `counter`, one probe request for the endpoint's template
    overhead) and plan, from the scenario's shape and SLO and the load spec."""
    if scenario.length_spread is None or scenario.prefix_cache_hit_rate is None:
        # An imported scenario may leave these unstated; a load run needs them, not a guess.
        raise ValueError("the scenario does not state its length spread and prefix hit rate")
    workload, overhead = scenario_workload(
        cfg,
        counter,
        input_tokens=scenario.input_tokens,
        output_tokens=scenario.output_tokens,
        prefix_hit_rate=scenario.prefix_cache_hit_rate,
        length_spread=scenario.length_spread,
        seed=load.seed,
        groups=load.prefix_groups,
    )
    return LoadSetup(
        cfg,
        workload,
        load_plan(load, scenario.slo),
        counter,
        overhead,
        load.seed,
        allow_length_mismatch=allow_length_mismatch,
        scrape=scrape or ScrapeOptions(),
    )
