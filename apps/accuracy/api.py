"""/api/v1/accuracy/compare: two accuracy results compared item by item (paired, exact McNemar)."""

from typing import Annotated

from django.http import HttpRequest
from ninja import Router, Schema, Status
from pydantic import AllowInfNan, Field

from apps.accounts.auth import optional_org
from apps.accuracy import selectors
from apps.api_errors import Errors, error_body
from apps.api_params import NotBoolean, RowId

router = Router(tags=["accuracy"])

# Percentage points of accuracy, 0 to 100.
Points = Annotated[float, Field(ge=0, le=100), NotBoolean, AllowInfNan(False)]


class PairedOut(Schema):
    n: int
    both: int
    lost: int
    gained: int
    neither: int
    unpaired: int
    baseline_accuracy: float
    candidate_accuracy: float
    difference_points: float
    interval_points: tuple[float, float]
    mcnemar_p: float
    smallest_detectable_points: float
    verdict: str
    verdict_text: str
    lost_ids: list[str]
    gained_ids: list[str]


@router.get(
    "/compare",
    response={200: PairedOut, 404: Errors, 422: Errors},
    summary="Paired comparison of two accuracy results",
)
def compare(
    request: HttpRequest,
    a: RowId,
    b: RowId,
    margin: Points = 1.5,
):
    """Candidate `b` against baseline `a` on the items both scored: exact McNemar, a paired
    95% interval of the difference, the flipped items, and a verdict against `margin`
    (percentage points, 0 to 100)."""
    org = optional_org(request)
    found = {
        k: selectors.accuracy_result_get(result_id=v, org=org) for k, v in (("a", a), ("b", b))
    }
    missing = [{"path": k, "message": "no such accuracy result"} for k, v in found.items() if not v]
    if missing:
        return Status(404, {"detail": missing})
    view = selectors.paired_comparison(
        baseline=found["a"], candidate=found["b"], margin_points=margin
    )
    if view.error:
        return Status(422, error_body("b", view.error))
    c = view.comparison
    assert c is not None  # a view without an error has its comparison
    return {
        "n": c.n,
        "both": c.both,
        "lost": c.only_baseline,
        "gained": c.only_candidate,
        "neither": c.neither,
        "unpaired": c.unpaired,
        "baseline_accuracy": c.baseline_accuracy,
        "candidate_accuracy": c.candidate_accuracy,
        "difference_points": 100 * c.difference,
        "interval_points": (100 * c.interval.low, 100 * c.interval.high),
        "mcnemar_p": c.mcnemar_p,
        "smallest_detectable_points": 100 * c.detectable,
        "verdict": c.verdict,
        "verdict_text": c.verdict_text,
        "lost_ids": c.lost_ids,
        "gained_ids": c.gained_ids,
    }
