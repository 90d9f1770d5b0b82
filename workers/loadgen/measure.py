"""One load run, as the `bench` CLI (`modes.run_mode`) and the Celery job
(`workers/tasks.py`) both measure it, and one member's share of a job fanned out over several
workers (`measure_member`): prompts verified against their lengths, the sweep with
the server's `/metrics` scraped beside it, each point's slice of the server's series, and
the points whose server-counted prompts missed their length marked.

Before (issue 41) the job assembled its own run: it never scraped `/metrics`, recorded no
prompt check, and stored runs the CLI refuses. The callers keep only what differs: how the
sweep is driven (Ctrl-C for the CLI, the job's cancel event) and what is done with a refusal
(a CLI message and exit status, a failed job).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from workers.loadgen.client import EndpointConfig
from workers.loadgen.members import MemberRun, run_member
from workers.loadgen.metrics import LENGTH_TOLERANCE
from workers.loadgen.output import make_document
from workers.loadgen.prompts import LengthCheck, PromptWorkload, TokenCounter, verify_lengths
from workers.loadgen.runner import LoadPlan, ProgressCallback, SweepResult, run_sweep
from workers.loadgen.scrape import (
    Scraper,
    metrics_url,
    point_window,
    probe,
    scraping,
    server_acceptance,
)
from workers.result_facts import Deployment, ModelInfo, Scenario
from workers.results import SCHEMA_REVISION, ResultDocument

DEFAULT_SCRAPE_INTERVAL_S = 1.0


class LengthMismatch(ValueError):
    """Prompts miss their scenario's input length: the run would not match its label."""


@dataclass(frozen=True)
class ScrapeOptions:
    enabled: bool = True
    url: str | None = None  # None: <endpoint root>/metrics
    interval_s: float = DEFAULT_SCRAPE_INTERVAL_S


@dataclass
class LoadSetup:
    """What a load run measures with: the endpoint, the prompts, the levels."""

    cfg: EndpointConfig
    workload: PromptWorkload
    plan: LoadPlan
    counter: TokenCounter
    overhead: int
    seed: int | None
    allow_length_mismatch: bool = False
    scrape: ScrapeOptions = field(default_factory=ScrapeOptions)


@dataclass
class LoadMeasured:
    """A finished (or interrupted) run: its levels, the scrape and the prompt check."""

    setup: LoadSetup
    result: SweepResult
    scraper: Scraper | None
    started_at: datetime
    check: LengthCheck
    interrupted: bool
    server_metrics: Any  # what environment.extra says of the scrape
    mismatched: str | None  # why measured prompts missed their length; None when they did not

    def extra(self) -> dict[str, Any]:
        """environment.extra of the run: the same keys from the CLI and from a job."""
        cfg, check = self.setup.cfg, self.check
        return {
            "server_metrics": self.server_metrics,
            "tokenizer": self.setup.counter.name,
            "prompt_overhead_tokens": self.setup.overhead,
            "api": cfg.api,
            "seed": self.setup.seed,
            "transport": cfg.transport,
            "prompt_check": prompt_check(check),
        }

    def document(
        self, *, model: ModelInfo, deployment: Deployment, scenario: Scenario
    ) -> ResultDocument:
        document = make_document(
            model=model,
            deployment=deployment,
            scenario=scenario,
            result=self.result,
            started_at=self.started_at,
            interrupted=self.interrupted,
            extra=self.extra(),
        )
        if any(point.server is not None for point in document.points):
            document.schema_revision = SCHEMA_REVISION  # server series are revision-2 content
        return document


def prompt_check(check: LengthCheck) -> dict[str, Any]:
    return {
        "counter": check.counter,
        "checked": check.checked,
        "missed": check.missed,
        "tolerance_tokens": check.tolerance,
    }


def check_lengths(setup: LoadSetup) -> LengthCheck:
    """The verification pass: every planned prompt counted before any is measured. Missed
    lengths refuse the run unless the caller allows them (the points are then marked)."""
    check = verify_lengths(
        setup.workload.build(setup.plan.prompts_to_verify()), setup.counter, setup.overhead
    )
    if check.missed and not setup.allow_length_mismatch:
        raise LengthMismatch(f"{check.message()}: the run would not match its scenario")
    return check


def open_scraper(cfg: EndpointConfig, options: ScrapeOptions) -> Scraper | None:
    """A scraper for the endpoint's /metrics, or None when off or when nothing answers there
    in the Prometheus text format (the run then says so in environment.extra)."""
    if not options.enabled:
        return None
    headers = metrics_headers(cfg)
    url = options.url or metrics_url(cfg.root)
    if not asyncio.run(probe(url, headers)):
        return None
    return Scraper(url, options.interval_s, headers)


def metrics_headers(cfg: EndpointConfig) -> dict[str, str]:
    return {"Authorization": f"Bearer {cfg.api_key}"} if cfg.api_key else {}


async def scraped[T](scraper: Scraper | None, measure: Coroutine[Any, Any, T]) -> T:
    """`measure` with the server's /metrics scraped beside it."""
    if scraper is None:
        return await measure
    async with scraping(scraper):
        return await measure


def attach_server_metrics(
    cfg: EndpointConfig, scraper: Scraper | None, result: SweepResult, options: ScrapeOptions
) -> Any:
    """Each point's slice of the server's series; what the document's extra should say."""
    if not options.enabled:
        return "off"
    url = options.url or metrics_url(cfg.root)
    if scraper is None:
        return f"not available at {url}"
    for point, timings in zip(result.points, result.timings, strict=True):
        window = point_window(timings)
        if window is not None:
            point.server = scraper.window(*window)
        if point.server is not None and point.speculative_acceptance is None:
            # Per-request draft counts are exact per point; the counters are the fallback.
            point.speculative_acceptance = server_acceptance(point.server)
    return {"url": url, "engine": scraper.engine, "missed": scraper.errors}


def mark_length_mismatch(result: SweepResult, check: LengthCheck) -> str | None:
    """Why the measured prompts do not match the scenario, by the server's own counts; None
    when they do. A point without server counts takes the verification pass's rate."""
    problems = []
    for point in result.points:
        if point.prompt_length_mismatch_rate is None and check.missed:
            point.prompt_length_mismatch_rate = check.rate
        rate = point.prompt_length_mismatch_rate
        if rate:
            problems.append(f"{point.label}: {rate:.0%} of prompts")
    if not problems:
        return None
    return (
        f"prompts missed their input length by more than ±{LENGTH_TOLERANCE} token(s) "
        f"({', '.join(problems)})"
    )


def measure_load(
    setup: LoadSetup,
    *,
    drive: Callable[[Coroutine[Any, Any, Any]], bool],
    progress: ProgressCallback | None = None,
    on_phase: Callable[[str], None] | None = None,
) -> LoadMeasured:
    """The one load run. `drive` runs the sweep coroutine to its end and says whether it was
    interrupted (the levels that finished are kept). Raises LengthMismatch before measuring
    when the planned prompts miss their lengths and that is not allowed."""
    phase = on_phase or (lambda _text: None)
    phase("verifying prompt lengths")
    check = check_lengths(setup)
    phase("probing the server's /metrics")
    scraper = open_scraper(setup.cfg, setup.scrape)
    phase("measuring")
    started_at = datetime.now(UTC)
    result = SweepResult()
    sweep = run_sweep(
        setup.cfg,
        setup.workload,
        setup.plan,
        result=result,
        progress=progress,
        count_tokens=setup.counter.count,
    )
    interrupted = drive(scraped(scraper, sweep))
    server_metrics = attach_server_metrics(setup.cfg, scraper, result, setup.scrape)
    mismatched = mark_length_mismatch(result, check)
    return LoadMeasured(
        setup, result, scraper, started_at, check, interrupted, server_metrics, mismatched
    )


def measure_member(
    setup: LoadSetup,
    *,
    member: int,
    members: int,
    start_at_ns: int,
    drive: Callable[[Coroutine[Any, Any, Any]], bool],
) -> tuple[LoadMeasured, MemberRun]:
    """Share `member` of `members` of the run, measured as `measure_load` measures a whole
    one: prompts verified first, the points whose server-counted prompts missed their length
    marked. Member 0 alone scrapes /metrics: every member loads the same endpoint, whose
    counters are one series, and the merge (members.merge_parts) takes member 0's slices."""
    check = check_lengths(setup)
    options = setup.scrape if member == 0 else ScrapeOptions(enabled=False)
    scraper = open_scraper(setup.cfg, options)
    started_at = datetime.now(UTC)
    ran: list[MemberRun] = []

    async def share() -> None:
        ran.append(
            await run_member(
                setup.cfg,
                setup.workload,
                setup.plan,
                member=member,
                members=members,
                start_at_ns=start_at_ns,
                count_tokens=setup.counter.count,
            )
        )

    interrupted = drive(scraped(scraper, share()))
    if not ran:
        raise RuntimeError(f"member {member} of {members} ended before its share ran")
    run = ran[0]
    server_metrics = attach_server_metrics(setup.cfg, scraper, run.result, options)
    mismatched = mark_length_mismatch(run.result, check)
    measured = LoadMeasured(
        setup, run.result, scraper, started_at, check, interrupted, server_metrics, mismatched
    )
    return measured, run
