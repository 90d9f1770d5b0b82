"""POST /api/v1/imports: upload a peer tool's result file (multipart), get imported runs.

Mounted by the project at prefix "/imports". Same behaviour as `manage.py importresults`:
the format is sniffed unless `format` is given; facts the file does not state come from an
optional `deployment` YAML upload; `records` (repeatable) are companion per-request files.
201 when at least one run is new, 200 when the file was imported before (nothing stored),
422 naming the problem when the file or facts cannot become a run (nothing stored).
"""

from __future__ import annotations

from django.http import HttpRequest
from ninja import File, Form, Router, Schema, Status, UploadedFile

from apps.accounts.auth import BearerToken
from apps.accounts.services import audit_record
from apps.api_errors import UPLOAD_ERRORS
from apps.imports.services import import_ingest
from workers.importers import load_facts_yaml


class ImportedRun(Schema):
    id: int
    created: bool
    url: str
    idempotency_key: str


class ImportOut(Schema):
    format: str
    created: int
    records_added: int
    runs: list[ImportedRun]


router = Router(tags=["imports"])


@router.post(
    "",
    auth=BearerToken(),
    response={200: ImportOut, 201: ImportOut, **UPLOAD_ERRORS},
    summary="Import a peer tool's result file",
)
def import_results(
    request: HttpRequest,
    file: File[UploadedFile],
    format: Form[str | None] = None,
    deployment: File[UploadedFile | None] = None,
    records: File[list[UploadedFile] | None] = None,
    private: bool = False,
):
    """Multipart fields: `file` (required), `format`, `deployment` (YAML facts),
    `records` (repeatable). Query `private=true` keeps the runs to your organization."""
    token = request.auth
    # Its refusals (ImportFailure: the file or its facts) are answered by apps.api.api.
    facts = load_facts_yaml(deployment.read(), "deployment") if deployment else None
    outcome = import_ingest(
        data=file.read(),
        filename=file.name or "upload",
        facts=facts,
        format_name=format or None,
        companions=[(r.read(), r.name or "records") for r in records or []],
        org=token.org,
        is_public=not private,
        submitted_by=token,
    )
    if outcome.created:
        audit_record(
            org=token.org,
            actor=f"token {token.prefix}",
            action="file.imported",
            target=(file.name or "upload")[:200],
            runs=[r.run.pk for r in outcome.results if r.created],
        )
    body = {
        "format": outcome.format_name,
        "created": outcome.created,
        "records_added": outcome.records_added,
        "runs": [
            {
                "id": r.run.pk,
                "created": r.created,
                "url": f"/api/v1/runs/{r.run.pk}",
                "idempotency_key": r.run.idempotency_key,
            }
            for r in outcome.results
        ],
    }
    return Status(201 if outcome.created else 200, body)
