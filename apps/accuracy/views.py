"""The accuracy pages: every visible result with its interval, and two results compared paired."""

from collections import Counter

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from apps.accounts.scoping import viewer_org
from apps.accuracy import charts, selectors
from apps.accuracy.forms import PICK_TWO, AccuracyCompareQuery, AccuracyIndexQuery


def accuracy_index(request: HttpRequest) -> HttpResponse:
    """Every visible accuracy result with its interval; pick two to compare them paired."""
    org = viewer_org(request)
    results = list(selectors.accuracy_results(org=org)[:200])
    rows = selectors.evaluations(results)
    asked = AccuracyIndexQuery(request.GET).values()
    # Opens on the model and accelerator with the most quantization pairs to draw.
    opened = None if any(asked.values()) else selectors.quantization_view(org=org)
    first = results[0] if results else None
    model, accelerator, task = opened or (
        asked["model"] or (first.run.deployment.model.name if first else ""),
        asked["accelerator"] or (first.run.deployment.accelerator.sku if first else ""),
        asked["task"] or (first.task if first else ""),
    )
    trade = selectors.quantization_trade(model=model, accelerator=accelerator, task=task, org=org)
    # One scenario per chart: a throughput gain at 1k/1k and one at 8k/1k are not one axis.
    charted = Counter(t["scenario"] for t in trade if t["throughput_gain_pct"] is not None)
    scenario = charted.most_common(1)[0][0] if charted else ""
    context = {
        "rows": rows,
        "trade": trade,
        "trade_scenario": scenario,
        "trade_other_scenarios": len(charted) - 1 if charted else 0,
        "trade_chart": charts.trade_figure(
            [t for t in trade if t["scenario"] == scenario],
            title=f"{model} on {accelerator}, {scenario}: {task} accuracy vs throughput",
        ),
        "model": model,
        "accelerator": accelerator,
        "task": task,
    }
    return render(request, "accuracy/index.html", context)


def accuracy_compare(request: HttpRequest) -> HttpResponse:
    """Two results paired item by item against a margin, with an A/A pair's check if named;
    400 with what to do when the query names no two visible results or a negative margin."""
    org = viewer_org(request)
    query = AccuracyCompareQuery(request.GET)
    asked = query.values()
    found = {
        key: selectors.accuracy_result_get(result_id=asked[key], org=org)
        if asked[key] is not None
        else None
        for key in ("a", "b")
    }
    baseline, candidate = found["a"], found["b"]
    refusal = query.refusal() or (None if baseline and candidate else PICK_TWO)
    if refusal or baseline is None or candidate is None:
        return render(request, "accuracy/compare.html", {"error": refusal}, status=400)
    aa_results = [selectors.accuracy_result_get(result_id=i, org=org) for i in asked["aa"]]
    aa = tuple(aa_results) if len(aa_results) == 2 and all(aa_results) else None
    margin = asked["margin"]
    view = selectors.paired_comparison(
        baseline=baseline, candidate=candidate, margin_points=margin, aa=aa
    )
    context = {"view": view, "margin": margin, "query": request.GET.urlencode()}
    return render(request, "accuracy/compare.html", context)
