"""Our own `inferboard.run/v1` documents (an exported run), imported as they are.

This is what makes the export/import round trip work through the same commands: the
document already carries its provenance, facts and idempotency key, so it is validated
and passed through unchanged. Facts given alongside are refused rather than merged, since
they could silently rewrite a stored run's deployment.
"""

from __future__ import annotations

from workers.importers.common import ImportInput, decode_text
from workers.importers.errors import ImportFailure
from workers.importers.registry import Format, Preview, register
from workers.results import SCHEMA_ID, DocumentError, ResultDocument, parse_document

TOOL = f"inferboard ({SCHEMA_ID})"


def _sniff(seen: Preview) -> bool:
    row = seen.value
    return isinstance(row, dict) and row.get("schema") == SCHEMA_ID


def parse(job: ImportInput) -> list[ResultDocument]:
    if job.facts.as_tree() or job.companions:
        raise ImportFailure(
            f"{job.main.name}: an inferboard document states its own facts and records; "
            "import it without --deployment, fact flags or --records"
        )
    try:
        return [parse_document(decode_text(job.main))]
    except DocumentError as exc:
        raise ImportFailure(f"{job.main.name}: not a valid {SCHEMA_ID} document: {exc}") from None


register(
    Format(
        name="inferboard",
        tool=TOOL,
        summary=f"an exported {SCHEMA_ID} result document, passed through unchanged",
        sniff=_sniff,
        parse=parse,
    )
)
