"""/costs/'s table as a buyer reads it: a model chosen when none is asked for, engine and
speculative-decoding filters, rows that name both, and the best row of each configuration first
with the rest on demand (a page of 580 KB and 200 rows told nobody which row to read)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

from django.db.models import Count

from apps.accounts.models import Organization
from apps.costs.procurement import DeploymentCurve, Row
from apps.runs.models import Run
from apps.runs.selectors import runs_visible

# `spec=none`: only deployments without speculative decoding.
NO_SPEC = "none"
# `show=all`: every row, a page at a time; otherwise the best row of each configuration.
SHOW_ALL = "all"
PAGE_ROWS = 40


def default_model(*, org: Organization | None) -> str:
    """The model with the most priceable runs the visitor may see (load points, not simulated
    and not failed, as the cost model reads them): where /costs/ opens when no model is asked."""
    found = (
        runs_visible(org=org)
        .exclude(provenance=Run.Provenance.SIMULATED)
        .exclude(status=Run.Status.FAILED)
        .filter(points__isnull=False)
        .values("deployment__model__name")
        .annotate(runs=Count("id", distinct=True))
        .order_by("-runs", "deployment__model__name")
        .first()
    )
    return found["deployment__model__name"] if found else ""


@dataclass(frozen=True, slots=True)
class Served:
    """The facts of a run's deployment the table filters and labels by."""

    engine: str
    spec: str  # the method in lower case ("mtp", "eagle"), or "" for none
    draft_tokens: int | None

    @property
    def spec_label(self) -> str:
        if not self.spec:
            return "no spec decoding"
        drafts = f", {self.draft_tokens} draft tokens" if self.draft_tokens else ""
        return f"spec {self.spec.upper()}{drafts}"


def served_facts(run_ids: Iterable[int]) -> dict[int, Served]:
    """Run id -> its engine and speculative decoding, in one query."""
    rows = Run.objects.filter(pk__in=list(run_ids)).values_list(
        "pk", "deployment__engine__name", "deployment__spec_method", "deployment__spec_draft_tokens"
    )
    return {pk: Served(engine, (spec or "").lower(), drafts) for pk, engine, spec, drafts in rows}


@dataclass(frozen=True, slots=True)
class Filters:
    engine: str = ""
    spec: str = ""  # a method, NO_SPEC, or "" for any
    precision: str = ""  # the weights' precision, or "" for any (the box's question's too)

    def keeps(self, served: Served | None) -> bool:
        if served is None:
            return not (self.engine or self.spec)
        if self.engine and served.engine.lower() != self.engine.lower():
            return False
        if self.spec == NO_SPEC:
            return not served.spec
        return not self.spec or served.spec == self.spec.lower()


def choices(facts: dict[int, Served]) -> dict[str, list[str]]:
    """The engines and speculative methods among the model's rows, for the two filters."""
    return {
        "engines": sorted({s.engine for s in facts.values()}, key=str.lower),
        "specs": sorted({s.spec for s in facts.values() if s.spec}),
    }


def labelled(
    curves: Sequence[DeploymentCurve], facts: dict[int, Served], filters: Filters
) -> list[DeploymentCurve]:
    """The curves the filters keep, each label naming its speculative decoding (the engine is
    in the deployment's own label), so two rows that differ only by MTP read differently."""
    kept = []
    for curve in curves:
        served = facts.get(curve.run_id)
        if not filters.keeps(served):
            continue
        if filters.precision and curve.quantization.lower() != filters.precision.lower():
            continue
        label = f"{curve.label} · {served.spec_label}" if served else curve.label
        kept.append(replace(curve, label=label))
    return kept


def configuration(row: Row, facts: dict[int, Served]) -> tuple[str, ...]:
    """What a buyer would order: accelerator, engine, precision, speculative decoding."""
    served = facts.get(row.curve.run_id)
    return (
        row.curve.accelerator,
        served.engine if served else row.curve.engine,
        row.curve.quantization,
        served.spec if served else "",
    )


@dataclass(frozen=True, slots=True)
class TablePage:
    rows: list[Row]  # the rows shown, in rank order
    total: int  # every row the filters keep
    grouped: bool  # best per configuration (True) or every row, paged (False)
    page: int = 1
    pages: int = 1
    rest: int = 0  # rows the grouped view leaves for "show all"
    # Each priced row's rank in what is shown: 1, 2, 3 … with no gap (a paged view goes on
    # from the pages before it).
    ranks: dict[int, int] = field(default_factory=dict)


def table_page(rows: Sequence[Row], facts: dict[int, Served], *, show: str, page: str) -> TablePage:
    """The best (first-ranked) row of each configuration (the cheapest PAGE_ROWS of them), or
    with `show=all` every row, a page of PAGE_ROWS at a time. `rows` come cheapest first
    (procurement_rows)."""
    if show != SHOW_ALL:
        seen: set[tuple[str, ...]] = set()
        best = []
        for row in rows:
            key = configuration(row, facts)
            if key not in seen:
                seen.add(key)
                best.append(row)
        # At most a page of configurations too (a model in one scenario can have 50).
        best = best[:PAGE_ROWS]
        return TablePage(
            best, len(rows), grouped=True, rest=len(rows) - len(best), ranks=_ranks(best, 1)
        )
    pages = max(1, -(-len(rows) // PAGE_ROWS))
    number = int(page) if page.isdigit() else 1
    number = min(max(number, 1), pages)
    start = (number - 1) * PAGE_ROWS
    shown = list(rows[start : start + PAGE_ROWS])
    first = 1 + sum(row.ok for row in rows[:start])
    return TablePage(
        shown, len(rows), grouped=False, page=number, pages=pages, ranks=_ranks(shown, first)
    )


def _ranks(rows: Sequence[Row], first: int) -> dict[int, int]:
    ranked = [row for row in rows if row.ok]
    return {row.curve.run_id: rank for rank, row in enumerate(ranked, first)}
