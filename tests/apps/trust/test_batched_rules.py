"""A batch import checks the board's rules once for all its runs (runs_settle_batched): the
outcomes it stores are those checking each run as it lands stores, on a slice of the shipped
InferenceX snapshot that brings accuracy results after the runs they judge."""

from __future__ import annotations

import json

import pytest
from django.db import transaction

from apps.catalog.reference import INFERENCEX_DIR
from apps.imports.services import inferencex_store
from apps.imports.sources import Responses
from apps.runs.models import Run
from apps.trust.services import runs_rules_refresh

pytestmark = pytest.mark.django_db


def snapshot(name: str) -> list[dict]:
    return json.loads((INFERENCEX_DIR / name).read_bytes())


def the_slice() -> tuple[Responses, Responses]:
    """Two syncs: DeepSeek-R1's MI355X and B200 rows at 1k/1k and, disaggregated, at 8k/1k
    (two of those deployments have evaluations), then the evaluations of DeepSeek-R1 on both
    (quantized: they judge the first sync's runs) and of Qwen 3.5, measured at BF16
    as well as quantized (the reference precision's score is the others' floor)."""
    rows = [
        r
        for r in snapshot("benchmarks.json")
        if r["hardware"] in ("mi355x", "b200")
        and ((r["isl"], r["osl"]) == (1024, 1024) or r["disagg"] and r["isl"] == 8192)
    ]
    evaluations = [
        e
        for e in snapshot("evaluations.json")
        if e["hardware"] in ("mi355x", "b200") and e["model"] == "dsr1" or e["model"] == "qwen3.5"
    ]
    return Responses("test: rows", rows, [], []), Responses("test: evals", [], [], evaluations)


def outcomes() -> dict[str, tuple]:
    """Each run's stored rules and leaderboard point, by key (pks differ between loads)."""
    fields = ("rules_passed", "rules_failed", "best_point__ordinal", "best_tput_per_gpu")
    return {key: tuple(rest) for key, *rest in Run.objects.values_list("idempotency_key", *fields)}


class Undo(Exception):
    pass


def loaded(*, rules_batched: bool) -> tuple[dict[str, tuple], dict[str, tuple]]:
    """The slice stored (two syncs): its outcomes, then those `manage.py board_rules_check`
    stores after it; then all of it rolled back."""
    found: list[dict[str, tuple]] = []
    with pytest.raises(Undo), transaction.atomic():
        for responses in the_slice():
            inferencex_store(responses=responses, rules_batched=rules_batched)
        found.append(outcomes())
        runs_rules_refresh(runs=Run.objects.all())
        found.append(outcomes())
        raise Undo
    return found[0], found[1]


def test_it_stores_the_outcomes_checking_each_run_as_it_lands_stores():
    each, checked_again = loaded(rules_batched=False)
    batched, _ = loaded(rules_batched=True)
    assert set(batched) == set(each) and len(each) > 50

    # The slice tests what it should: evaluations that land after the runs they judge.
    failed = {rule["rule"] for _, rules, *_ in batched.values() for rule in rules}
    assert "accuracy_for_quantization" in failed
    judged_later = [
        key
        for key, (_, rules, *_) in batched.items()
        if not key.startswith("inferencex-eval:")
        and "accuracy_for_quantization" not in {r["rule"] for r in rules}
    ]
    assert judged_later, "no benchmark run gained its accuracy result from the second sync"

    # Checking each run as it lands leaves a run as its last check found it; a quantized
    # evaluation with no load points is not checked again when its model's reference-precision
    # score lands later (run_rules_after_ingest checks the runs that rank). The batch checks
    # every run against all of the data, as board_rules_check does: the same outcome for every
    # run the per-run path kept current, and the checked-again outcome for those it did not.
    assert batched == checked_again
    stale = {key for key in each if each[key] != checked_again[key]}
    assert {key for key in each if each[key] != batched[key]} == stale
    for key in stale:
        passed, rules, best_point, _ = each[key]
        assert key.startswith("inferencex-eval:") and best_point is None and not passed
        added = [r for r in batched[key][1] if r not in rules]
        assert [r["rule"] for r in added] == ["accuracy_for_quantization"], key
    assert stale, "the slice no longer has a run the per-run path leaves stale"
