"""The dated reference price sets (apps/costs/reference.py): every tier price and all-in kW
belongs to a named, dated set with its source; on a date each figure comes from the newest
set in force that states it. The figures below were read from the sources themselves
(apps/catalog/reference/accelerators.SOURCES.md). No database."""

from datetime import date

import pytest

from apps.costs.formulas import CostInputError
from apps.costs.reference import price_set, price_sets, reference_book
from workers.accelerator_specs import SHIPPED_FILE


def test_every_set_is_named_dated_and_sourced():
    sets = price_sets()
    assert [s.name for s in sets] == [
        "semianalysis-2025-08",
        "inferencex-power-2026-07-14",
        "semianalysis-2026-07",
        "semianalysis-2026-07-rental",
    ]
    assert [s.in_force_from for s in sets] == sorted(s.in_force_from for s in sets)
    for each in sets:
        assert "SemiAnalysisAI/InferenceX-app" in each.source
        assert "@" in each.source or "pull request #" in each.source
        assert each.usd_per_gpu_hour or each.all_in_kw
    assert "constants.ts @77ca49a" in sets[0].source
    assert "gpu-keys.ts @ae3a240 (pull request #659)" in sets[2].source
    assert (SHIPPED_FILE.parent / "accelerators.SOURCES.md").exists()


def test_the_sets_hold_the_figures_their_sources_publish():
    august, power, july, rental = price_sets()
    hyperscaler = "owning_hyperscaler"
    # constants.ts GPU_SPECS @77ca49a: the August 2025 survey's owning (hyperscaler) tier.
    assert (august.usd_per_gpu_hour[hyperscaler]["B200"], august.all_in_kw["B200"]) == (1.95, 2.17)
    assert (august.usd_per_gpu_hour[hyperscaler]["MI355X"], august.all_in_kw["MI355X"]) == (
        1.48,
        2.65,
    )
    # #578 (2026-07-14) corrected all-in power only.
    assert (power.all_in_kw["B200"], power.all_in_kw["MI355X"]) == (1.71, 2.09)
    assert power.usd_per_gpu_hour == {}
    # gpu-keys.ts @ae3a240 (#659): the July 2026 model's raw outputs, $1.735 and $1.496.
    assert july.usd_per_gpu_hour[hyperscaler]["B200"] == 1.7349236084834354
    assert july.usd_per_gpu_hour[hyperscaler]["MI355X"] == 1.4960710469526235
    # #1071 (2026-09-08): the retail / 3-year-commit rental rates; no neocloud tier.
    assert rental.usd_per_gpu_hour["rental_3yr"]["B200"] == 3.70
    assert rental.usd_per_gpu_hour["rental_3yr"]["MI355X"] == 2.90
    assert "owning_neocloud" not in rental.usd_per_gpu_hour


def test_a_date_or_a_name_chooses_the_set_in_force_and_nothing_else_is_taken():
    assert price_set().name == "semianalysis-2026-07-rental"  # the newest by default
    assert price_set("2026-08-15").name == "semianalysis-2026-07"
    assert price_set(date(2026, 7, 31)).name == "semianalysis-2026-07"
    assert price_set("2026-07-30").name == "inferencex-power-2026-07-14"
    assert price_set("semianalysis-2025-08").in_force_from == date(2025, 8, 1)
    with pytest.raises(CostInputError) as early:
        price_set("2025-07-31")
    assert early.value.field == "prices_as_of"
    assert "no price set was in force on 2025-07-31" in early.value.message
    with pytest.raises(CostInputError) as unknown:
        price_set("next quarter")
    assert "neither a date (YYYY-MM-DD) nor a set" in unknown.value.message


def test_each_figure_comes_from_the_newest_set_in_force_that_states_it():
    # Between the power correction and the July prices: August's prices, corrected power.
    between = reference_book("2026-07-20")
    assert between.price_set.name == "inferencex-power-2026-07-14"
    b200 = between.prices["B200"]
    assert (b200.usd_per_gpu_hour["owning_hyperscaler"], b200.all_in_kw) == (1.95, 1.71)
    assert b200.citations["owning_hyperscaler"].startswith("semianalysis-2025-08:")
    # The newest set states no neocloud tier: the July 2026 set's stands, and says so.
    newest = reference_book().prices["MI355X"]
    assert newest.usd_per_gpu_hour["owning_neocloud"] == 2.089023971578409
    assert newest.citations["owning_neocloud"].startswith("semianalysis-2026-07:")
    assert newest.citations["rental_3yr"].startswith("semianalysis-2026-07-rental:")
    assert (newest.usd_per_gpu_hour["owning_hyperscaler"], newest.all_in_kw) == (1.5, 2.09)
