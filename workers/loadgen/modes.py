"""The bench command's run modes (synthetic scenario, dataset, trace replay, multi-turn sessions),
each from parsed flags to a written document.
"""

from __future__ import annotations

import argparse
import asyncio
import secrets
import sys
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import httpx

from workers.loadgen.cli_args import (
    CliError,
    deployment_facts,
    endpoint_config,
    load_spec,
    scenario_numbers,
    session_shape,
    slo_limits,
    token_counter,
)
from workers.loadgen.client import EndpointConfig
from workers.loadgen.client_load import ClientLimits
from workers.loadgen.datasets import DatasetError, DatasetWorkload, dataset_name, read_dataset
from workers.loadgen.measure import (
    LengthMismatch,
    ScrapeOptions,
    measure_load,
    open_scraper,
    scraped,
)
from workers.loadgen.progress import ProgressBar
from workers.loadgen.prompts import (
    PromptBuilder,
    WordPool,
    template_overhead,
    usage_probe,
)
from workers.loadgen.report import submit_if_asked, write_document
from workers.loadgen.runner import Level, SweepResult, run_sweep
from workers.loadgen.scrape import Scraper
from workers.loadgen.sessions import (
    SESSION_PRESETS,
    SessionWorkload,
    mean_context_tokens,
    run_session_sweep,
    session_dataset,
)
from workers.loadgen.setup import load_plan, load_setup, scenario_load_facts
from workers.loadgen.traces import TraceError, TracePrompts, read_mooncake, replay, trace_dataset
from workers.result_facts import Deployment, Scenario, SessionScenario
from workers.results import ResultDocument


def run_mode(args: argparse.Namespace) -> int:
    """One bench run in the mode its flags pick (trace, dataset, sessions or a scenario)."""
    if args.seed is None:
        args.seed = secrets.randbelow(2**31)
    cfg = endpoint_config(args)
    deployment = deployment_facts(args)
    if args.trace is not None:
        return _run_trace(args, cfg, deployment)
    if args.dataset is not None:
        return _run_dataset(args, cfg, deployment)
    shape = session_shape(args)
    if shape is not None:
        return _run_sessions(args, cfg, deployment, shape)
    n_in, n_out, hit, concurrency = scenario_numbers(args)
    slo = slo_limits(args)
    load = load_spec(args, concurrency)
    scenario = Scenario(
        preset=args.scenario,
        input_tokens=n_in,
        output_tokens=n_out,
        length_spread=args.length_spread,
        prefix_cache_hit_rate=hit,
        dataset="shared-prefix" if hit > 0 else "random-words",
        **scenario_load_facts(load, slo),
    )

    def report(result: SweepResult, document: ResultDocument) -> None:
        if result.stop_reason:
            print(result.stop_reason, file=sys.stderr)
        bound = [p.label or "?" for p in document.points if p.client_bound]
        if bound:
            print(
                f"client-bound at {', '.join(bound)}: this process was saturated or starved of "
                "CPU (a busy core, or its event loop late past --client-lag-limit-ms), so its "
                "timestamps carry its own delay; those levels are marked and never ranked "
                "(try --processes, or a host with idle cores)",
                file=sys.stderr,
            )

    scrape = _scrape_options(args)
    try:
        setup = load_setup(
            cfg,
            token_counter(args, cfg),
            scenario,
            load,
            allow_length_mismatch=args.allow_length_mismatch,
            scrape=scrape,
        )
    except httpx.HTTPError as exc:
        raise CliError(f"cannot reach {cfg.url}: {exc}") from None
    progress = ProgressBar(enabled=not args.quiet)
    try:
        measured = measure_load(
            setup, drive=lambda sweep: _drive(sweep, progress), progress=progress
        )
    except LengthMismatch as exc:
        progress.close()
        raise CliError(
            f"{exc}. Measure anyway with --allow-length-mismatch (its points are then marked "
            "and never ranked)"
        ) from None
    except httpx.HTTPError as exc:
        progress.close()
        raise CliError(f"cannot reach {cfg.url}: {exc}") from None
    extra = measured.extra()
    return _write_and_submit(
        args,
        cfg,
        _Measured(measured.scraper, measured.started_at, measured.result, measured.interrupted),
        deployment=deployment,
        scenario=scenario,
        mismatched=measured.mismatched,
        report=report,
        revision=False,
        server_metrics=extra.pop("server_metrics"),
        **extra,
    )


def _scrape_options(args: argparse.Namespace) -> ScrapeOptions:
    if not args.no_scrape and args.scrape_interval <= 0:
        raise CliError("--scrape-interval must be positive")
    return ScrapeOptions(not args.no_scrape, args.metrics_url, args.scrape_interval)


def _scraper(args: argparse.Namespace, cfg: EndpointConfig) -> Scraper | None:
    """The /metrics scraper of the modes that run their own sweep (trace, dataset, sessions)."""
    return open_scraper(cfg, _scrape_options(args))


def _run_dataset(args: argparse.Namespace, cfg: EndpointConfig, deployment: Deployment) -> int:
    """The file's prompts at the usual load levels; lengths are the file's, counted."""
    if args.scenario or args.turns is not None or args.input_tokens:
        raise CliError("--dataset brings its own prompts: drop --scenario/--input-tokens/--turns")
    if args.output_tokens is not None and args.output_tokens < 1:
        raise CliError("--output-tokens must be positive")
    slo = slo_limits(args)
    load = load_spec(args, args.concurrency or "1")
    plan = load_plan(load, slo)
    try:
        counter = token_counter(args, cfg)
        dataset = read_dataset(args.dataset, counter, limit=args.requests)
        prompt_tokens = [counter.count(row.prompt) for row in dataset.rows]
    except OSError as exc:
        raise CliError(f"--dataset {args.dataset}: {exc.strerror or exc}") from None
    except DatasetError as exc:
        raise CliError(f"--dataset {args.dataset}: {exc}") from None
    except httpx.HTTPError as exc:
        raise CliError(f"cannot reach {cfg.url}: {exc}") from None
    if args.output_tokens is None and any(row.output_tokens is None for row in dataset.rows):
        raise CliError(f"--dataset {args.dataset}: rows without output_tokens need --output-tokens")
    outputs = [args.output_tokens or row.output_tokens or 1 for row in dataset.rows]
    scenario = Scenario(
        name=f"dataset {dataset.identity.name}"[:200],
        input_tokens=max(1, round(sum(prompt_tokens) / len(prompt_tokens))),
        output_tokens=max(1, round(sum(outputs) / len(outputs))),
        length_spread=None,  # the file's own lengths
        prefix_cache_hit_rate=None,
        dataset=dataset_name(dataset.identity),
        **scenario_load_facts(load, slo),
        trace=dataset.identity,
    )
    workload = DatasetWorkload(dataset, args.output_tokens)
    return _sweep_and_submit(
        args,
        cfg,
        lambda result, progress: run_sweep(cfg, workload, plan, result=result, progress=progress),
        deployment=deployment,
        scenario=scenario,
        tokenizer=counter.name,
        api=cfg.api,
        seed=args.seed,
    )


def _run_trace(args: argparse.Namespace, cfg: EndpointConfig, deployment: Deployment) -> int:
    """One open-loop level: the trace's own arrivals, lengths and shared blocks."""
    if args.scenario or args.concurrency or args.rate or args.turns is not None:
        raise CliError("--trace replays the file's own load: drop --scenario/--concurrency/--rate")
    if args.requests is not None and args.requests < 1:
        raise CliError("--requests must be positive")
    try:
        trace = read_mooncake(args.trace, scale=args.trace_scale, limit=args.requests)
    except OSError as exc:
        raise CliError(f"--trace {args.trace}: {exc.strerror or exc}") from None
    except TraceError as exc:
        raise CliError(f"--trace {args.trace}: {exc}") from None
    try:
        counter = token_counter(args, cfg)
        overhead = template_overhead(counter, usage_probe(cfg))
        builder = PromptBuilder(counter, seed=args.seed, pool=WordPool.for_counter(counter))
        prompts = TracePrompts(builder, overhead=overhead)
    except httpx.HTTPError as exc:
        raise CliError(f"cannot reach {cfg.url}: {exc}") from None
    rows = trace.rows
    scenario = Scenario(
        name=f"trace {trace.identity.name} x{trace.identity.scale:g}"[:200],
        input_tokens=max(1, round(sum(r.input_length for r in rows) / len(rows))),
        output_tokens=max(1, round(sum(r.output_length for r in rows) / len(rows))),
        length_spread=None,  # the trace's own lengths, not a uniform spread
        prefix_cache_hit_rate=None,  # the trace's shared blocks decide it: measured
        dataset=trace_dataset(trace.identity),
        arrival="open",
        request_count=len(rows),
        slo=slo_limits(args),
        trace=trace.identity,
    )
    limits = ClientLimits(cpu=args.client_cpu_limit, loop_lag_ms=args.client_lag_limit_ms)
    scraper = _scraper(args, cfg)
    started_at = datetime.now(UTC)
    progress = ProgressBar(enabled=not args.quiet)
    try:
        point, timings = asyncio.run(
            scraped(
                scraper,
                replay(
                    cfg,
                    trace,
                    prompts,
                    max_concurrency=args.max_concurrency,
                    limits=limits,
                    progress=progress,
                ),
            )
        )
    finally:
        progress.close()
    result = SweepResult(points=[point], timings=[timings], levels=[Level(name=point.label)])
    return _write_and_submit(
        args,
        cfg,
        _Measured(scraper, started_at, result),
        deployment=deployment,
        scenario=scenario,
        tokenizer=counter.name,
        prompt_overhead_tokens=overhead,
        seed=args.seed,
    )


def _run_sessions(
    args: argparse.Namespace, cfg: EndpointConfig, deployment: Deployment, shape: SessionScenario
) -> int:
    """Multi-turn sessions: prompts depend on the answers, so there is no verification pass;
    the server's own usage counts every turn's context."""
    slo = slo_limits(args)
    load = load_spec(args, args.concurrency or "1")
    plan = load_plan(load, slo)
    try:
        counter = token_counter(args, cfg)
        pool = WordPool.for_counter(counter)
        workload = SessionWorkload(
            PromptBuilder(counter, seed=args.seed, pool=pool), shape, seed=args.seed
        )
    except httpx.HTTPError as exc:
        raise CliError(f"cannot reach {cfg.url}: {exc}") from None
    preset = SESSION_PRESETS.get(args.scenario or "")
    # A preset with any parameter overridden is another scenario, not that preset.
    same = preset is not None and preset == shape.model_copy(update={"sessions": None})
    scenario = Scenario(
        preset=args.scenario if same else None,
        input_tokens=mean_context_tokens(shape),
        output_tokens=shape.output_tokens,
        length_spread=0.0,
        prefix_cache_hit_rate=None,  # what the conversation itself reuses: measured per turn
        dataset=session_dataset(shape),
        **scenario_load_facts(load, slo),
        sessions=shape,
    )
    return _sweep_and_submit(
        args,
        cfg,
        lambda result, progress: run_session_sweep(
            cfg, workload, plan, result=result, progress=progress
        ),
        deployment=deployment,
        scenario=scenario,
        report=_print_turns,
        tokenizer=counter.name,
        api=cfg.api,
        seed=args.seed,
    )


def _print_turns(result: SweepResult, document: ResultDocument) -> None:
    for point in document.points:
        for turn in point.turns or []:
            hit = turn.prefix_cache_hit_rate
            ttft = turn.ttft_ms.p50 if turn.ttft_ms else None
            print(
                f"{point.label:>12}  turn {turn.turn:>3}  context "
                f"{turn.context_tokens_mean or 0:8.0f} tok  TTFT p50 "
                f"{'-' if ttft is None else f'{ttft:.1f}'} ms  cache hit "
                f"{'not reported' if hit is None else f'{hit:.1%}'}",
                file=sys.stderr,
            )


@dataclass
class _Measured:
    """What a run mode measured, as the post-sweep step needs it."""

    scraper: Scraper | None
    started_at: datetime
    result: SweepResult
    interrupted: bool = False


def _sweep_and_submit(
    args: argparse.Namespace,
    cfg: EndpointConfig,
    sweep: Callable[[SweepResult, ProgressBar], Coroutine[Any, Any, Any]],
    **facts: Any,
) -> int:
    """The sweep's levels with the server scrape beside it, until done or Ctrl-C, then the
    post-sweep step."""
    scraper = _scraper(args, cfg)
    started_at = datetime.now(UTC)
    result = SweepResult()
    progress = ProgressBar(enabled=not args.quiet)
    interrupted = _drive(scraped(scraper, sweep(result, progress)), progress)
    measured = _Measured(scraper, started_at, result, interrupted)
    return _write_and_submit(args, cfg, measured, **facts)


def _write_and_submit(
    args: argparse.Namespace,
    cfg: EndpointConfig,
    measured: _Measured,
    *,
    deployment: Deployment,
    scenario: Scenario,
    mismatched: str | None = None,
    report: Callable[[SweepResult, ResultDocument], None] | None = None,
    revision: bool = True,
    **extra: Any,
) -> int:
    """The post-sweep step every run mode ends with: the document written, the mode's own
    `report` on stderr, then submitted unless its prompts missed the scenario's lengths.
    Returns the command's exit status."""
    result, interrupted = measured.result, measured.interrupted
    if not result.points:
        print("inferboard-worker bench: no level finished; nothing written", file=sys.stderr)
        return 130 if interrupted else 1
    document = write_document(
        args,
        cfg,
        measured.scraper,
        result,
        deployment=deployment,
        scenario=scenario,
        started_at=measured.started_at,
        interrupted=interrupted,
        revision=revision,
        **extra,
    )
    if report is not None:
        report(result, document)
    if mismatched and not args.allow_length_mismatch:
        print(
            f"inferboard-worker bench: error: {mismatched}; the run does not match its "
            "scenario and was not submitted (--allow-length-mismatch measures anyway and "
            "marks the points)",
            file=sys.stderr,
        )
        return 3
    submit_if_asked(args, document)
    return 130 if interrupted else 0


def _drive(sweep: Coroutine[Any, Any, Any], progress: ProgressBar) -> bool:
    """Run the sweep (the server scrape beside it); True when Ctrl-C ended it (the levels
    that finished are kept in the sweep's result)."""
    try:
        asyncio.run(sweep)
    except KeyboardInterrupt:
        return True
    finally:
        progress.close()
    return False
