"""Reads for runs. Visibility is decided here, once: public runs, plus the caller's own."""

from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

from django.db import connection
from django.db.models import Exists, OuterRef, Q, QuerySet

from apps.accounts.models import Organization
from apps.accounts.scoping import visible_to
from apps.catalog.models import Deployment, Scenario
from apps.runs import archive, summary
from apps.runs.models import (
    REQUEST_RECORD_FIELDS,
    Point,
    RecordArchive,
    RequestRecord,
    Run,
    RunTally,
    level_name,
)


@dataclass(frozen=True)
class RunFilters:
    model: str | None = None
    accelerator: str | None = None
    engine: str | None = None
    quantization: str | None = None
    scenario: str | None = None
    provenance: str | None = None
    deployment: str | None = None  # fingerprint, or the deployment's ID
    origin: str | None = None


def visible_through(relation: str, *, org: Organization | None) -> Q:
    """The runs_visible rule for rows reached through `relation` (e.g. "run" on accuracy
    results), as conditions on the join they already make rather than a second subquery
    over runs (`run__in=runs_visible(...)`)."""
    return visible_to(org, via=f"{relation}__")


def runs_visible(*, org: Organization | None) -> QuerySet[Run]:
    visible = visible_to(org)
    # Lists never load the stored document or environment: one large run (a 64 MiB
    # document) would otherwise slow every page that lists runs. Detail reads them alone.
    return Run.objects.filter(visible).defer("document", "environment")


def tallies_visible(*, org: Organization | None) -> QuerySet[RunTally]:
    """The run counts (RunTally) of the runs the caller may see, by the same rule as
    runs_visible. PostgreSQL only: elsewhere nothing keeps the tally."""
    return RunTally.objects.filter(visible_to(org))


def run_list(*, org: Organization | None, filters: RunFilters) -> QuerySet[Run]:
    return runs_filtered(org=org, filters=filters).select_related(
        "deployment__model", "deployment__accelerator", "deployment__engine", "scenario"
    )


def runs_filtered(*, org: Organization | None, filters: RunFilters) -> QuerySet[Run]:
    runs = _on_runs(runs_visible(org=org), deployment_lookups(filters))
    if filters.scenario:
        # As a subquery, not a join, for the reason _on_runs gives.
        runs = runs.filter(scenario__in=Scenario.objects.filter(slug=filters.scenario))
    if filters.provenance:
        runs = runs.filter(provenance=filters.provenance)
    if filters.origin:
        runs = runs.filter(origin=filters.origin)
    return runs


def deployment_lookups(
    filters: RunFilters,
    *,
    accelerators: Sequence[str] = (),
    engines: Sequence[str] = (),
    quantizations: Sequence[str] = (),
    servings: Sequence[str] = (),
) -> dict[str, object]:
    """The deployment facts a run list filters on, as lookups on Deployment: the runs filters
    apply them through `deployment__`, and the board to the deployments it probes one by one."""
    lookups: dict[str, object] = {}
    if filters.model:
        lookups["model__name__iexact"] = filters.model
    if filters.accelerator:
        lookups["accelerator__sku__iexact"] = filters.accelerator
    if filters.engine:
        lookups["engine__name__iexact"] = filters.engine
    if filters.quantization:
        lookups["quant_weights__iexact"] = filters.quantization
    if filters.deployment:
        # Short digit strings are IDs (a fingerprint is 64 hex digits); no overflowing int.
        if filters.deployment.isdigit() and len(filters.deployment) < 10:
            lookups["pk"] = int(filters.deployment)
        else:
            lookups["fingerprint"] = filters.deployment.lower()
    if accelerators:
        lookups["accelerator__sku__in"] = list(accelerators)
    if engines:
        lookups["engine__name__in"] = list(engines)
    if quantizations:
        lookups["quant_weights__in"] = list(quantizations)
    if servings and set(servings) != set(SERVINGS):
        lookups["disaggregated"] = "disaggregated" in servings
    return lookups


def _on_runs(runs: QuerySet[Run], lookups: dict[str, object]) -> QuerySet[Run]:
    """`runs` whose deployment matches `lookups`, as one `deployment_id IN (...)` rather than
    joins: inside the sweep's per-deployment probes (apps/runs/sweeps.py) a join to the
    deployment made PostgreSQL sort every run of the deployment instead of reading the first
    entry of runs_run_sweep_idx, a cost that grew with each deployment's history."""
    if not lookups:
        return runs
    return runs.filter(deployment__in=Deployment.objects.filter(**lookups))


# Columns a run list shows, read as plain rows: no model instances, no JSON columns decoded.
SUMMARY_COLUMNS = {
    "id": "id",
    "provenance": "provenance",
    "origin": "origin",
    "origin_host": "origin_host",
    "rules_passed": "rules_passed",
    "status": "status",
    "is_public": "is_public",
    "model": "deployment__model__name",
    "accelerator": "deployment__accelerator__sku",
    "gpus": "deployment__gpus",
    "nodes": "deployment__nodes",
    "engine": "deployment__engine__name",
    "engine_version": "deployment__engine_version",
    "quantization": "deployment__quant_weights",
    "parallelism": "deployment__parallelism_label",
    "speculative": "deployment__spec_method",
    "scenario": "scenario__slug",
    "deployment_fingerprint": "deployment__fingerprint",
    "source_citation": "source_citation",
    "created_at": "created_at",
}


def run_summaries(
    *, org: Organization | None, filters: RunFilters, offset: int, limit: int
) -> tuple[int, list[dict]]:
    """(how many runs match, one page of them as summary rows)."""
    runs = runs_filtered(org=org, filters=filters)
    return runs.count(), _summary_rows(runs[offset : offset + limit])


def run_summary(*, run: Run) -> dict:
    """One run's summary row: the list's row for it, field for field."""
    return _summary_rows(Run.objects.filter(pk=run.pk))[0]


def _summary_rows(runs: QuerySet[Run]) -> list[dict]:
    # The one serializer of a run's summary, for the list and the detail alike.
    rows = []
    for row in runs.values(*SUMMARY_COLUMNS.values(), "best_meets_slo", "rules_failed"):
        out = {name: row[column] for name, column in SUMMARY_COLUMNS.items()}
        out["url"] = f"/api/v1/runs/{row['id']}"
        out["slo_verdict"] = summary.STATUS_NAMES.get(row["best_meets_slo"])
        out["rules_failed"] = row["rules_failed"]
        rows.append(out)
    return rows


def run_get(*, org: Organization | None, run_id: int) -> Run | None:
    """The run if the caller may see it; None otherwise (callers answer 404 either way)."""
    return (
        run_list(org=org, filters=RunFilters())
        .prefetch_related("points", "accuracy_results")
        .filter(pk=run_id)
        .first()
    )


def run_deployment_facts(*, run: Run) -> dict:
    """The document's `deployment` object, read from the database without the rest of it."""
    facts = Run.objects.filter(pk=run.pk).values_list("document__deployment", flat=True).first()
    return facts or {}


def run_points(*, run: Run) -> QuerySet[Point]:
    return run.points.order_by("ordinal")


def run_record_count(*, run: Run) -> int:
    stored = RecordArchive.objects.filter(run_id=run.pk).first()
    if stored is not None:
        return stored.records
    point_ids = list(run.points.values_list("pk", flat=True))  # see point_record_rows
    return RequestRecord.objects.filter(point_id__in=point_ids).count()


def point_record_rows(
    *, run: Run, columns: Sequence[str], ordinals: Collection[int] | None = None
) -> Iterator[tuple]:
    """(point ordinal, *columns) of the run's request records (of the points `ordinals`, or
    all), in point and request order: from the table, or from the run's Parquet file once
    retention archived them (apps/runs/archive.py). Every reader of records comes here, so
    an archived run's page, exports and comparisons read what they read before."""
    stored = RecordArchive.objects.filter(run_id=run.pk).first()
    if stored is not None:
        yield from archive.archived_rows(stored, columns=columns, ordinals=ordinals)
        return
    points = run.points.all()
    if ordinals is not None:
        points = points.filter(ordinal__in=ordinals)
    # A point's records by its id, not through a join to the point: the table is partitioned
    # by point id (apps/runs/partitions.py), and only an id known when the query is planned
    # lets PostgreSQL leave the other partitions out. Through the join it planned every one,
    # about 2 ms a query with 100 partitions (the run page at 100,000 runs, bench/pages.py).
    for point_id, ordinal in points.order_by("ordinal").values_list("pk", "ordinal"):
        # id last: two records of one point with the same `i` come out in one order every
        # time. Read in chunks (a server-side cursor on PostgreSQL), never all held: a
        # 300,000-record run's bundle or export streams through here.
        rows = RequestRecord.objects.filter(point_id=point_id).order_by("i", "id")
        for row in rows.values_list(*columns).iterator(chunk_size=5000):
            yield (ordinal, *row)


def points_record_rows(
    *, points: Collection[Point], columns: Sequence[str]
) -> dict[int, list[tuple]]:
    """Point id -> (*columns) of its request records in request order, for many points at
    once: point_record_rows's rows, with the table's read in one query rather than one a
    point (an answer's repeats are hundreds of points). A run that retention archived is
    read from its file, as point_record_rows reads it."""
    archived = set(
        RecordArchive.objects.filter(run_id__in={p.run_id for p in points}).values_list(
            "run_id", flat=True
        )
    )
    found: dict[int, list[tuple]] = {}
    for point in points:
        if point.run_id in archived:
            found[point.pk] = [
                row[1:]
                for row in point_record_rows(
                    run=point.run, columns=columns, ordinals=[point.ordinal]
                )
            ]
    stored = [p.pk for p in points if p.run_id not in archived]
    rows = RequestRecord.objects.filter(point_id__in=stored).order_by("point_id", "i", "id")
    for point_id, *values in rows.values_list("point_id", *columns).iterator(chunk_size=5000):
        found.setdefault(point_id, []).append(tuple(values))
    return found


def run_records(*, run: Run, point: Point | None = None):
    """Request records as dicts without empty fields, in order."""
    names = ("point__ordinal", *REQUEST_RECORD_FIELDS)
    ordinals = None if point is None else [point.ordinal]
    for row in point_record_rows(run=run, columns=REQUEST_RECORD_FIELDS, ordinals=ordinals):
        yield {k: v for k, v in zip(names, row, strict=True) if v not in (None, "")}


def run_document(*, run: Run) -> dict:
    """The run's result document as submitted, per-request records included."""
    document = dict(run.document)
    points = [dict(p) for p in document.get("points", [])]
    by_ordinal: dict[int, list[dict]] = {}
    for record in run_records(run=run):
        by_ordinal.setdefault(record.pop("point__ordinal"), []).append(record)
    for ordinal, point in enumerate(points):
        if ordinal in by_ordinal:
            point["records"] = by_ordinal[ordinal]
    document["points"] = points
    return document


def runs_narrowed(
    runs: QuerySet[Run],
    *,
    accelerators: Sequence[str] = (),
    engines: Sequence[str] = (),
    quantizations: Sequence[str] = (),
    servings: Sequence[str] = (),
    since: date | None = None,
    until: date | None = None,
) -> QuerySet[Run]:
    """Runs whose deployment is any of the picked accelerators, engines, quantizations and
    servings ("aggregated", "disaggregated"; each list empty: no filter), added within
    [since, until] (dates, inclusive)."""
    runs = _on_runs(
        runs,
        deployment_lookups(
            RunFilters(),
            accelerators=accelerators,
            engines=engines,
            quantizations=quantizations,
            servings=servings,
        ),
    )
    if since:
        runs = runs.filter(created_at__date__gte=since)
    if until:
        runs = runs.filter(created_at__date__lte=until)
    return runs


# How a deployment serves prefill and decode: one pool, or a pool for each.
SERVINGS = {"aggregated": False, "disaggregated": True}


def deployments_with_runs(*, org: Organization | None) -> QuerySet[Deployment]:
    """Deployments with at least one run the caller may see. On PostgreSQL from the run
    tally (a few rows per deployment, however many runs); elsewhere one index probe per
    deployment (its first visible run ends it)."""
    if connection.vendor == "postgresql":
        counted = tallies_visible(org=org).filter(deployment_id=OuterRef("pk"), runs__gt=0)
        return Deployment.objects.filter(Exists(counted))
    visible = runs_visible(org=org).filter(deployment_id=OuterRef("pk"))
    return Deployment.objects.filter(Exists(visible))


def run_spans(
    *, org: Organization | None, deployment_ids: Collection[int] | None = None
) -> QuerySet:
    """Rows with the (deployment, scenario) pairs of the runs the caller may see (of
    `deployment_ids`, when given; scenario stated). On PostgreSQL the run tally's (a few rows
    per deployment and scenario, however many runs); elsewhere the runs themselves."""
    if connection.vendor == "postgresql":
        rows: QuerySet = tallies_visible(org=org).filter(runs__gt=0)
    else:
        rows = runs_visible(org=org)
    if deployment_ids is not None:
        rows = rows.filter(deployment_id__in=deployment_ids)
    return rows.filter(scenario__isnull=False).order_by()


def scenario_ids_with_runs(
    *, org: Organization | None, deployment_ids: Collection[int] | None = None
) -> QuerySet:
    """The ids of the scenarios with a run the caller may see (run_spans), as a subquery."""
    return run_spans(org=org, deployment_ids=deployment_ids).values("scenario_id")


def run_facets(*, org: Organization | None) -> dict[str, list[str]]:
    """The values a visible run's deployment takes, per filterable dimension."""
    rows = deployments_with_runs(org=org).values_list(
        "accelerator__sku", "engine__name", "quant_weights", "disaggregated"
    )
    accelerators, engines, quantizations, split = set(), set(), set(), set()
    for accelerator, engine, quantization, disaggregated in rows:
        accelerators.add(accelerator)
        engines.add(engine)
        quantizations.add(quantization)
        split.add(disaggregated)
    return {
        "accelerator": sorted(v for v in accelerators if v),
        "engine": sorted(v for v in engines if v),
        "quantization": sorted(v for v in quantizations if v),
        "serving": [name for name, flag in SERVINGS.items() if flag in split],
    }


def _server_series(s: dict[str, Any]) -> dict[str, Any]:
    """One series the server reported at a level: its range, or its rise for a counter."""
    values = s.get("values") or [0.0]
    return {
        "name": s["name"],
        "source": s["source"],
        "readings": len(values),
        "low": min(values),
        "high": max(values),
        "rise": values[-1] - values[0] if s.get("kind") == "counter" else None,
        "kind": s.get("kind"),
        # The readings themselves, ms from the level's start, for the timeline.
        "t_ms": s.get("t_ms") or [],
        "values": s.get("values") or [],
    }


def run_sessions_and_server(*, run: Run) -> list[dict]:
    """Per point, what schema revision 2 adds: per-turn TTFT against context, sessions, the
    server's own series (range, or rise for a counter) and speculative acceptance; with a
    flag where the server queued or preempted at a closed-loop level the client held steady.
    Points with none of these are left out."""
    shown = []
    # Only the points of the stored document: a run's document may be large elsewhere.
    points = Run.objects.filter(pk=run.pk).values_list("document__points", flat=True).first()
    for ordinal, point in enumerate(points or []):
        turns = point.get("turns") or []
        server = point.get("server") or {}
        acceptance = point.get("speculative_acceptance")
        if not (turns or server or acceptance):
            continue
        series = [_server_series(s) for s in server.get("series", [])]
        flags = []
        if point.get("concurrency") and point.get("request_rate") is None:
            if server.get("queued_max"):
                flags.append(f"server queued up to {server['queued_max']:g} requests")
            if server.get("preemptions"):
                flags.append(f"server preempted {server['preemptions']:g} times")
        shown.append(
            {
                "ordinal": ordinal,
                # Named as the points table names a level, so a heading is never blank.
                "label": level_name(
                    point.get("label") or "",
                    point.get("concurrency"),
                    point.get("request_rate"),
                    ordinal,
                ),
                "turns": [
                    {
                        **turn,
                        "ttft_p50": (turn.get("ttft_ms") or {}).get("p50"),
                        "hit_percent": None
                        if turn.get("prefix_cache_hit_rate") is None
                        else 100 * turn["prefix_cache_hit_rate"],
                    }
                    for turn in turns
                ],
                "sessions": point.get("sessions"),
                "series": series,
                "engine": server.get("engine"),
                "acceptance": acceptance,
                "flags": flags,
            }
        )
    return shown


# The row audit's flagged runs (workers/audit.py, apps/runs/services.py) ---------------------


@dataclass(frozen=True)
class AuditFilters:
    source: str | None = None  # the run's origin (imported, published) or its source tool
    accelerator: str | None = None  # SKU, case-insensitive
    reason: str | None = None  # a reason code (workers.audit.CODES)


def flagged_runs(*, org: Organization | None, filters: AuditFilters) -> QuerySet[Run]:
    """The visible runs the row audit flagged, newest first, narrowed by `filters`."""
    runs = runs_visible(org=org).filter(audit_flagged=True)
    if filters.source:
        runs = runs.filter(Q(origin=filters.source.lower()) | Q(source_tool__iexact=filters.source))
    if filters.accelerator:
        runs = runs.filter(deployment__accelerator__sku__iexact=filters.accelerator)
    if filters.reason:
        if connection.vendor == "postgresql":
            runs = runs.filter(audit_reasons__contains=[{"code": filters.reason}])
        else:  # SQLite has no JSON containment: read the reasons (the demo's few runs)
            ids = [
                pk
                for pk, reasons in runs.values_list("pk", "audit_reasons")
                if any(r.get("code") == filters.reason for r in reasons)
            ]
            runs = runs.filter(pk__in=ids)
    return runs.select_related("deployment__accelerator", "deployment__model").order_by(
        "-created_at", "-id"
    )


def audit_counts(runs: QuerySet[Run]) -> dict[str, dict[str, int]]:
    """How many of `runs` each reason code flags (a run counts once per code) and how many
    each accelerator has, most first."""
    by_reason: dict[str, int] = {}
    by_accelerator: dict[str, int] = {}
    for reasons, sku in runs.values_list("audit_reasons", "deployment__accelerator__sku"):
        for code in dict.fromkeys(r.get("code", "") for r in reasons):
            by_reason[code] = by_reason.get(code, 0) + 1
        by_accelerator[sku] = by_accelerator.get(sku, 0) + 1

    def ranked(counts: dict[str, int]) -> dict[str, int]:
        return dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))

    return {"by_reason": ranked(by_reason), "by_accelerator": ranked(by_accelerator)}


def audit_row(run: Run) -> dict[str, object]:
    """One flagged run as the audit's list and page show it."""
    return {
        "run_id": run.pk,
        "model": run.deployment.model.name,
        "accelerator": run.deployment.accelerator.sku,
        "gpus": run.deployment.gpus,
        "origin": run.origin,
        "source_tool": run.source_tool,
        "reasons": run.audit_reasons,
    }
