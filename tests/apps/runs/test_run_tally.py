"""The run tally (RunTally), kept by a PostgreSQL trigger, counts exactly the runs there are."""

import json

import pytest
from django.db import connection
from django.db.models import Count, Q

from apps.accounts.models import Organization
from apps.leaderboard import selectors as board
from apps.runs.models import Run, RunTally
from apps.runs.services import run_ingest, run_set_public
from tests import factories

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="the tally's trigger is PostgreSQL's own"
    ),
]


def counted_from_runs() -> set[tuple]:
    rows = Run.objects.values(
        "deployment_id", "scenario_id", "org_id", "is_public", "provenance"
    ).annotate(ranked=Q(best_point__isnull=False, rules_passed=True), runs=Count("id"))
    return {tuple(row.values()) for row in rows}


def tallied() -> set[tuple]:
    return set(
        RunTally.objects.values_list(
            "deployment_id", "scenario_id", "org_id", "is_public", "provenance", "ranked", "runs"
        )
    )


def ingest(org=None, **facts) -> Run:
    document = factories.document(**facts)
    return run_ingest(document=json.dumps(document).encode(), org=org).run


def test_the_tally_follows_every_kind_of_write_to_the_runs():
    org = Organization.objects.create(name="Acme", slug="acme")
    first = ingest()
    ingest(accelerator="B200")
    private = ingest(org=org, accelerator="B200")
    ingest(preset="1k-1k", provenance="simulated")
    assert tallied() == counted_from_runs()
    assert sum(runs for *_, runs in tallied()) == 4

    run_set_public(run=private, public=False, actor="test")
    Run.objects.filter(pk=first.pk).update(best_point=None)  # a bulk write, no model save
    assert tallied() == counted_from_runs()
    # The rules' outcome is part of the key: a recheck that flips it moves the run.
    Run.objects.filter(pk=private.pk).update(rules_passed=not private.rules_passed)
    assert tallied() == counted_from_runs()

    Run.objects.filter(pk=first.pk).delete()
    assert tallied() == counted_from_runs()
    assert not RunTally.objects.filter(runs__lte=0).exists()


def test_an_unchanged_key_writes_no_tally_row():
    run = ingest()
    before = list(RunTally.objects.values_list("id", "runs"))
    run.source_citation = "cited again"
    run.save()  # every column rewritten, none of the tally's key changed
    assert list(RunTally.objects.values_list("id", "runs")) == before


def test_the_widest_views_read_from_the_tally_agree_with_the_runs():
    for accelerator in ("MI355X", "B200", "H200"):
        ingest(accelerator=accelerator, preset="1k-1k")
    for accelerator in ("MI355X", "B200"):
        ingest(accelerator=accelerator)
        ingest(accelerator=accelerator)
    ingest(accelerator="MI300X", preset="8k-1k", provenance="simulated")
    # The widest view ranks nothing: the board opens on the view with most ranked hardware.
    Run.objects.filter(scenario__slug="1k-1k").update(rules_passed=False)
    Run.objects.filter(scenario__slug="seed-20k-1k-60").update(rules_passed=True)
    ranked = Q(best_point__isnull=False, rules_passed=True)
    spans = (
        Run.objects.filter(is_public=True, scenario__isnull=False)
        .exclude(provenance="simulated")
        .values("deployment__model__name", "scenario__slug")
        .annotate(
            ranked=Count("deployment__accelerator", filter=ranked, distinct=True),
            accelerators=Count("deployment__accelerator", distinct=True),
            runs=Count("id"),
        )
        .order_by("-ranked", "-accelerators", "-runs")
    )
    expected = [(row["deployment__model__name"], row["scenario__slug"]) for row in spans]
    assert board.widest_views() == expected == [("GLM 5.2", "seed-20k-1k-60"), ("GLM 5.2", "1k-1k")]
