"""Reads behind a run's page: latency series, in-flight samples, speculation, verdicts, errors
and marks of its points.
"""

from bisect import bisect_right
from typing import Any

from apps.costs.formulas import TokenKind, priced_throughput, throughputs
from apps.leaderboard.selectors import reference_prices
from apps.runs import summary
from apps.runs.models import Point, Run
from apps.runs.selectors import point_record_rows
from apps.runs.summary import scenario_slo
from workers.figures import PointView


def run_latency_series(*, run: Run, limit: int = 5000) -> dict[str, list[float]]:
    """TTFT and E2EL of successful requests, one series per load level (levels are not
    one population: mixing them draws a distribution no user saw). Each level is evenly
    thinned to `limit` values for the chart."""
    series: dict[str, list[float]] = {}
    for point in run.points.order_by("ordinal"):
        level = point.label or (
            f"c={point.concurrency}"
            if point.concurrency
            else f"{point.request_rate:g} req/s"
            if point.request_rate
            else f"#{point.ordinal}"
        )
        records = [
            (ttft, e2el)
            for _, status, ttft, e2el in point_record_rows(
                run=run, columns=("status", "ttft_ms", "e2el_ms"), ordinals=[point.ordinal]
            )
            if status == "ok"
        ]
        step = max(1, -(-len(records) // limit))
        ttfts: list[float] = []
        e2els: list[float] = []
        for index, (ttft, e2el) in enumerate(records):
            if index % step:
                continue
            if ttft is not None:
                ttfts.append(ttft)
            if e2el is not None:
                e2els.append(e2el)
        if ttfts:
            series[f"TTFT {level} (ms)"] = ttfts
        if e2els:
            series[f"E2EL {level} (ms)"] = e2els
    return series


def run_in_flight(*, run: Run, ordinals: list[int], samples: int = 200) -> dict[int, dict]:
    """The client's requests in flight over each level's window, from the stored request
    records (send, and send + E2EL), sampled at `samples` evenly spaced seconds from the
    level's start: the same origin as the server's series, so the two line up."""
    spans: dict[int, tuple[list[float], list[float]]] = {o: ([], []) for o in ordinals}
    rows = point_record_rows(run=run, columns=("t_send_ms", "e2el_ms"), ordinals=ordinals)
    for ordinal, send, e2el in rows:
        # A request without an end was never answered in full: it has no known span.
        if e2el is not None:
            spans[ordinal][0].append(send)
            spans[ordinal][1].append(send + e2el)
    timelines = {}
    for ordinal, (sends, ends) in spans.items():
        if not sends:
            continue
        sends.sort()
        ends.sort()
        last = ends[-1]
        times = [last * i / (samples - 1) for i in range(samples)]
        timelines[ordinal] = {
            "t_s": [t / 1000 for t in times],
            # Sent at or before t, minus ended at or before t.
            "in_flight": [bisect_right(sends, t) - bisect_right(ends, t) for t in times],
        }
    return timelines


def runs_speculation(*, run_ids: list[int]) -> dict[int, dict[str, Any]]:
    """Per run, what speculative decoding did at its leaderboard point: the acceptance the
    document stored (from the server, or llama.cpp's per-request draft counts) and the
    client's tokens per streamed chunk, the fallback when the server reports nothing."""
    found = {}
    for run_id, ordinal, per_chunk in Run.objects.filter(
        pk__in=run_ids, best_point__isnull=False
    ).values_list("pk", "best_point__ordinal", "best_point__tokens_per_chunk"):
        # Only the one point's entry of the stored document, not the whole document.
        acceptance = (
            Run.objects.filter(pk=run_id)
            .values_list(f"document__points__{ordinal}__speculative_acceptance", flat=True)
            .first()
        )
        found[run_id] = {"acceptance": acceptance, "tokens_per_chunk": per_chunk}
    return found


def run_leaderboard_point(
    *,
    run: Run,
    tier: str,
    basis: str,
    own: tuple[tuple[str, float], ...] = (),
    prices_as_of: str = "",
) -> dict[str, Any] | None:
    """The run's leaderboard point, its verdict by the one SLO rule, and its tok/s and $/Mtok
    under a basis and tier: the same figures the leaderboard and /compare/ show."""
    point = run.best_point
    if point is None:
        return None
    slo = scenario_slo(run.scenario)
    figures = summary.run_figures(
        list(Point.objects.filter(pk=point.pk).values("id", *summary.FIGURE_FIELDS)),
        run.document,
    )[0]
    gpus = run.deployment.gpus
    price = reference_prices(tier, own, prices_as_of).get(run.deployment.accelerator_id)
    priced = priced_throughput(
        TokenKind(basis),
        gpus=gpus,
        usd_per_gpu_hour=price,
        **throughputs(point),
        input_tokens=run.scenario.input_tokens if run.scenario else None,
        output_tokens=run.scenario.output_tokens if run.scenario else None,
    )
    return {
        "point": point,
        "verdict": summary.point_verdict(figures, slo).describe() if slo.any else "no SLO",
        "priced": priced,
        "usd_per_gpu_hour": price,
        "tier": tier,
        "basis": basis,
    }


def point_verdicts(*, run: Run) -> dict[int, str]:
    """point id -> the one SLO rule's verdict on it, for the run page's table."""
    slo = scenario_slo(run.scenario)
    if not slo.any:
        return {}
    rows = list(run.points.values("id", *summary.FIGURE_FIELDS))
    return {
        f.point_id: summary.point_verdict(f, slo).status.replace("_", " ")
        for f in summary.run_figures(rows, run.document)
    }


def run_errors(*, run: Run) -> dict[str, int]:
    totals: dict[str, int] = {}
    for errors in run.points.values_list("errors", flat=True):
        for kind, count in (errors or {}).items():
            totals[kind] = totals.get(kind, 0) + count
    return totals


def run_point_marks(*, run: Run) -> dict[int, list[str]]:
    """Why a point of this run cannot stand for its scenario, by ordinal, in the words of the
    one validity rule (workers.figures): its client was saturated, or its prompts missed
    their input length. Every reason a point has is named, not only the first."""
    marks: dict[int, list[str]] = {}
    rows = run.points.values_list("ordinal", "client_bound", "prompt_length_mismatch_rate")
    for ordinal, bound, mismatch in rows:
        views = (PointView(client_bound=bound), PointView(prompt_length_mismatch_rate=mismatch))
        found = [reason for view in views if (reason := view.invalid_reason())]
        if found:
            marks[ordinal] = found
    return marks
