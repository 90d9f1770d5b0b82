"""The answer against what a visitor might change: the interactivity floor (the swing, with
each crossover solved exactly between measured floors) and each fact filter left to its
default that flips which side is cheaper (docs/methodology.md, "The answer").

Pure functions over the answer's points (apps/costs/answer.py applies the one rule).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from apps.costs.answer import (
    ANY,
    DEFAULT_MAX_GAP,
    NONE,
    Answer,
    Facts,
    Measured,
    Side,
    answer,
    by_accelerator,
    matches,
)
from apps.costs.slo import Metric, Slo, SloBound


@dataclass(frozen=True, slots=True)
class SwingRow:
    floor: float
    a: Side
    b: Side
    tok_ratio: float | None
    usd_ratio: float | None


@dataclass(frozen=True, slots=True)
class Swing:
    rows: tuple[SwingRow, ...]  # the floors shown (every crossover's two floors among them)
    crossover: str  # "MI355X is cheaper at floors up to 45.3 tok/s/user, B200 above it"


def with_floor(slo: Slo, floor: float) -> Slo:
    """`slo` with its interactivity floor set to `floor` (other bounds kept)."""
    bounds = tuple(b for b in slo.bounds if b.metric != Metric.INTERACTIVITY)
    old = next((b for b in slo.bounds if b.metric == Metric.INTERACTIVITY), None)
    percentile = old.percentile if old else "p50"
    floor_bound = SloBound(Metric.INTERACTIVITY, percentile, floor)
    return Slo((floor_bound, *bounds), slo.min_success_rate)


def swing(
    points: Sequence[Measured],
    *,
    a: str,
    b: str,
    facts: Facts,
    slo: Slo,
    limit: int = 40,
    side_of: Callable[[Measured], str] = by_accelerator,
) -> Swing:
    """The measured answer at every interactivity floor where it can change: each matching
    point's own interactivity p50. Between two such floors the set of points meeting the
    floor does not change, so the answer is the one at the upper floor: evaluated at every
    measured floor, each crossover lies exactly just above one of them. At most `limit` rows
    are shown (evenly thinned, both ends and every crossover's floors kept). Interactivity
    floors only; the other bounds of `slo` hold throughout."""
    matching = [p for p in points if p.current and matches(p, facts)]
    floors = sorted({p.interactivity_p50 for p in matching if p.interactivity_p50})
    rows = []
    for floor in floors:
        result = answer(points, a=a, b=b, facts=facts, slo=with_floor(slo, floor), side_of=side_of)
        rows.append(SwingRow(floor, result.a, result.b, result.tok_ratio, result.usd_ratio))
    crossover, kept = _crossover(rows, a, b)
    return Swing(tuple(_thinned(rows, limit, kept)), crossover)


def _leader(row: SwingRow | Answer, a: str, b: str) -> str | None:
    """The cheaper side (lower $/Mtok; higher tok/s/GPU when unpriced), or None."""
    ratio = row.usd_ratio if row.usd_ratio is not None else _inverse(row.tok_ratio)
    if ratio is None or ratio == 1:
        return None
    return a if ratio < 1 else b


def _crossover(rows: Sequence[SwingRow], a: str, b: str) -> tuple[str, set[float]]:
    """Where the cheaper side changes, in words, and the floors either side of each change."""
    leaders = [
        (i, row.floor, leader) for i, row in enumerate(rows) if (leader := _leader(row, a, b))
    ]
    if not leaders:
        return "no floor where both sides have a measured point meeting the SLO", set()
    changes = [(p, c) for p, c in zip(leaders, leaders[1:], strict=False) if p[2] != c[2]]
    if not changes:
        low, high = leaders[0][1], leaders[-1][1]
        text = (
            f"{leaders[0][2]} is cheaper at every floor measured ({low:.4g}-{high:.4g} tok/s/user)"
        )
        return text, set()
    parts, kept = [], set()
    for (_, before, first), (j, after, second) in changes:
        # Floors above rows[j - 1] up to rows[j] all give rows[j]'s answer.
        just_below = rows[j - 1].floor
        kept |= {before, just_below, after}
        if just_below == before:
            parts.append(
                f"{first} is cheaper at floors up to {before:.4g} tok/s/user, {second} above it"
            )
        else:
            parts.append(
                f"{first} is cheaper at floors up to {before:.4g} tok/s/user, {second} above "
                f"{just_below:.4g} (between them a side has no point meeting the SLO)"
            )
    return "; ".join(parts), kept


def _thinned(rows: Sequence[SwingRow], limit: int, kept: set[float]) -> list[SwingRow]:
    if len(rows) <= limit:
        return list(rows)
    step = (len(rows) - 1) / (limit - 1)
    chosen = {round(i * step) for i in range(limit)}
    return [row for i, row in enumerate(rows) if i in chosen or row.floor in kept]


def _inverse(value: float | None) -> float | None:
    return 1 / value if value else None


# --- the fact filters that flip the verdict ------------------------------------------------


def _alternatives(name: str, asked: str) -> tuple[str, ...]:
    """The other values of a fact filter worth trying: the looser or the stricter default."""
    asked = asked.lower()
    if name == "spec":
        return (ANY,) if asked != ANY else (NONE,)
    if name == "serving":
        return ("aggregated",) if asked == ANY else (ANY,)
    if name == "engine":
        return (ANY,) if asked != ANY else ()
    return ()


FLIP_FILTERS = (("spec", "speculative decoding"), ("serving", "serving"), ("engine", "engine"))


def verdict_flips(
    points: Sequence[Measured],
    result: Answer,
    *,
    a: str,
    b: str,
    interpolate: bool = False,
    max_gap: float = DEFAULT_MAX_GAP,
    side_of: Callable[[Measured], str] = by_accelerator,
) -> tuple[str, ...]:
    """Each fact filter whose other value makes the other side the cheaper one, with both
    ratios: "speculative decoding: with any, 1.13× (B200 cheaper); as asked (none), 0.87×
    (MI355X cheaper)"."""
    leader = _leader(result, a, b)
    if leader is None:
        return ()
    found = []
    for name, label in FLIP_FILTERS:
        asked = getattr(result.facts, name)
        for other in _alternatives(name, asked):
            tried = answer(
                points,
                a=a,
                b=b,
                facts=replace(result.facts, **{name: other}),
                slo=result.slo,
                interpolate=interpolate,
                max_gap=max_gap,
                side_of=side_of,
            )
            flipped = _leader(tried, a, b)
            if flipped is None or flipped == leader:
                continue
            found.append(
                f"{label}: with {other}, {_ratio(tried)} ({flipped} cheaper); as asked "
                f"({asked}), {_ratio(result)} ({leader} cheaper)"
            )
    return tuple(found)


def _ratio(result: Answer) -> str:
    if result.usd_ratio is not None:
        return f"{result.usd_ratio:.2f}× the $/Mtok"
    return f"{result.tok_ratio:.2f}× the tok/s/GPU" if result.tok_ratio else "no ratio"
