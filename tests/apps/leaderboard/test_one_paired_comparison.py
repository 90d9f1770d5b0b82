"""/compare/ and /accuracy/compare/ print the same paired interval for the same pair of runs,
clustered by question for repeated items, and both refuse pairs whose protocols differ."""

import re

import pytest

from apps.accuracy.models import AccuracyResult
from tests.factories import document
from tests.reviews import ingest_reviewed

pytestmark = pytest.mark.django_db

GPQA = {"protocol": "gpqa-diamond-cot-v1", "task": "gpqa", "metric": "em_strict"}


def gpqa(pattern: list[bool], protocol_hash: str = "h1") -> dict:
    """40 questions asked 4 times each; `pattern` says which repeats of a question are right."""
    items = [
        {"item_id": f"q{q}:r{r}", "correct": pattern[(q * 4 + r) % len(pattern)]}
        for q in range(40)
        for r in range(4)
    ]
    correct = sum(i["correct"] for i in items)
    return {
        **GPQA,
        "protocol_hash": protocol_hash,
        "n": len(items),
        "correct": correct,
        "score": correct / len(items),
        "items": items,
    }


def interval_of(html: str) -> str:
    (text,) = re.findall(r'class="paired-interval">([^<]+)<', html)
    return text


def test_both_pages_print_the_same_clustered_interval(client, org):
    a = ingest_reviewed(
        document=document(quantization="BF16", accuracy=[gpqa([True] * 7 + [False])]), org=org
    ).run
    b = ingest_reviewed(
        document=document(quantization="MXFP4", accuracy=[gpqa([True] * 5 + [False] * 3)]), org=org
    ).run
    ra, rb = AccuracyResult.objects.get(run=a), AccuracyResult.objects.get(run=b)

    board = client.get(f"/compare/?d={a.deployment_id}&d={b.deployment_id}").content.decode()
    paired = client.get(f"/accuracy/compare/?a={ra.pk}&b={rb.pk}").content.decode()
    api = client.get(f"/api/v1/accuracy/compare?a={ra.pk}&b={rb.pk}").json()

    assert interval_of(board) == interval_of(paired)
    low, high = api["interval_points"]
    assert f"95% CI [{low:+.2f}, {high:+.2f}]" in interval_of(board)
    assert "paired on 160 items" in interval_of(board)


def test_both_pages_refuse_a_pair_whose_protocols_differ(client, org):
    a = ingest_reviewed(
        document=document(quantization="BF16", accuracy=[gpqa([True, False])]), org=org
    ).run
    b = ingest_reviewed(
        document=document(quantization="MXFP4", accuracy=[gpqa([True, False], "h2")]), org=org
    ).run
    ra, rb = AccuracyResult.objects.get(run=a), AccuracyResult.objects.get(run=b)

    board = client.get(f"/compare/?d={a.deployment_id}&d={b.deployment_id}").content.decode()
    paired = client.get(f"/accuracy/compare/?a={ra.pk}&b={rb.pk}").content.decode()
    assert "not compared: protocols differ" in board
    assert "cannot be paired: protocols differ" in paired
    assert 'class="paired-interval"' not in board + paired
