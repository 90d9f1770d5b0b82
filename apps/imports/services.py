"""Writes for imports: a peer tool's file -> result documents -> the one ingestion path.

The importer (workers.importers, pure) does the reading; every document it yields goes
through apps.runs.services.run_ingest. A file that yields many documents (InferenceX eval
records) is stored in one transaction: all of its runs, or none.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from django.db import transaction

from apps.accounts.models import ApiToken, Organization
from apps.runs.models import Run
from apps.runs.services import IngestResult, run_ingest, run_records_attach
from workers.importers import Facts, import_file, sniff
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
    format_name = format_name or sniff(data, filename)
    documents = import_file(
        data,
        filename,
        facts=facts,
        format_name=format_name,
        companions=companions,
        namespace=f"org-{org.pk}" if org else "",
    )
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
