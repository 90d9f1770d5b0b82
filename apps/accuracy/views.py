"""The accuracy pages: every visible result with its interval, and two results compared paired."""

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from apps.accounts.scoping import viewer_org
from apps.accuracy import charts, selectors
from apps.accuracy.selectors import DEFAULT_MARGIN_POINTS


def _float(value: str | None, default: float) -> float:
    try:
        return float(value) if value not in (None, "") else default
    except ValueError:
        return default


def accuracy_index(request: HttpRequest) -> HttpResponse:
    """Every visible accuracy result with its interval; pick two to compare them paired."""
    org = viewer_org(request)
    results = list(selectors.accuracy_results(org=org)[:200])
    rows = [(r, selectors.interval(r)) for r in results]
    first = results[0] if results else None
    model = request.GET.get("model") or (first.run.deployment.model.name if first else "")
    accelerator = request.GET.get("accelerator") or (
        first.run.deployment.accelerator.sku if first else ""
    )
    task = request.GET.get("task") or (first.task if first else "")
    trade = selectors.quantization_trade(model=model, accelerator=accelerator, task=task, org=org)
    context = {
        "rows": rows,
        "trade": trade,
        "trade_chart": charts.trade_figure(
            trade, title=f"{model} on {accelerator}: {task} accuracy vs throughput"
        ),
        "model": model,
        "accelerator": accelerator,
        "task": task,
    }
    return render(request, "accuracy/index.html", context)


def accuracy_compare(request: HttpRequest) -> HttpResponse:
    ids = {key: request.GET.get(key, "") for key in ("a", "b")}
    org = viewer_org(request)
    found = {
        key: selectors.accuracy_result_get(result_id=int(value), org=org)
        if value.isdigit()
        else None
        for key, value in ids.items()
    }
    margin = _float(request.GET.get("margin"), DEFAULT_MARGIN_POINTS)
    if not found["a"] or not found["b"] or margin < 0:
        message = (
            "The margin must be 0 points or more."
            if margin < 0
            else "Pick a baseline (A) and a candidate (B) result in the table on the accuracy "
            "page, then press “Compare A and B (paired)”."
        )
        return render(request, "accuracy/compare.html", {"error": message}, status=400)
    aa_ids = [v for v in request.GET.getlist("aa") if v.isdigit()][:2]
    aa_results = [selectors.accuracy_result_get(result_id=int(v), org=org) for v in aa_ids]
    aa = tuple(aa_results) if len(aa_results) == 2 and all(aa_results) else None
    view = selectors.paired_comparison(
        baseline=found["a"], candidate=found["b"], margin_points=margin, aa=aa
    )
    context = {"view": view, "margin": margin, "query": request.GET.urlencode()}
    return render(request, "accuracy/compare.html", context)
