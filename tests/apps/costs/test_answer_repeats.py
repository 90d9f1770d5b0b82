"""The repeats an answer's interval resamples (Side.level_runs): every other run of the chosen
configuration at the chosen level, read as rows (apps/costs/answer_selectors.level_repeats),
each as the answer reads that run's point itself, less the latency metrics nobody resamples."""

from __future__ import annotations

from dataclasses import replace

import pytest

from apps.costs.answer import Facts
from apps.costs.answer_selectors import Asked, ask, gpu_hour_prices, measured_of
from apps.costs.formulas import TokenKind
from apps.runs.models import Point, Run
from tests.factories import document, point
from tests.reviews import ingest_reviewed

pytestmark = pytest.mark.django_db


def _run(org, accelerator: str, key: str, figures: dict[int, float], *, bound: int = 0) -> Run:
    """A run with a point per concurrency (`figures`: output tok/s); the point at `bound`
    was client-bound."""
    points = []
    for concurrency, figure in figures.items():
        data = point(concurrency, output_tok_s=figure, ttft_p99_ms=1000, interactivity=60)
        data["client_bound"] = concurrency == bound
        points.append(data)
    doc = document(accelerator=accelerator, points=points)
    doc["idempotency_key"] = f"repeats-{accelerator}-{key}"
    return ingest_reviewed(document=doc, org=org, is_public=True).run


def _asked(basis: TokenKind) -> Asked:
    """MI355X against B200 on the runs these tests store, with no interactivity floor."""
    return Asked(
        model="GLM 5.2",
        scenario="seed-20k-1k-60",
        a="MI355X",
        b="B200",
        facts=Facts(),
        bounds={"interactivity_min": "none"},
        basis=basis,
    )


@pytest.mark.parametrize("basis", [TokenKind.OUTPUT, TokenKind.TOTAL])
def test_it_reads_each_repeat_at_the_level_as_the_answer_reads_its_run(org, basis):
    repeats = [
        _run(org, "MI355X", "1", {4: 900, 16: 2300}),
        _run(org, "MI355X", "2", {4: 950, 16: 2500}),
        _run(org, "MI355X", "bound", {4: 990, 16: 2900}, bound=16),
        _run(org, "MI355X", "no-level", {4: 980}),
    ]
    latest = _run(org, "MI355X", "3", {4: 1000, 16: 2400})
    _run(org, "B200", "1", {4: 1200, 16: 3100})
    asked = _asked(basis)

    side = ask(asked, org=None, with_swing=False).answer.a

    chosen, *others = side.level_runs
    assert (chosen.run_id, chosen.concurrency) == (latest.pk, 16)
    # The client-bound point and the run without the level are not repeats.
    assert [p.run_id for p in others] == [repeats[0].pk, repeats[1].pk]
    prices = gpu_hour_prices(org=None, tier=asked.tier, own={})
    for repeat in others:
        own = Run.objects.filter(pk=repeat.run_id)
        level = Point.objects.filter(concurrency=16)
        [reading] = measured_of(own, basis=basis, prices=prices, current={}, points=level)
        assert repeat == replace(reading, metrics={})
        assert repeat.tok_s_per_gpu and repeat.point_id == reading.point_id


def test_it_takes_in_the_newest_repeats_up_to_its_cap(org, monkeypatch):
    from apps.costs import answer_selectors

    monkeypatch.setattr(answer_selectors, "MAX_REPEATS", 3)
    older = [_run(org, "MI355X", f"old-{i}", {4: 900 + i, 16: 2300 + i}) for i in range(4)]
    latest = _run(org, "MI355X", "latest", {4: 1000, 16: 2400})
    _run(org, "B200", "1", {4: 1200, 16: 3100})
    asked = _asked(TokenKind.OUTPUT)

    chosen, *others = ask(asked, org=None, with_swing=False).answer.a.level_runs

    assert chosen.run_id == latest.pk
    # The chosen run and the two newest others: the oldest two are left out.
    assert sorted(p.run_id for p in others) == [older[2].pk, older[3].pk]
