"""/compare/: two to four deployments side by side, with ratios, intervals and accuracy deltas."""

from typing import Any

from django.http import HttpRequest, HttpResponse, QueryDict
from django.shortcuts import render

from apps.accounts.models import Organization
from apps.accounts.scoping import viewer_org
from apps.accuracy import selectors as accuracy_selectors
from apps.catalog import fairness
from apps.catalog.models import short_flag
from apps.catalog.selectors import scenario_list
from apps.costs.prices import price_sheet
from apps.leaderboard import (
    charts,
    compare_selectors,
    deployment_selectors,
    run_selectors,
    selectors,
)
from apps.leaderboard.forms import CompareQuery
from apps.leaderboard.views.common import (
    board_table,
    csv_download,
    embed_response,
    json_download,
    query_without,
)
from apps.runs import significance as run_significance
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
    scenario_slug = query.value("scenario") or compare_selectors.common_scenario(
        deployment_ids=[d.pk for d in deployments], org=org
    )
    tier, basis = query.value("tier"), query.value("basis")
    sheet = price_sheet(request)  # the one price reader (apps.costs.prices)
    board = selectors.Board(
        scenario=scenario_slug,
        tier=tier,
        deployments=tuple(d.pk for d in deployments),
        include_simulated=True,
        # A comparison the visitor asked for shows each deployment's run, checked or not
        # (its rows say which origin and which rules failed).
        include_unchecked=True,
        basis=basis,
        own_prices=sheet.pairs(),
        price_profile=sheet.profile,
    )
    board_page = selectors.leaderboard_rows(board=board, org=org)
    rows = {r.deployment_id: r for r in board_page.rows}
    ordered = [rows.get(d.pk) for d in deployments]
    facts = [fairness.deployment_facts(d) for d in deployments]
    for fact, row in zip(facts, ordered, strict=True):
        fact["provenance"] = row.provenance if row else "no run in this scenario"
        fact["scenario"] = scenario_slug if row else "—"
    baseline = ordered[0]

    def stated(row: selectors.Row | None) -> bool:
        # A ratio to or from a figure of unstated kind would pick one of its two readings.
        return row is not None and row.tput_range is None

    ratios = [
        (r.tput_per_gpu / baseline.tput_per_gpu)
        if stated(r) and stated(baseline) and r.tput_per_gpu and baseline.tput_per_gpu
        else None
        for r in ordered
    ]
    cost_ratios = [
        (r.usd_per_mtok / baseline.usd_per_mtok)
        if stated(r) and stated(baseline) and r.usd_per_mtok and baseline.usd_per_mtok
        else None
        for r in ordered
    ]
    diffs = fairness.differences(facts)
    for d, fact in zip(deployments, facts, strict=True):
        # Added after the fairness check: presentation, not facts to compare.
        fact["name"] = picker["names"][d.pk]
        fact["remove"] = picker["removal"][d.pk]
    deltas = _accuracy_deltas(deployments, org)
    speculation = run_selectors.runs_speculation(run_ids=[r.run_id for r in ordered if r])
    for fact, row in zip(facts, ordered, strict=True):
        # Presentation too: what the speculation accepted at the column's leaderboard point.
        fact["speculation"] = speculation.get(row.run_id) if row else None
    significance = _compare_significance(ordered, basis, org)
    if query.value("format"):
        table = board_table([r for r in ordered if r])
        for entry, ratio in zip(table, ratios, strict=False):
            entry["throughput_ratio_vs_first"] = ratio
        cells = [c for c, r in zip(significance, ordered, strict=True) if r]
        for entry, cell in zip(table, cells, strict=True):
            # The ratio's interval (workers/significance.py): flat fields, for CSV too.
            throughput = cell.get("throughput") if cell else None
            entry["throughput_change_vs_first"] = throughput.change if throughput else None
            entry["throughput_change_low"] = throughput.low if throughput else None
            entry["throughput_change_high"] = throughput.high if throughput else None
            entry["throughput_verdict_vs_first"] = throughput.verdict if throughput else None
        if query.value("format") == "csv":
            return csv_download("compare.csv", table)
        return json_download("compare.json", table)
    points = selectors.chart_points(
        run_ids=board_page.run_ids, tier=tier, basis=basis, own=board.own_prices
    )
    context = {
        "significance": significance,
        "deployments": deployments,
        "columns": list(zip(deployments, ordered, ratios, cost_ratios, facts, strict=True)),
        "differences": diffs,
        "unfair": any(d.unfair for d in diffs),
        "accuracy_deltas": deltas,
        "scenario": scenario_list(org=org).filter(slug=scenario_slug).first(),
        "scenarios": compare_selectors.scenarios_of(deployments=deployments, org=org),
        "tier": tier,
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


# What /compare/ states with an interval against the first column (workers/significance.py).
SIGNIFICANCE_METRICS = tuple(figures.FIGURES[key].name for key in figures.COMPARE_PAGE)


def _compare_significance(ordered: list, basis: str, org: Organization | None) -> list:
    """Per column, sentences on throughput and latency against the first column with a 95%
    interval ("within noise" when it holds 0); None for the first column and where request
    records are missing (the ratio then stands alone, and the page says why)."""
    first = ordered[0]
    if first is None:
        return [None] * len(ordered)
    metrics = [figures.FIGURES[figures.THROUGHPUT[basis]].name, *SIGNIFICANCE_METRICS]
    rest = [row.run_id if row else None for row in ordered[1:]]
    found = run_significance.compare_runs(
        baseline_run=first.run_id, other_runs=rest, metrics=metrics, org=org
    )
    cells: list = [None]
    for row, diffs in zip(ordered[1:], found, strict=True):
        if row is None:
            cells.append(None)
        elif diffs is None:
            cells.append({"missing": True})
        else:
            cells.append(
                {
                    "sentences": [d.sentence("the first column", "This column") for d in diffs],
                    "verdict": diffs[0].verdict,
                    "throughput": diffs[0],
                    "runs": (diffs[0].runs_a, diffs[0].runs_b),
                }
            )
    return cells


# Facts a column heading adds when the compared deployments differ in them: two columns of
# "8×MI355X sglang MXFP4" must not read the same but for their ids.
NAMING_FACTS = ("engine_version", "parallelism", "serving", "speculative", "engine_flags")


def column_names(deployments: list) -> dict[int, str]:
    """Each compare column's heading, and the name of its line on the chart."""
    facts = {d.pk: fairness.deployment_facts(d) for d in deployments}
    differing = [k for k in NAMING_FACTS if len({f[k] for f in facts.values()}) > 1]
    names = {}
    for pk, f in facts.items():
        extra = [short_flag(f[k]) for k in differing]
        base = f"{f['hardware']} {f['engine']} {f['quantization']}"
        names[pk] = " · ".join([base, *extra]) + f" (#{pk})"
    return names


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
                delta = fairness.paired_delta(
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
