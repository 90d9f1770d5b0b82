"""A claim re-priced (apps/claims/verdicts.py): its verdict under its own date's set, the
newest, each tier, and the date it stopped holding, by the claim checker's one rule. No
database."""

from datetime import date

from apps.claims.verdicts import (
    COST,
    THROUGHPUT,
    LedgerClaim,
    PricedVerdict,
    reckon,
    stopped_holding,
)
from apps.costs.claims import Claim, Comparison, check_claim
from apps.costs.reference import price_sets

# "Up to 40% cheaper": MI355X at 1 / 1.41 of B200's $/Mtok, at $1.48 vs $1.95 (May 2026).
GLM5 = LedgerClaim(
    slug="glm5",
    kind=COST,
    a="MI355X",
    b="B200",
    published_on=date(2026, 5, 20),
    throughput_ratio=(1.48 / 1.95) * 1.41,
    claimed_ratio=1 / 1.41,
    comparison=Comparison.ABOUT,
    basis_tier="owning_hyperscaler",
)


def test_a_claim_holds_at_its_own_dates_prices_and_stops_when_a_set_moves_them():
    reckoning = reckon(GLM5, price_sets())
    assert reckoning.then.price_set == "semianalysis-2025-08"
    assert reckoning.then.holds and round(reckoning.then.cost_ratio, 3) == 0.709
    # The July 2026 set: (1.4961 / 1.7349) / 1.0702 = 0.806, 14% off "about 0.709".
    assert [v.price_set for v in reckoning.timeline] == [
        "semianalysis-2025-08",
        "inferencex-power-2026-07-14",
        "semianalysis-2026-07",
        "semianalysis-2026-07-rental",
    ]
    assert round(reckoning.timeline[2].cost_ratio, 3) == 0.806
    assert reckoning.stopped_holding_on == date(2026, 7, 31)
    assert not reckoning.now.holds and not reckoning.never_held
    # Every verdict is the checker's own.
    now = reckoning.now
    check = check_claim(
        Claim(GLM5.throughput_ratio, now.usd_a, now.usd_b, GLM5.claimed_ratio, Comparison.ABOUT)
    )
    assert (check.cost_ratio, check.holds) == (now.cost_ratio, now.holds)
    # Under the rental tier of the newest set it still holds: 2.90 / 3.70 prices it so.
    rental = next(v for v in reckoning.tiers_now if v.tier == "rental_3yr")
    assert rental.holds and round(rental.cost_ratio, 3) == 0.732


def test_a_claim_that_never_held_has_no_date_it_stopped():
    half = LedgerClaim(
        "half",
        COST,
        "MI355X",
        "B200",
        date(2026, 7, 7),
        0.8,
        0.5,
        Comparison.BELOW,
        "owning_hyperscaler",
    )
    reckoning = reckon(half, price_sets())
    assert reckoning.never_held and reckoning.stopped_holding_on is None


def test_a_throughput_claim_is_not_moved_by_prices():
    claim = LedgerClaim(
        "80", THROUGHPUT, "MI355X", "B200", date(2026, 7, 7), 0.8, 0.8, Comparison.ABOUT, None
    )
    reckoning = reckon(claim, price_sets())
    assert (reckoning.then, reckoning.now, reckoning.timeline) == (None, None, ())


def _v(day: int, holds: bool) -> PricedVerdict:
    return PricedVerdict("s", date(2026, 1, day), "t", 1.0, 1.0, 1.0, holds)


def test_it_stopped_holding_at_the_last_turn_from_holding_to_not():
    assert stopped_holding([_v(1, True), _v(2, False), _v(3, True), _v(4, False)]) == date(
        2026, 1, 4
    )
    assert stopped_holding([_v(1, True), _v(2, False), _v(3, True)]) is None
    assert stopped_holding([]) is None
