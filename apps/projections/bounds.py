"""How far one speed factor per group could bring the held-out projections, the factor
chosen from the held-out measurements themselves. Pure.

Not a projection: it reads the answers. It measures what the point model's curves allow
if an unmeasured accelerator's speed were known exactly (one factor on TPOT for all of the
accelerator's points), or its speed with each engine, or with each engine, precision and
layout, or each configuration's. Where the accelerator's own best factor leaves the median
error above an aim, no correction that is one number per accelerator (a measured HBM
bandwidth, a better efficiency for its family) reaches the aim with these curves; what
remains is how each engine and layout behaves on that accelerator, which only measuring it
shows (issue 56; docs/methodology.md, "What this does not reach, and why").
"""

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from apps.projections.model import Observation, Setup, closed_loop_tput
from apps.projections.nested import MATCHINGS, SCORE_CAP_PCT
from apps.projections.pointmodels import GRID, Candidate, Curve, Fitted
from apps.projections.validation import curve_with_levels, held_out_folds, pct_error, runs_of

# The TPOT factors tried, in log space: x0.50 to x2.01, 2% apart (a finer step moves the
# medians by less than 0.2 points).
LOG_FACTORS = np.arange(-0.70, 0.7001, 0.02)

NONE = "none (the held-out projection itself)"
LEVELS: dict[str, Callable[[Setup], tuple]] = {
    "accelerator": lambda s: (),
    "accelerator and engine": lambda s: (s.engine,),
    "accelerator, engine, precision and layout": lambda s: (
        s.engine,
        s.precision_name,
        s.layout,
    ),
    "configuration (and shape)": lambda s: s.key,
}


@dataclass(frozen=True)
class Bound:
    level: str
    points: int
    unreached: dict[str, int]  # per matching, at the chosen factors
    median_ape: dict[str, float | None]  # per matching, over reached points


# One run (setup and date) of a held-out accelerator: for each factor in LOG_FACTORS and
# each of its points, the abs. % error at matched interactivity (None: not reached) and at
# matched concurrency.
Errors = list[list[tuple[float | None, float]]]


def scaled_errors(fitted: Fitted, runs: Sequence[Observation]) -> Errors:
    """The runs' errors with the projected TPOT times each factor (TTFT kept; throughput
    follows by the closed loop, the curve's own spread factor kept). At factor 1 these are
    the held-out errors (validation.project_held_out reads the same curve)."""
    setup = runs[0].setup
    both = curve_with_levels(fitted, runs)
    loop = np.asarray(
        closed_loop_tput(both.concurrency, setup.shape, setup.layout, both.ttft_s, both.tpot_s)
    )
    spread = both.tput_per_gpu / loop
    n = len(GRID)
    table: Errors = []
    for log_factor in LOG_FACTORS:
        tpot = both.tpot_s * np.exp(log_factor)
        tput = spread * np.asarray(
            closed_loop_tput(both.concurrency, setup.shape, setup.layout, both.ttft_s, tpot)
        )
        curve = Curve(both.concurrency[:n], tpot[:n], both.ttft_s[:n], tput[:n])
        row: list[tuple[float | None, float]] = []
        for obs, at_level in zip(runs, tput[n:], strict=True):
            along = curve.tput_at_interactivity(obs.interactivity)
            row.append(
                (
                    None if along is None else pct_error(along, obs.tput_per_gpu),
                    pct_error(float(at_level), obs.tput_per_gpu),
                )
            )
        table.append(row)
    return table


def best_factor_errors(tables: Sequence[Errors]) -> dict[str, list[float | None]]:
    """Per matching, the errors of these runs' points at the one factor whose median error
    over them all is least (an unreached point counts as SCORE_CAP_PCT in that choice, so
    a factor cannot win by leaving the hard points out)."""
    found: dict[str, list[float | None]] = {}
    for i, matching in enumerate(MATCHINGS):
        best: tuple[float, list[float | None]] | None = None
        for k in range(len(LOG_FACTORS)):
            errors = [point[i] for table in tables for point in table[k]]
            score = float(np.median([SCORE_CAP_PCT if e is None else e for e in errors]))
            if best is None or score < best[0]:
                best = (score, errors)
        assert best is not None
        found[matching] = best[1]
    return found


def offset_bounds(
    observations: Sequence[Observation],
    candidate: Candidate,
    *,
    only: Iterable[str] | None = None,
) -> list[Bound]:
    """Each accelerator (or each of `only`) held out as in leave-one-accelerator-out, then
    each LEVELS group of its points given its best factor; first, NONE: no factor."""
    per_level: dict[str, dict[str, list[float | None]]] = {
        level: {m: [] for m in MATCHINGS} for level in (NONE, *LEVELS)
    }
    unscaled = int(np.argmin(np.abs(LOG_FACTORS)))
    for held, train in held_out_folds(observations, only=only):
        fitted = candidate.fit(train)
        runs = runs_of(held)
        tables = {key: scaled_errors(fitted, group) for key, group in runs.items()}
        for table in tables.values():
            for i, m in enumerate(MATCHINGS):
                per_level[NONE][m] += [point[i] for point in table[unscaled]]
        for level, group_of in LEVELS.items():
            groups: dict[tuple, list[Errors]] = {}
            for key, group in runs.items():
                groups.setdefault(group_of(group[0].setup), []).append(tables[key])
            for chosen in groups.values():
                for m, errors in best_factor_errors(chosen).items():
                    per_level[level][m] += errors
    bounds = []
    for level, found in per_level.items():
        reached = {m: [e for e in found[m] if e is not None] for m in MATCHINGS}
        bounds.append(
            Bound(
                level=level,
                points=len(found[MATCHINGS[0]]),
                unreached={m: len(found[m]) - len(reached[m]) for m in MATCHINGS},
                median_ape={
                    m: float(np.median(reached[m])) if reached[m] else None for m in MATCHINGS
                },
            )
        )
    return bounds
