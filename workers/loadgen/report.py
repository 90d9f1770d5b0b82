"""How a finished bench run is reported: the document written to --out with its server metrics,
the summary on stderr, and the optional submit to an inferboard server.
"""

from __future__ import annotations

import argparse
import os
import sys
from datetime import datetime
from typing import Any

from workers.client import InferboardClient
from workers.loadgen import gate
from workers.loadgen.cli_args import CliError
from workers.loadgen.client import EndpointConfig
from workers.loadgen.measure import ScrapeOptions, attach_server_metrics
from workers.loadgen.output import make_document, write_outputs
from workers.loadgen.runner import SweepResult
from workers.loadgen.scrape import Scraper
from workers.result_facts import Deployment, ModelInfo, Scenario
from workers.results import SCHEMA_REVISION, Point, ResultDocument
from workers.submit import ServerError, ServerRefused


def submit(document: ResultDocument, url: str, token: str | None) -> int:
    """POST the document to the server's runs API; retries keep the idempotency key."""
    if not token:
        raise CliError("--submit needs --token (or env INFERBOARD_TOKEN)")
    try:
        return InferboardClient(url, token).submit(document)
    except (ServerRefused, ServerError) as exc:
        raise CliError(f"--submit: {exc}") from None


def _attach_server_metrics(
    args: argparse.Namespace, cfg: EndpointConfig, scraper: Scraper | None, result: SweepResult
) -> dict[str, Any]:
    """Each point's slice of the server's series; what the document's extra should say."""
    options = ScrapeOptions(not args.no_scrape, args.metrics_url, args.scrape_interval)
    return {"server_metrics": attach_server_metrics(cfg, scraper, result, options)}


def write_document(
    args: argparse.Namespace,
    cfg: EndpointConfig,
    scraper: Scraper | None,
    result: SweepResult,
    *,
    deployment: Deployment,
    scenario: Scenario,
    started_at: datetime,
    interrupted: bool = False,
    revision: bool = True,
    server_metrics: Any = None,
    **extra: Any,
) -> ResultDocument:
    """Every run path ends here: the finished levels as a document, written to --out with its
    request records beside it, and summarized on stderr. `extra` goes to environment.extra;
    `server_metrics`, when given, says the scrape was attached already (measure.measure_load).
    `revision` marks revision-2 content; server metrics make a document revision 2 anyway."""
    if args.no_records:
        for point in result.points:
            point.records = None
    document = make_document(
        model=ModelInfo(name=args.model, family=args.model_family),
        deployment=deployment,
        scenario=scenario,
        result=result,
        started_at=started_at,
        interrupted=interrupted,
        extra={
            **(
                {"server_metrics": server_metrics}
                if server_metrics is not None
                else _attach_server_metrics(args, cfg, scraper, result)
            ),
            **extra,
        },
    )
    if revision or any(point.server is not None for point in document.points):
        document.schema_revision = SCHEMA_REVISION
    document.labels = gate.labels(args)
    jsonl = write_outputs(document, result, args.out)
    print(f"wrote {args.out} and {jsonl}", file=sys.stderr)
    _summary(document)
    return document


def submit_if_asked(args: argparse.Namespace, document: ResultDocument) -> None:
    if args.submit:
        token = args.token or os.environ.get("INFERBOARD_TOKEN")
        run_id = submit(document, args.submit, token)
        print(f"submitted as run {run_id} (key {document.idempotency_key})", file=sys.stderr)


def _summary(document: ResultDocument) -> None:
    def fmt(value: float | None, digits: int) -> str:
        return "-" if value is None else f"{value:.{digits}f}"

    def per_gpu(value: float | None) -> float | None:
        return None if value is None else value / document.deployment.gpus

    for point in document.points:
        lat = point.latency_ms
        counts = point.requests
        hit = point.prefix_cache_hit_rate
        print(
            f"{point.label:>12}  ok {counts.succeeded if counts else '?'}"
            f"/{counts.total if counts else '?'}  "
            f"out {fmt(point.throughput.output_tok_s, 1)} tok/s "
            f"({fmt(per_gpu(point.throughput.output_tok_s), 1)}/GPU)  "
            f"TTFT p50 {fmt(lat.ttft.p50 if lat.ttft else None, 1)} ms  "
            f"TPOT p50 {fmt(lat.tpot.p50 if lat.tpot else None, 2)} ms  "
            f"cache hit {'not reported' if hit is None else f'{hit:.1%}'}" + _marks(point),
            file=sys.stderr,
        )


def _marks(point: Point) -> str:
    """Why a point cannot stand for its scenario, loudly, at the end of its summary line."""
    marks = []
    if point.prompt_length_mismatch_rate:
        marks.append(f"LENGTH MISMATCH {point.prompt_length_mismatch_rate:.0%}")
    if point.client_bound and point.client is not None:
        lag = point.client.loop_lag_p99_ms
        marks.append(
            f"CLIENT-BOUND cpu {point.client.cpu_utilization:.0%}"
            + (f", loop lag p99 {lag:.1f} ms" if lag is not None else "")
        )
    return "".join(f"  [{m}]" for m in marks)
