"""Every importer fixture's stored status says what its request counts say (issue 41): none
succeeded -> failed; some failed -> partial; none failed -> succeeded. The expectation is
written out here, apart from workers.figures.run_status, so the rule is checked, not copied.

The corpus is every file under tests/fixtures (the wild corpus and the peer results); a file
that needs facts gets the wild corpus's facts, or placeholders for what its refusal names.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.workers.importers.test_wild_corpus import _GIVEN_FOR, facts_for
from workers.importers import Facts, ImportFailure, facts_from_arguments, import_file
from workers.importers.common import MissingFacts
from workers.results import ResultDocument

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
CORPUS = sorted(
    p
    for p in FIXTURES.rglob("*")
    if p.is_file() and p.suffix in {".json", ".jsonl", ".txt", ".csv"} and p.name != "SOURCES.md"
)


def _documents(path: Path) -> list[ResultDocument]:
    data = path.read_bytes()
    facts = facts_for(path) if path.is_relative_to(FIXTURES / "wild") else None
    try:
        return import_file(data, path.name, facts=facts or Facts())
    except MissingFacts as refusal:
        given = facts_from_arguments(dict(_GIVEN_FOR[name] for name in refusal.missing))
        return import_file(data, path.name, facts=given)
    except (ImportFailure, ValueError):
        return []  # refused by name: the wild corpus test holds its message


def _expected(doc: ResultDocument) -> str | None:
    counted = [
        p.requests for p in doc.points if p.requests is not None and p.requests.failed is not None
    ]
    if not counted:
        return None  # no point counts its failures: the counts cannot say
    succeeded = sum(c.succeeded for c in counted)
    failed = sum(c.failed or 0 for c in counted)
    if succeeded == 0:
        return "failed"
    return "partial" if failed else "succeeded"


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_it_stores_the_status_the_request_counts_say(path: Path):
    wrong = [
        f"{doc.idempotency_key}: stored {doc.status!r}, counts say {expected!r}"
        for doc in _documents(path)
        if (expected := _expected(doc)) is not None and doc.status != expected
    ]
    assert wrong == []


def test_the_corpus_holds_every_kind_of_status():
    # The check above means something only if the corpus has runs of each kind.
    seen = {_expected(doc) for path in CORPUS for doc in _documents(path)}
    assert {"succeeded", "partial"} <= seen
