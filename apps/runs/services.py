"""Writes for runs: the one ingestion path every result document goes through."""

import functools
import gc
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from django.core.cache import cache
from django.db import IntegrityError, connection, transaction
from django.db.models import QuerySet
from django.utils import timezone

from apps.accounts.models import ApiToken, Organization
from apps.accounts.services import audit_record
from apps.catalog.models import PublishedFigure
from apps.catalog.reference import published_documents
from apps.catalog.services import (
    deployment_upsert,
    presets_ensure,
    reference_accelerators_load,
    scenario_resolve,
)
from apps.runs import batches, partitions, pipeline, summary
from apps.runs.lean import LeanDocument
from apps.runs.models import REQUEST_RECORD_FIELDS, Point, RecordArchive, RequestRecord, Run
from apps.runs.signals import job_claimed, run_stored
from workers import audit as row_audit
from workers import figures, result_facts
from workers import results as doc

BULK_BATCH = 5_000
# Each retry follows a lost unique-constraint race; every race needs a new catalog row, and a
# document creates at most a model, engine, accelerator, deployment and scenario.
INGEST_ATTEMPTS = 6


@dataclass(frozen=True)
class IngestResult:
    run: Run
    created: bool


class IdempotencyConflict(Exception):
    """The key was already used by another organization: never reveal or reuse its run."""


class JobBindingRefused(Exception):
    """A document claims to be a scheduled job's (it came with a job secret) but is not that
    job's: another key, another organization, or a secret the job never had. Nothing stored."""


def _origin(
    parsed: doc.ResultDocument, org: Organization | None, job_secret: str | None
) -> tuple[str, str]:
    """(origin, origin_host) of a document, as the service can check it.

    Only a document that comes back with its job's secret is "scheduled"; everything a token
    posts without one is self-reported, whatever its provenance claims."""
    if job_secret is not None:
        answers = job_claimed.send(
            sender=Run, idempotency_key=parsed.idempotency_key, org=org, job_secret=job_secret
        )
        host = next((host for _, host in answers if host), None)
        if host is None:
            raise JobBindingRefused(parsed.idempotency_key)
        return Run.Origin.SCHEDULED, host
    if parsed.provenance == Run.Provenance.IMPORTED:
        return Run.Origin.IMPORTED, ""
    if parsed.provenance == Run.Provenance.PUBLISHED:
        return Run.Origin.PUBLISHED, ""
    return Run.Origin.SUBMITTED, ""


def _checked(
    document: doc.ResultDocument | dict[str, Any] | str | bytes,
    org: Organization | None,
    job_secret: str | None,
) -> tuple[doc.ResultDocument, pipeline.Prepared | None, tuple[str, str], list[dict[str, Any]]]:
    """The document parsed, the fast path's preparation of it (None where it has none), its
    origin and its row audit's reasons; a refused binding or audit raises, records checked."""
    prepared: pipeline.Prepared | None = None
    if isinstance(document, doc.ResultDocument):
        parsed = document
    else:
        with _gc_paused():
            prepared = _prepare(document)
            # Records as slotted rows, not models: memory near the document's size (lean.py).
            parsed = prepared.document if prepared else doc.parse_document(document, LeanDocument)
    try:
        origin = _origin(parsed, org, job_secret)
    except JobBindingRefused:
        _records_checked(document, prepared)
        raise
    try:
        audit_reasons = audited(parsed, origin[0])
    except doc.DocumentError:
        _records_checked(document, prepared)
        raise
    return parsed, prepared, origin, audit_reasons


def run_ingest(
    *,
    document: doc.ResultDocument | dict[str, Any] | str | bytes,
    org: Organization | None,
    is_public: bool = True,
    submitted_by: ApiToken | None = None,
    job_secret: str | None = None,
) -> IngestResult:
    """Validate and store a result document in one transaction, or store nothing.

    The same idempotency key twice returns the first run and stores nothing new.
    Raises DocumentError (with JSON paths) for invalid input, JobBindingRefused when a job
    secret comes with a document that is not that job's.
    """
    parsed, prepared, origin, audit_reasons = _checked(document, org, job_secret)
    attempt = 0
    while True:
        try:
            replay = _replay(parsed.idempotency_key, org)
        except IdempotencyConflict:
            _records_checked(document, prepared)
            raise
        if replay is not None:
            _records_checked(document, prepared)
            return replay
        try:
            with transaction.atomic():
                run = _store(
                    parsed,
                    org=org,
                    is_public=is_public,
                    submitted_by=submitted_by,
                    origin=origin,
                    prepared=prepared,
                    audit_reasons=audit_reasons,
                )
                transaction.on_commit(runs_version_bump)
        except pipeline.Rejected:
            # Rolled back, nothing stored: a record the fast path cannot vouch for. The general
            # path names the document's errors (DocumentError), or stores it if it is valid.
            prepared = None
            # Only the fast path rejects, and it reads the document as sent, never a parsed one.
            assert not isinstance(document, doc.ResultDocument)
            with _gc_paused():
                parsed = doc.parse_document(document, LeanDocument)
            continue
        except IntegrityError:
            # A concurrent submission won a race on a unique row: the same document (the
            # replay above answers), or a catalog row both created (a new deployment,
            # accelerator or scenario). Once the winner has committed, a retry finds its row.
            attempt += 1
            if attempt == INGEST_ATTEMPTS:
                raise
            continue
        batch = batches.current()
        if batch is not None:
            batch.remember(parsed, org, run)  # its savepoint released
        return IngestResult(run=run, created=True)


# Origins whose documents are stored with their audit's reasons (flagged, never ranked by
# default): a source's published rows are kept as the source states them, contradictions and
# all, so that nothing it said is silently dropped. Every other origin (a token's POST, the
# CLI, a scheduled job) measured the run itself, and a document that contradicts itself is
# refused (422 naming the figures): its measurer can send it again, right.
FLAGGED_ORIGINS = frozenset({Run.Origin.IMPORTED, Run.Origin.PUBLISHED})


def audited(parsed: doc.ResultDocument, origin: str) -> list[dict[str, Any]]:
    """The row audit's reasons (workers/audit.py) for a document of `origin`, as stored;
    raises DocumentError naming every reason's figures where the origin is refused."""
    reasons = row_audit.audit(parsed)
    if reasons and origin not in FLAGGED_ORIGINS:
        raise doc.DocumentError(
            [
                (reason.paths[0], f"{reason.message} [{reason.code}: {', '.join(reason.paths)}]")
                for reason in reasons
            ]
        )
    return [reason.as_json() for reason in reasons]


AUDIT_BATCH = 500


def runs_audit(*, runs: QuerySet[Run] | None = None) -> list[int]:
    """The row audit again over stored runs (all by default), their documents read back as
    stored: each run's audit_reasons and audit_flagged made what the audit says now. A stored
    document that no longer validates (a contract grown stricter since) is flagged with
    every error it has, under "document_invalid", never dropped. Returns the ids of the runs
    whose outcome changed (their board rules need checking again: apps/trust)."""
    changed: list[int] = []
    batch: list[Run] = []
    queryset = (runs if runs is not None else Run.objects.all()).only(
        "id", "document", "origin", "audit_reasons", "audit_flagged"
    )

    def flush() -> None:
        Run.objects.bulk_update(batch, ["audit_reasons", "audit_flagged"], batch_size=AUDIT_BATCH)
        batch.clear()

    for run in queryset.order_by("pk").iterator(chunk_size=AUDIT_BATCH):
        reasons = stored_audit(run.document)
        if reasons != run.audit_reasons or bool(reasons) != run.audit_flagged:
            run.audit_reasons, run.audit_flagged = reasons, bool(reasons)
            batch.append(run)
            changed.append(run.pk)
            if len(batch) == AUDIT_BATCH:
                flush()
    flush()
    if changed:
        transaction.on_commit(runs_version_bump)
    return changed


def stored_audit(document: dict[str, Any]) -> list[dict[str, Any]]:
    """The audit's reasons for a document as a run stores it (without request records)."""
    try:
        parsed: doc.ResultDocument = doc.parse_document(document)
    except doc.DocumentError as exc:
        return [
            {"code": "document_invalid", "paths": [path], "message": message}
            for path, message in exc.errors
        ]
    return [reason.as_json() for reason in row_audit.audit(parsed)]


def _prepare(document: dict[str, Any] | str | bytes) -> pipeline.Prepared | None:
    """The fast path's view of a document's text (apps/runs/pipeline.py), or None where the
    general path takes it: a dict, another database than PostgreSQL, an unusual layout, or
    an invalid document (the general path names every error)."""
    if not isinstance(document, str | bytes) or _copy_layout() is None:
        return None
    try:
        return pipeline.prepare(document)
    except pipeline.Rejected:
        return None


def _records_checked(document: Any, prepared: pipeline.Prepared | None) -> None:
    """Where the fast path answers before its records were checked (a replay, a refused job
    binding), check them first: an invalid document is a DocumentError, as it always was."""
    if prepared is not None:
        with _gc_paused():
            doc.parse_document(document, LeanDocument)


@contextmanager
def _gc_paused():
    """Parsing 100,000 records allocates objects that all survive; the cyclic collector
    would walk them again and again (~25% of parse time) to find nothing to free."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


RUNS_VERSION_KEY = "runs:version"


# Set for the length of one public read (apps.http_cache): its validators, its page-cache key
# and its list-cache key then name one version, read from Redis once instead of up to three
# times.
_pinned_version: ContextVar[int | None] = ContextVar("runs_version_pinned", default=None)


def runs_version() -> int:
    """Changes whenever a run lands; cached pages key on it, so they never show stale data."""
    pinned = _pinned_version.get()
    if pinned is not None:
        return pinned
    return cache.get_or_set(RUNS_VERSION_KEY, 1, timeout=None)


@contextmanager
def runs_version_pinned() -> Iterator[int]:
    """One reading of the runs version for a read that changes nothing (GET, HEAD)."""
    version = cache.get_or_set(RUNS_VERSION_KEY, 1, timeout=None)
    token = _pinned_version.set(version)
    try:
        yield version
    finally:
        _pinned_version.reset(token)


def runs_version_bump() -> None:
    try:
        cache.incr(RUNS_VERSION_KEY)
    except ValueError:  # not set yet (or evicted)
        cache.set(RUNS_VERSION_KEY, 2, timeout=None)


def _replay(key: str, org: Organization | None) -> IngestResult | None:
    existing = Run.objects.filter(idempotency_key=key).first()
    if existing is None:
        return None
    if existing.org_id != (org.pk if org else None):
        raise IdempotencyConflict(key)
    return IngestResult(run=existing, created=False)


def _store(
    parsed: doc.ResultDocument,
    *,
    org: Organization | None,
    is_public: bool,
    submitted_by: ApiToken | None,
    origin: tuple[str, str] = (Run.Origin.SUBMITTED, ""),
    prepared: pipeline.Prepared | None = None,
    audit_reasons: list[dict[str, Any]] | None = None,
) -> Run:
    source = parsed.source or result_facts.Source()
    doc.percentile_methods_fill(parsed)
    document_json = parsed.model_dump(
        mode="json", by_alias=True, exclude_none=True, exclude={"points": {"__all__": {"records"}}}
    )
    known = batches.known(parsed, org)
    run = Run.objects.create(
        idempotency_key=parsed.idempotency_key,
        deployment=known[0] or deployment_upsert(document=parsed),
        scenario=known[1]
        or (scenario_resolve(scenario=parsed.scenario, org=org) if parsed.scenario else None),
        org=org,
        is_public=is_public,
        provenance=parsed.provenance,
        origin=origin[0],
        origin_host=origin[1],
        status=parsed.status,
        source_tool=source.tool or "",
        source_citation=source.citation or "",
        source_url=source.url or "",
        file_sha256=source.file_sha256 or "",
        file_name=source.file_name or "",
        environment=parsed.environment.model_dump(mode="json", exclude_none=True),
        started_at=parsed.environment.started_at,
        finished_at=parsed.environment.finished_at,
        submitted_by=submitted_by,
        document=document_json,
        labels=parsed.labels or {},
        audit_reasons=audit_reasons or [],
        audit_flagged=bool(audit_reasons),
    )
    point_ids = []
    for ordinal, point in enumerate(parsed.points):
        stored = Point.objects.create(run=run, ordinal=ordinal, **_point_columns(point))
        point_ids.append(stored.pk)
        if point.records:
            _records_insert(stored.pk, point.records)
    if prepared is not None:
        _records_copy_pipelined(prepared, point_ids)
    run_stored.send(sender=Run, run=run, document=parsed)
    batch = batches.current()
    if batch is None:
        run_summary_refresh(run=run)
    else:
        batch.unsummarised.append(run.pk)
    batches.settled(run, others=True)
    return run


def run_summary_refresh(*, run: Run) -> None:
    """Choose the run's leaderboard point against its scenario's SLO (again, if it changed)."""
    batches.summary_choose(run, list(run.points.values("id", *summary.FIGURE_FIELDS)))
    run.save(update_fields=list(batches.SUMMARY_FIELDS))


def _point_columns(point: doc.Point) -> dict[str, Any]:
    lat = point.latency_ms
    requests, tokens, tput = point.requests, point.tokens, point.throughput

    def pick(dist: doc.Distribution | None, name: str) -> float | None:
        return getattr(dist, name) if dist is not None else None

    success_rate = point.success_rate
    if requests is not None and requests.total:
        success_rate = requests.succeeded / requests.total
    return {
        "label": point.label or "",
        "concurrency": point.concurrency,
        "request_rate": point.request_rate,
        "window_s": point.window_s,
        "requests_total": requests.total if requests else None,
        "requests_succeeded": requests.succeeded if requests else None,
        "requests_failed": requests.failed if requests else None,
        "success_rate": success_rate,
        "input_tokens": tokens.input if tokens else None,
        "output_tokens": tokens.output if tokens else None,
        "cached_tokens": tokens.cached if tokens else None,
        "token_count_source": tokens.source if tokens else "",
        "requests_per_s": tput.requests_per_s,
        "input_tok_s": tput.input_tok_s,
        "output_tok_s": tput.output_tok_s,
        "total_tok_s": tput.total_tok_s,
        "unlabelled_tok_s": tput.unlabelled_tok_s,
        **{
            spec.column: pick(
                point.interactivity_tok_s_user
                if spec.slot[0] == "interactivity"
                else getattr(lat, spec.slot[0]),
                spec.slot[1],
            )
            for spec in (figures.FIGURES[key] for key in figures.POINT_COLUMNS)
            if spec.slot is not None
        },
        "goodput_rps": point.goodput_rps,
        "prefix_cache_hit_rate": point.prefix_cache_hit_rate,
        "prompt_length_mismatch_rate": point.prompt_length_mismatch_rate,
        "client_bound": point.client_bound,
        "tokens_per_chunk": point.tokens_per_chunk,
        "latency_ms": lat.model_dump(mode="json", exclude_none=True),
        "interactivity": (
            point.interactivity_tok_s_user.model_dump(mode="json", exclude_none=True)
            if point.interactivity_tok_s_user
            else {}
        ),
        "errors": point.errors,
    }


def _record_rows(records: Iterable[doc.RequestRecord]) -> Iterable[tuple]:
    for r in records:
        yield (
            r.i,
            r.t_sched_ms,
            r.t_send_ms,
            r.ttft_ms,
            r.ttfo_ms,
            r.e2el_ms,
            r.tpot_ms,
            r.n_in,
            r.n_out,
            r.cached,
            r.chunks,
            r.status,
            r.http_status,
            r.error or "",
        )


def _record_column_types() -> list[str]:
    """The SQL types of the COPY columns, as the table has them (binary COPY needs exact ones)."""
    fields = [RequestRecord._meta.get_field(name) for name in ("point", *REQUEST_RECORD_FIELDS)]
    return [field.db_type(connection).split("(")[0] for field in fields]


def _records_insert(point_id: int, records: list[doc.RequestRecord]) -> None:
    partitions.records_partitions_ensure(point_ids=[point_id])
    if connection.vendor == "postgresql":
        # COPY is several times faster than multi-row INSERT for tens of thousands of rows.
        table = RequestRecord._meta.db_table
        columns = ", ".join(("point_id", *REQUEST_RECORD_FIELDS))
        # Binary COPY: floats travel as 8 bytes instead of being printed by Python and parsed
        # again by PostgreSQL (about 1.5x faster than text COPY on both sides, bench/ingest.py).
        with (
            connection.cursor() as cursor,
            cursor.copy(f"COPY {table} ({columns}) FROM STDIN (FORMAT BINARY)") as copy,
        ):
            copy.set_types(_record_column_types())
            for row in _record_rows(records):
                copy.write_row((point_id, *row))
        return
    batch: list[RequestRecord] = []
    for row in _record_rows(records):
        batch.append(
            RequestRecord(point_id=point_id, **dict(zip(REQUEST_RECORD_FIELDS, row, strict=True)))
        )
        if len(batch) >= BULK_BATCH:
            RequestRecord.objects.bulk_create(batch)
            batch.clear()
    RequestRecord.objects.bulk_create(batch)


@functools.cache
def _copy_layout() -> pipeline.Layout | None:
    """The COPY columns as the fast path's encoder writes them, or None where it cannot (not
    PostgreSQL, or a column type it has no binary form for)."""
    if connection.vendor != "postgresql":
        return None
    types = tuple(_record_column_types())
    layout = pipeline.Layout(names=("point", *REQUEST_RECORD_FIELDS), types=types)
    return layout if pipeline.layout_supported(layout) else None


def _records_copy_pipelined(prepared: pipeline.Prepared, point_ids: list[int]) -> None:
    """Every point's records in one binary COPY, checked and encoded chunk by chunk while
    psycopg's writer thread sends the previous chunk (pipeline.py). Raises pipeline.Rejected,
    the COPY aborted, at the first record the fast path cannot vouch for."""
    from psycopg.copy import QueuedLibpqWriter

    layout = _copy_layout()
    assert layout is not None
    partitions.records_partitions_ensure(point_ids=point_ids)
    table = RequestRecord._meta.db_table
    columns = ", ".join(("point_id", *REQUEST_RECORD_FIELDS))
    with (
        _gc_paused(),
        connection.cursor() as cursor,
        # Django's cursor does not pass a writer on: psycopg's own, its errors translated.
        connection.wrap_database_errors,
        cursor.cursor.copy(
            f"COPY {table} ({columns}) FROM STDIN (FORMAT BINARY)",
            writer=QueuedLibpqWriter(cursor.cursor),
        ) as copy,
    ):
        pipeline.copy_records(prepared, point_ids, layout, copy.write)


def run_records_attach(*, run: Run, document: doc.ResultDocument) -> int:
    """Add a document's per-request records to the run it replays, where that run has none.

    The same measurement imported first without its records and then with them is one run
    (one idempotency key); the second import brings only the records. Returns how many
    records were added (0 when the run already had them or the document has none).
    """
    added = 0
    with transaction.atomic():
        stored = list(Point.objects.select_for_update().filter(run=run).order_by("ordinal"))
        # An archived run has its records, in its file (apps/runs/archive.py): none to add.
        if len(stored) != len(document.points) or RecordArchive.objects.filter(run=run).exists():
            return 0
        for point, incoming in zip(stored, document.points, strict=True):
            if incoming.records and not RequestRecord.objects.filter(point=point).exists():
                _records_insert(point.pk, incoming.records)
                added += len(incoming.records)
        if added:
            run_summary_refresh(run=run)
            batches.settled(run, others=False)
            transaction.on_commit(runs_version_bump)
    return added


def reference_load(*, data: dict[str, Any]) -> dict[str, int]:
    """Load the shipped reference data; running it again changes nothing."""
    with transaction.atomic():
        presets_ensure()
        accelerators = reference_accelerators_load()
        for result in data["results"]:
            PublishedFigure.objects.update_or_create(
                key=result["id"],
                defaults={
                    "source_key": result["source"],
                    "citation": data["sources"][result["source"]],
                    "payload": result,
                },
            )
        created = sum(
            run_ingest(document=document, org=None).created
            for document in published_documents(data)
        )
    return {
        "accelerators": accelerators,
        "figures": len(data["results"]),
        "runs_created": created,
    }


def run_set_public(*, run: Run, public: bool, actor: str) -> Run:
    """Publish a run to the public board or take it back, recording who and when. The
    caller checks the role (apps.accounts.scoping.require_role, admin)."""
    if run.is_public == public:
        return run
    run.is_public = public
    run.visibility_changed_by = actor[:300]
    run.visibility_changed_at = timezone.now()
    run.save(update_fields=["is_public", "visibility_changed_by", "visibility_changed_at"])
    # What the board's rules may read changes with visibility (apps/trust/services.py).
    batches.settled(run, others=True)
    audit_record(
        org=run.org,
        actor=actor,
        action="run.published" if public else "run.unpublished",
        target=f"run {run.pk}",
    )
    # Cached public pages key on the runs version: a run that appears or disappears there
    # must change it, as a landing run does.
    transaction.on_commit(runs_version_bump)
    return run
