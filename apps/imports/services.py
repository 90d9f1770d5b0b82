"""Writes for imports: a peer tool's file -> result documents -> the one ingestion path.

The importer (workers.importers, pure) does the reading; every document it yields goes
through apps.runs.services.run_ingest. A file that yields many documents (InferenceX eval
records) is stored in one transaction: all of its runs, or none.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import nullcontext
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from apps.accounts.models import ApiToken, Organization
from apps.imports.models import SyncRun
from apps.imports.sources import Responses, SourceError, read_api, read_folder
from apps.runs.batches import runs_settle_batched
from apps.runs.models import Run
from apps.runs.services import IngestResult, run_ingest, run_records_attach
from workers.importers import Facts, ImportFailure, import_file, inferencex_api, sniff
from workers.results import ResultDocument


@dataclass(frozen=True)
class ImportOutcome:
    format_name: str
    documents: list[ResultDocument]
    results: list[IngestResult]

    records_added: int = 0

    @property
    def created(self) -> int:
        return sum(1 for r in self.results if r.created)


def import_ingest(
    *,
    data: bytes,
    filename: str,
    facts: Facts | None = None,
    format_name: str | None = None,
    companions: Sequence[tuple[bytes, str]] = (),
    org: Organization | None,
    is_public: bool = True,
    submitted_by: ApiToken | None = None,
) -> ImportOutcome:
    """Import and store; raises ImportFailure (bad file or facts) before touching the DB.

    Re-importing the same bytes stores nothing new: each document's idempotency key is the
    file's hash within the organization's namespace, and run_ingest returns the first run
    for a key it has seen; per-request records brought by a later import are added to it.
    """
    try:
        format_name = format_name or sniff(data, filename)
        documents = import_file(
            data,
            filename,
            facts=facts,
            format_name=format_name,
            companions=companions,
            namespace=f"org-{org.pk}" if org else "",
        )
    except RecursionError:
        # Format sniffing walks the parsed file; JSON nested past Python's stack is no result.
        message = "the file nests JSON too deeply to be a result file"
        raise ImportFailure(f"{filename}: {message}") from None
    added = 0
    with transaction.atomic():
        results = [
            _earlier_import(doc, org)
            or run_ingest(document=doc, org=org, is_public=is_public, submitted_by=submitted_by)
            for doc in documents
        ]
        for doc, result in zip(documents, results, strict=True):
            if not result.created:
                added += run_records_attach(run=result.run, document=doc)
    return ImportOutcome(
        format_name=format_name, documents=documents, results=results, records_added=added
    )


def _earlier_import(document: ResultDocument, org: Organization | None) -> IngestResult | None:
    """The organization's run of this file stored before keys carried the organization.

    Keys used to be the file hash alone ('sha256:<hex>[:<index>]'); an organization
    re-importing a file it imported then gets that run back, not a second one.
    """
    suffix = f":org-{org.pk}" if org else ""
    if not suffix or not document.idempotency_key.endswith(suffix):
        return None
    legacy = document.idempotency_key.removesuffix(suffix)
    earlier = Run.objects.filter(idempotency_key=legacy, org=org).first()
    return IngestResult(run=earlier, created=False) if earlier else None


# --- InferenceX: the shipped snapshot and the sync ----------------------------------------


@dataclass(frozen=True)
class InferencexOutcome:
    rows_read: int
    rows_new: int
    runs_created: int
    accuracy_runs_created: int


def _known_inferencex() -> tuple[frozenset[str], frozenset[str]]:
    """(benchmark row keys, evaluation run keys) already stored, as public runs."""
    runs = Run.objects.filter(org__isnull=True, source_tool=inferencex_api.TOOL)
    rows: set[str] = set()
    for keys in runs.values_list("environment__extra__inferencex__rows", flat=True):
        rows.update(keys or ())
    evaluations = runs.filter(idempotency_key__startswith="inferencex-eval:")
    return frozenset(rows), frozenset(evaluations.values_list("idempotency_key", flat=True))


def inferencex_store(*, responses: Responses, rules_batched: bool = True) -> InferencexOutcome:
    """Store what is new in InferenceX's responses as public imported runs, or nothing.

    Every row is read and checked before anything is written (ImportFailure names the row
    that is wrong); rows already stored are skipped, so a second call stores nothing. The
    board's rules are checked once for all the new runs at the end (runs_settle_batched);
    `rules_batched=False` checks each run as it lands instead, the same outcomes more slowly
    (kept for bench/loadreference.py and the test that compares the two)."""
    source = inferencex_api.Source(description=responses.description)
    latest = inferencex_api.benchmark_rows(responses.benchmarks, "benchmarks")
    history = inferencex_api.benchmark_rows(responses.history, "benchmarks/history")
    rows = inferencex_api.merged(latest, history)
    known_rows, known_evaluations = _known_inferencex()
    runs = inferencex_api.document_rows(rows, source=source, known=known_rows)
    accuracy = inferencex_api.evaluation_documents(
        responses.evaluations, source=source, where="evaluations", known=known_evaluations
    )
    with transaction.atomic(), runs_settle_batched() if rules_batched else nullcontext():
        created = sum(run_ingest(document=d, org=None).created for d in runs)
        scored = sum(run_ingest(document=d, org=None).created for d in accuracy)
    return InferencexOutcome(
        rows_read=len(rows),
        rows_new=sum(len(d.points) for d in runs),
        runs_created=created,
        accuracy_runs_created=scored,
    )


def inferencex_sync(*, location: str, trigger: str = "scheduler") -> SyncRun:
    """Read InferenceX's API (a URL) or a folder of its responses and store what is new.

    The sync's record says what it did; a source that cannot be read, or holds rows that do
    not check, fails it with the reason and stores no run."""
    sync = SyncRun.objects.create(source=location[:2000], trigger=trigger)
    try:
        if location.startswith(("http://", "https://")):
            responses = read_api(
                location,
                models=settings.INFERENCEX_MODELS,
                read_on=timezone.now().date().isoformat(),
            )
        else:
            responses = read_folder(Path(location))
        outcome = inferencex_store(responses=responses)
    except (SourceError, ImportFailure) as exc:
        sync.status, sync.error = SyncRun.Status.FAILED, str(exc)[:5000]
    else:
        sync.status = SyncRun.Status.SUCCEEDED
        sync.rows_read, sync.rows_new = outcome.rows_read, outcome.rows_new
        sync.runs_created = outcome.runs_created
        sync.accuracy_runs_created = outcome.accuracy_runs_created
    sync.finished_at = timezone.now()
    sync.save()
    return sync


def inferencex_sync_due(*, now: datetime | None = None) -> SyncRun | None:
    """The scheduler's tick: sync when a source is configured and the last sync is older
    than INFERENCEX_SYNC_EVERY_S; None when nothing was due."""
    if not settings.INFERENCEX_API_URL:
        return None
    now = now or timezone.now()
    last = SyncRun.objects.filter(source=settings.INFERENCEX_API_URL[:2000]).first()
    if last and now - last.started_at < timedelta(seconds=settings.INFERENCEX_SYNC_EVERY_S):
        return None
    return inferencex_sync(location=settings.INFERENCEX_API_URL)
