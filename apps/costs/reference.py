"""Reference prices: named, dated price sets, and the book they make on a date.

Every reference $/GPU-hr and every all-in kW per GPU belongs to one set, stated on its
accelerator's entry in the ONE accelerators file (`apps/catalog/reference/accelerators.json`,
read through workers/accelerator_specs.py); each set's name, date and source (repository,
path, commit) are listed there once (`accelerators.SOURCES.md` beside it says how each was
read). A set states what its source published
on its date, and may state only some of it (a power correction, one re-priced tier): on a
date, each tier's price of each accelerator comes from the newest set in force that states
it, and so does its power. The newest set is the default everywhere; a page or the API asked
`prices_as_of=<date>` or `=<set name>` prices with the set in force then.

`apps/costs/selectors.price_book` is the one reader pages and the API call: these sets, then
any reference row an operator stored, then an organization's own tiers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from functools import cache
from pathlib import Path
from typing import Any

from apps.costs.formulas import AcceleratorPrices, CostInputError
from apps.frame import TIER_LABELS as TIER_LABELS  # the one spelling of a tier, site-wide
from workers import accelerator_specs

REFERENCE_PRICE_SOURCE = "reference tier"
# The query parameter every money page and the API read a price set from.
PRICES_AS_OF = "prices_as_of"


@dataclass(frozen=True, slots=True)
class PriceSet:
    """One dated set of reference prices and power, as its source published them."""

    name: str
    title: str
    in_force_from: date
    source: str  # "repo path @commit (date)", or the pull request where no commit was read
    usd_per_gpu_hour: Mapping[str, Mapping[str, float]]  # tier -> SKU -> $/GPU-hr
    all_in_kw: Mapping[str, float]  # SKU -> kW
    notes: tuple[str, ...] = ()

    def describe(self) -> str:
        """'semianalysis-2026-07 (SemiAnalysis ... July 2026 ..., in force from 2026-07-31)'."""
        return f"{self.name} ({self.title}, in force from {self.in_force_from.isoformat()})"

    @property
    def citation(self) -> str:
        return f"{self.name}: {self.title}; {self.source}"


def _source_line(source: Mapping[str, object]) -> str:
    where = f"{source['repo']} {source['path']}"
    if source.get("commit"):
        where += f" @{str(source['commit'])[:7]}"
    if source.get("pull_request"):
        where += f" (pull request #{source['pull_request']})"
    return f"{where}, {source['committed']}"


def read_price_sets(data: Mapping[str, Any]) -> tuple[PriceSet, ...]:
    """The sets of an accelerators file's contents, oldest first: each set's prices and power
    gathered from the accelerator entries that state them."""
    sets = []
    for entry in data["price_sets"]:
        usd: dict[str, dict[str, float]] = {}
        kw: dict[str, float] = {}
        for accelerator in data["accelerators"]:
            sku = accelerator["sku"].upper()
            stated = dict(accelerator.get("prices", {}).get(entry["name"], {}))
            if "all_in_kw" in stated:
                kw[sku] = float(stated.pop("all_in_kw"))
            for tier, price in stated.items():
                usd.setdefault(tier, {})[sku] = float(price)
        sets.append(
            PriceSet(
                name=entry["name"],
                title=entry["title"],
                in_force_from=date.fromisoformat(entry["in_force_from"]),
                source=_source_line(entry["source"]),
                usd_per_gpu_hour=usd,
                all_in_kw=kw,
                notes=tuple(entry.get("notes", ())),
            )
        )
    return tuple(sorted(sets, key=lambda s: s.in_force_from))


@cache
def _price_sets(path: Path) -> tuple[PriceSet, ...]:
    return read_price_sets(accelerator_specs.reference_at(path))


def price_sets() -> tuple[PriceSet, ...]:
    """The sets of the accelerators file (read once per file, per process)."""
    return _price_sets(accelerator_specs.accelerators_file())


def price_set(choice: str | date | None = None, sets: Sequence[PriceSet] | None = None) -> PriceSet:
    """The set named `choice`, or the one in force on the date `choice` (YYYY-MM-DD); the
    newest when `choice` is empty. Anything else is a CostInputError naming prices_as_of."""
    known = tuple(sets) if sets is not None else price_sets()
    if not choice:
        return known[-1]
    if isinstance(choice, str):
        text = choice.strip()
        named = next((s for s in known if s.name == text), None)
        if named is not None:
            return named
        try:
            choice = date.fromisoformat(text)
        except ValueError:
            names = ", ".join(s.name for s in known)
            raise CostInputError(
                PRICES_AS_OF, f"{text[:40]!r} is neither a date (YYYY-MM-DD) nor a set ({names})"
            ) from None
    in_force = [s for s in known if s.in_force_from <= choice]
    if not in_force:
        raise CostInputError(
            PRICES_AS_OF,
            f"no price set was in force on {choice.isoformat()} "
            f"(the first, {known[0].name}, from {known[0].in_force_from.isoformat()})",
        )
    return in_force[-1]


@dataclass(frozen=True, slots=True)
class ReferenceBook:
    """The reference prices in force under `price_set`: by SKU, each tier's price and the
    power citing the set that stated it (an older one where the chosen set is silent)."""

    price_set: PriceSet
    prices: dict[str, AcceleratorPrices] = field(default_factory=dict)


def reference_book(
    choice: str | date | None = None, sets: Sequence[PriceSet] | None = None
) -> ReferenceBook:
    """The reference book in force for `choice` (see `price_set`)."""
    known = tuple(sets) if sets is not None else price_sets()
    chosen = price_set(choice, known)
    # Newest first among the sets in force then: the first that states a value gives it.
    in_force = [s for s in reversed(known) if s.in_force_from <= chosen.in_force_from]
    usd: dict[str, dict[str, float]] = {}
    citations: dict[str, dict[str, str]] = {}
    kw: dict[str, float] = {}
    for each in in_force:
        for tier, by_sku in each.usd_per_gpu_hour.items():
            for sku, price in by_sku.items():
                if tier not in usd.setdefault(sku, {}):
                    usd[sku][tier] = price
                    citations.setdefault(sku, {})[tier] = each.citation
        for sku, figure in each.all_in_kw.items():
            kw.setdefault(sku, figure)
    prices = {
        sku: AcceleratorPrices(
            sku=sku,
            usd_per_gpu_hour=usd.get(sku, {}),
            all_in_kw=kw.get(sku),
            sources={tier: REFERENCE_PRICE_SOURCE for tier in usd.get(sku, {})},
            citations=citations.get(sku, {}),
        )
        for sku in sorted(set(usd) | set(kw))
    }
    return ReferenceBook(chosen, prices)
