"""/compare/: two to four deployments side by side, with ratios, intervals and accuracy deltas.

Which point of each deployment is compared, and every ratio and interval, come from the one
answer (apps/costs/answer.py, through compare_selectors.compare_answers): each deployment's
best measured point meeting the SLO the page states. The board's rows give only what is not
a point choice: provenance, accuracy, the deployment's facts."""

from typing import Any

from django.http import HttpRequest, HttpResponse, QueryDict
from django.shortcuts import render

from apps.accounts.models import Organization
from apps.accounts.scoping import viewer_org
from apps.accuracy import selectors as accuracy_selectors
from apps.catalog import fairness
from apps.catalog.labels import readable_flags, unique_labels
from apps.catalog.models import short_flag
from apps.catalog.selectors import scenario_list
from apps.costs.answer import STATED_LATENCY, Answer, Measured, Side
from apps.costs.answer_selectors import Asking
from apps.costs.formulas import CostInputError, readings_text, usd_per_mtok
from apps.costs.prices import price_inputs, price_sheet
from apps.costs.reference import price_set
from apps.costs.slo_query import slo_controls
from apps.leaderboard import (
    charts,
    compare_selectors,
    deployment_selectors,
    run_selectors,
    selectors,
)
from apps.leaderboard.forms import SLO_FIELDS, CompareQuery, slo_over_tier
from apps.leaderboard.views.common import (
    csv_download,
    embed_response,
    json_download,
    query_without,
)
from workers import figures


def compare(request: HttpRequest, embed: bool = False) -> HttpResponse:
    tiers = selectors.price_tiers()
    query = CompareQuery(request.GET, tiers=tiers)
    ids = query.value("d")
    # An embed is public by nature (framed anywhere, cached publicly): public runs only.
    org = None if embed else viewer_org(request)
    deployments = [
        d for i in ids if (d := deployment_selectors.deployment_get(deployment_id=i, org=org))
    ]
    picker = _compare_picker(deployments, org)
    if not ids:
        # The navigation's link asks nothing yet: the picker is the page, not an error.
        return render(request, "leaderboard/compare.html", {"picking": True, **picker})
    if len(deployments) < 2:
        # 400 keeps scripts honest; a person gets the picker to add what is missing.
        return render(
            request,
            "leaderboard/compare.html",
            {
                "error": (
                    "Pick 2 to 4 deployments to compare: add them below, or tick them in the "
                    "leaderboard's Compare column."
                ),
                **picker,
            },
            status=400,
        )
    slo_problems = [p for p in query.problems() if p["field"] in SLO_FIELDS]
    if slo_problems:
        return render(
            request,
            "leaderboard/compare.html",
            {"error": "; ".join(f"{p['field']}: {p['message']}" for p in slo_problems), **picker},
            status=400,
        )
    scenario_slug = query.value("scenario") or compare_selectors.common_scenario(
        deployment_ids=[d.pk for d in deployments], org=org
    )
    tier, basis = query.value("tier"), query.value("basis")
    prices_as_of = query.value("prices_as_of")
    sheet = price_sheet(request)  # the one price reader (apps.costs.prices)
    scenario = scenario_list(org=org).filter(slug=scenario_slug).first()
    slo_tier, bounds = slo_over_tier(query)
    try:
        answers = compare_selectors.compare_answers(
            deployment_ids=[d.pk for d in deployments],
            scenario=scenario_slug or "",
            slo_tier=slo_tier,
            bounds=dict(bounds),
            basis=basis,
            tier=tier,
            own_prices=sheet.own,
            org=org,
            metrics=SIGNIFICANCE_METRICS,
            prices_as_of=prices_as_of,
        )
    except CostInputError as exc:
        answers, answer_error = [], f"{exc.field}: {exc.message}"
    else:
        answer_error = ""
    board = selectors.Board(
        scenario=scenario_slug,
        tier=tier,
        prices_as_of=prices_as_of,
        deployments=tuple(d.pk for d in deployments),
        include_simulated=True,
        # A comparison the visitor asked for shows each deployment's run, checked or not
        # (its rows say which origin and which rules failed).
        include_unchecked=True,
        basis=basis,
        own_prices=sheet.pairs(),
        price_profile=sheet.profile,
        slo_tier=slo_tier,
        slo_bounds=bounds,
    )
    board_page = selectors.leaderboard_rows(board=board, org=org)
    rows = {r.deployment_id: r for r in board_page.rows}
    ordered = [rows.get(d.pk) for d in deployments]
    # Each column's pairing with the first (none for the first itself), and its side of the
    # answer: the first column's from any pairing (a side depends on its points and the SLO).
    pairings: list[Asking | None] = [None, *answers] if answers else [None] * len(deployments)
    sides = [answers[0].answer.b if answers else None] + [
        p.answer.a if p else None for p in pairings[1:]
    ]
    facts = [fairness.deployment_facts(d) for d in deployments]
    for fact, row in zip(facts, ordered, strict=True):
        fact["provenance"] = row.provenance if row else "no run in this scenario"
        fact["scenario"] = scenario_slug if row else "—"
    # No ratio is drawn from one of a figure's two readings (a published figure of unstated
    # token kind): the column shows both, as every page does.
    ratios = [p.answer.tok_ratio if p and _stated(p.answer) else None for p in pairings]
    cost_ratios = [p.answer.usd_ratio if p and _stated(p.answer) else None for p in pairings]
    shown = [_shown(side, basis) for side in sides]
    first = sides[0]
    if first and first.point and not first.point.tok_s_range:  # the first against itself
        ratios[0] = 1.0 if first.tok_s_per_gpu else None
        cost_ratios[0] = 1.0 if first.usd_per_mtok else None
    diffs = fairness.differences(facts)
    for d, fact in zip(deployments, facts, strict=True):
        # Added after the fairness check: presentation, not facts to compare.
        fact["name"] = picker["names"][d.pk]
        fact["remove"] = picker["removal"][d.pk]
    deltas = _accuracy_deltas(deployments, org)
    # The run the answer compares; where no point meets the SLO, the board row's run.
    runs = [
        side.point.run_id if side and side.point else (row.run_id if row else None)
        for side, row in zip(sides, ordered, strict=True)
    ]
    speculation = run_selectors.runs_speculation(run_ids=[r for r in runs if r])
    for fact, run_id in zip(facts, runs, strict=True):
        # Presentation too: what the speculation accepted in the run the answer compares.
        fact["speculation"] = speculation.get(run_id) if run_id else None
    significance = [_significance_cell(p.answer) if p else None for p in pairings]
    if query.value("format"):
        # The export carries the answer's point only: the facts of each column, and the point
        # the one answer compares with its figures (never the board row's own point beside it).
        table = []
        for d, fact, side, ratio, cost_ratio, cell, pairing in zip(
            deployments, facts, sides, ratios, cost_ratios, significance, pairings, strict=True
        ):  # fmt: skip
            entry = {"deployment_id": d.pk, "deployment": fact["name"]}
            entry.update(_answer_entry(side, ratio, cost_ratio, cell, pairing))
            # Every column was judged at the page's one SLO, the first's too.
            entry["answer_slo"] = answers[0].answer.slo_described if answers else None
            table.append(entry)
        if query.value("format") == "csv":
            return csv_download("compare.csv", table)
        return json_download("compare.json", table)
    points = selectors.chart_points(run_ids=board_page.run_ids, board=board, org=org)
    context = {
        "significance": significance,
        "sides": sides,
        "answer_slo": answers[0].answer.slo_described if answers else "",
        "slo_form": slo_controls(request.GET, scenario, answers[0].slo if answers else None),
        "prices": price_inputs(
            request.GET,
            sheet,
            tier=tier,
            tiers=tiers,
            skus=[d.accelerator.sku for d in deployments],
        ),
        "sheet": sheet,
        "unstated": sum(p.answer.unstated for p in pairings if p),
        "answer_rule": answers[0].answer.rule if answers else "",
        "answer_error": answer_error,
        "slo_asked": {name: request.GET.get(name, "") for name in SLO_FIELDS},
        "stated_latency": STATED_LATENCY,
        "deployments": deployments,
        "columns": list(
            zip(
                deployments,
                ordered,
                ratios,
                cost_ratios,
                facts,
                sides,
                pairings,
                shown,
                strict=True,
            )
        ),
        "differences": diffs,
        "unfair": any(d.unfair for d in diffs),
        "accuracy_deltas": deltas,
        "scenario": scenario,
        "scenarios": compare_selectors.scenarios_of(deployments=deployments, org=org),
        "tier": tier,
        "price_set": price_set(prices_as_of),
        "basis": basis,
        "own_prices": sheet.pairs(),
        "price_profile": sheet.profile,
        "slo_text": board_page.slo_text,
        "tiers": tiers,
        "query": request.GET.urlencode(),
        "chart": charts.pareto_figure(
            points,
            x="interactivity",
            y="tput_per_gpu",
            optimal_only=False,
            title="Each deployment's load levels",
            basis=basis,
            series="deployment_id",
            names=picker["names"],
            lines=True,
        ),
        "embed_query": query_without(request.GET, "format"),
        **picker,
    }
    if embed:
        return embed_response(
            request,
            figure=context["chart"],
            caption=f"{context['scenario'].name if context['scenario'] else ''} · {tier}",
            source=f"/compare/?{request.GET.urlencode()}",
        )
    return render(request, "leaderboard/compare.html", context)


# What /compare/ states with an interval against the first column (workers/significance.py),
# besides the throughput, where every compared run has request records.
SIGNIFICANCE_METRICS = tuple(figures.FIGURES[key].name for key in figures.COMPARE_PAGE)


def _stated(result: Answer) -> bool:
    return not any(s.point and s.point.tok_s_range for s in (result.a, result.b))


def _shown(side: Side | None, basis: str) -> dict[str, Any]:
    """The side's tok/s/GPU as includes/throughput.html shows a figure (both readings of
    one of unstated kind)."""
    point = side.point if side else None
    return {
        "tput_per_gpu": side.tok_s_per_gpu if side and point else None,
        "tput_range": point.tok_s_range if point else None,
        "tput_kind": "unstated" if point and point.tok_s_range else basis,
    }


def _significance_cell(result: Answer) -> dict[str, Any] | None:
    """A column's sentences against the first column with their 95% interval ("within
    noise" when it holds 0), from the answer's interval; or why there is none."""
    if result.a.point is None or result.b.point is None:
        return None
    interval = result.interval
    if interval is None:
        return {"missing": True, "text": result.uncertainty}
    first = interval.differences[0]
    return {
        "sentences": [d.sentence("the first column", "This column") for d in interval.differences],
        "verdict": first.verdict,
        "throughput": first,
        "notes": first.notes,
        # The first column is side B of each pairing.
        "runs": (interval.runs_b, interval.runs_a),
    }


def _answer_entry(
    side: Side | None,
    ratio: float | None,
    cost_ratio: float | None,
    cell: dict[str, Any] | None,
    pairing: Asking | None,
) -> dict[str, Any]:
    """A column's answer as flat export fields (CSV too): the point compared, its ratios
    against the first column and their interval."""
    point = side.point if side else None
    throughput = cell.get("throughput") if cell else None
    return {
        "answer_slo": pairing.answer.slo_described if pairing else None,
        "answer_meets": point is not None,
        "answer_slo_verdict": _verdict(side),
        "answer_run_id": point.run_id if point else None,
        "answer_measured_at": point.measured_at.isoformat()
        if point and point.measured_at
        else None,
        "answer_level": point.level if point else None,
        "answer_success": (
            None
            if point is None
            else "not stated"
            if point.unstated_success
            else point.success_rate
        ),
        "answer_tok_s_per_gpu": side.tok_s_per_gpu if side else None,
        # A figure of unstated token kind carries both readings, as every export does.
        "answer_tok_s_per_gpu_range": readings_text(point.tok_s_range if point else None),
        "answer_usd_per_mtok_range": readings_text(_usd_range(point)),
        "answer_interactivity_p50": point.interactivity_p50 if point else None,
        f"answer_{STATED_LATENCY.seconds_name}": point.latency_s if point else None,
        "answer_usd_per_mtok": side.usd_per_mtok if side else None,
        "answer_reason": side.reason if side else None,
        "answer_differs": "; ".join(pairing.answer.differs) if pairing else None,
        "throughput_ratio_vs_first": ratio,
        "usd_per_mtok_ratio_vs_first": cost_ratio,
        # The ratio's interval (workers/significance.py), as the change against the first.
        "throughput_change_vs_first": throughput.change if throughput else None,
        # The interval of the mean's ratio, with that estimate (not the chosen points').
        "throughput_mean_ratio_vs_first": 1 + throughput.change if throughput else None,
        "throughput_change_low": throughput.low if throughput else None,
        "throughput_change_high": throughput.high if throughput else None,
        "throughput_verdict_vs_first": throughput.verdict if throughput else None,
    }


def _usd_range(point: Measured | None) -> tuple[float, float] | None:
    """$/Mtok at a figure's two readings (low, high), when its token kind is unstated."""
    if point is None or point.tok_s_range is None or not point.usd_per_gpu_hour:
        return None
    low, high = sorted(usd_per_mtok(point.usd_per_gpu_hour, r) for r in point.tok_s_range)
    return low, high


def _verdict(side: Side | None) -> str | None:
    """The column's verdict at the SLO: meets (a point meets it), misses (its nearest point
    breaks a bound), cannot_check (no point states what the SLO bounds), or None."""
    return side.status or None if side is not None else None


# Facts a column heading adds when the compared deployments differ in them: two columns of
# "8×MI355X sglang MXFP4" must not read the same but for their ids.
NAMING_FACTS = ("engine_version", "parallelism", "serving", "speculative", "engine_flags")


def column_names(deployments: list) -> dict[int, str]:
    """Each compare column's heading, and the name of its line on the chart."""
    facts = {d.pk: fairness.deployment_facts(d) for d in deployments}
    differing = [k for k in NAMING_FACTS if len({f[k] for f in facts.values()}) > 1]
    names = {}
    for pk, f in facts.items():
        extra = [_naming(f, k) for k in differing]
        base = f"{f['hardware']} {f['engine']} {f['quantization']}"
        names[pk] = " · ".join([base, *extra])
    # Columns that still read alike are told apart by id, as every list's rows are.
    return unique_labels(names)


def _naming(facts: dict[str, Any], key: str) -> str:
    """A fact as a column heading names it: engine flags only where a reader can read them
    (apps/catalog/labels.readable_flags), the rest as the comparison states them."""
    if key == "engine_flags":
        return short_flag(" · ".join(readable_flags(facts[key].split(" · "))) or "other flags")
    return short_flag(facts[key])


def _compare_picker(deployments: list, org: Organization | None) -> dict[str, Any]:
    """What /compare/ needs to add or remove a deployment on the page itself."""
    chosen = [d.pk for d in deployments]
    removal = {}
    for d in deployments:
        rest = QueryDict(mutable=True)
        rest.setlist("d", [str(i) for i in chosen if i != d.pk])
        removal[d.pk] = rest.urlencode()
    return {
        "chosen": chosen,
        "names": column_names(deployments),
        "removal": removal,
        "choices": [c for c in compare_selectors.deployment_choices(org=org) if c[0] not in chosen],
        "can_add": len(chosen) < 4,
    }


def _accuracy_deltas(deployments, org: Organization | None) -> list[fairness.AccuracyDelta]:
    """Each task both sides scored: paired through the one comparison /accuracy/compare/
    uses when both have per-item outcomes, else an unpaired interval (never across protocols)."""
    base = {
        a["task"]: a for a in deployment_selectors.accuracy_for(deployment=deployments[0], org=org)
    }
    deltas = []
    for other in deployments[1:]:
        for result in deployment_selectors.accuracy_for(deployment=other, org=org):
            if result["task"] not in base:
                continue
            a, labels = (
                base[result["task"]],
                {
                    "baseline_label": deployments[0].quant_weights,
                    "candidate_label": other.quant_weights,
                },
            )
            if a["items"] and result["items"]:
                stored = compare_selectors.accuracy_results(
                    result_ids=[a["result_id"], result["result_id"]]
                )
                view = accuracy_selectors.paired_comparison(
                    baseline=stored[a["result_id"]],
                    candidate=stored[result["result_id"]],
                    margin_points=accuracy_selectors.DEFAULT_MARGIN_POINTS,
                )
                delta: fairness.AccuracyDelta | None = fairness.paired_delta(
                    view.comparison,
                    view.error,
                    task=result["task"],
                    text=view.difference_text,
                    **labels,
                )
            else:
                delta = fairness.accuracy_delta(a, result, **labels)
            if delta:
                deltas.append(delta)
    return deltas
