"""How a load level is named (apps.runs.models.level_name), the one rule every page uses."""

import pytest

from apps.runs.models import level_name
from apps.runs.services import run_ingest
from tests.factories import document, point


@pytest.mark.parametrize(
    ("label", "concurrency", "rate", "named"),
    [
        ("c=16", 16, None, "c=16"),  # an importer's own label is not repeated
        ("", 16, None, "c=16"),
        ("chat-heavy", 16, None, "chat-heavy c=16"),
        ("", None, 2.5, "2.5 req/s"),
        ("", 64, 8.0, "c=64 8 req/s"),
        ("poisson 8 req/s", None, 8.0, "poisson 8 req/s"),
        ("", None, None, "level 3"),
    ],
)
def test_a_level_is_named_once_by_its_label_concurrency_and_rate(label, concurrency, rate, named):
    assert level_name(label, concurrency, rate, 2) == named


@pytest.mark.django_db
def test_the_run_page_names_a_labelled_level_once(client):
    levels = [dict(point(16, output_tok_s=900, ttft_p99_ms=900, interactivity=60), label="c=16")]
    run = run_ingest(document=document(points=levels), org=None).run
    page = client.get(f"/runs/{run.pk}/").content.decode()
    assert "c=16 c=16" not in page
    assert "<td>c=16" in page
