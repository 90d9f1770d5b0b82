"""Every real file in tests/fixtures/wild, stored in PostgreSQL: what the database holds is
what the file says (the same checks as tests/workers/importers/test_wild_corpus.py, run on
the stored documents, plus the stored point columns against them)."""

from __future__ import annotations

import pytest

from apps.imports.services import import_ingest
from apps.runs.models import Point, Run
from tests.workers.importers.test_wild_corpus import CHECKS, FILES, REFUSED, WILD, _raw, facts_for
from workers.importers import ImportFailure
from workers.results import parse_document

pytestmark = pytest.mark.django_db

# Point columns and where the document keeps the same number.
COLUMNS = {
    "ttft_p50_ms": ("latency_ms", "ttft", "p50"),
    "ttft_p99_ms": ("latency_ms", "ttft", "p99"),
    "tpot_p50_ms": ("latency_ms", "tpot", "p50"),
    "e2el_p99_ms": ("latency_ms", "e2el", "p99"),
    "output_tok_s": ("throughput", "output_tok_s"),
    "input_tok_s": ("throughput", "input_tok_s"),
    "requests_per_s": ("throughput", "requests_per_s"),
    "concurrency": ("concurrency",),
    "window_s": ("window_s",),
}


def _pick(point, path):
    node = point
    for part in path:
        node = getattr(node, part, None) if node is not None else None
    return node


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(WILD)))
def test_every_wild_file_is_stored_with_the_numbers_it_states(path):
    relative = str(path.relative_to(WILD))
    if relative in REFUSED:
        with pytest.raises(ImportFailure):
            import_ingest(
                data=path.read_bytes(), filename=path.name, facts=facts_for(path), org=None
            )
        assert Run.objects.count() == 0  # nothing half-stored
        return
    outcome = import_ingest(
        data=path.read_bytes(), filename=path.name, facts=facts_for(path), org=None
    )
    runs = [result.run for result in outcome.results]
    assert all(result.created for result in outcome.results)
    stored = [parse_document(Run.objects.get(pk=run.pk).document) for run in runs]
    CHECKS[path.parent.name](stored, _raw(path))  # the stored documents say what the file says
    for run, document in zip(runs, stored, strict=True):
        points = Point.objects.filter(run=run).order_by("ordinal")
        for column_row, point in zip(points, document.points, strict=True):
            for column, where in COLUMNS.items():
                assert getattr(column_row, column) == _pick(point, where), (column, run.pk)
