"""/api/v1/runs: submit a result document, list runs (cached per page), read one, its document and
its request records."""

import hashlib
import json
from dataclasses import asdict
from datetime import datetime
from typing import Any, Literal

from django.core.cache import cache
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404
from django.urls import reverse
from ninja import Field, Query, Router, Schema, Status
from ninja.pagination import LimitOffsetPagination, paginate
from ninja.renderers import JSONRenderer

from apps.accounts.auth import BearerToken, optional_org
from apps.accounts.models import ApiToken, Organization
from apps.accounts.scoping import DEFAULT_VISIBILITY
from apps.accounts.services import audit_record
from apps.api_errors import UPLOAD_ERRORS, Errors
from apps.api_params import Input
from apps.errors import FieldRefused
from apps.runs import selectors
from apps.runs.models import Point, Run
from apps.runs.services import run_ingest, runs_version
from workers.audit import CODES
from workers.result_fields import INT32_MAX, INT64_MAX
from workers.results import ResultDocument
from workers.submit import JOB_SECRET_HEADER

DOCUMENT_REF = f"#/components/schemas/{ResultDocument.__name__}"

router = Router(tags=["runs"])

# Who sees a submitted run: `public` (anyone) or `private` (the token's organization only);
# the default is apps.accounts.scoping.DEFAULT_VISIBILITY.
Visibility = Literal["public", "private"]
VISIBILITY_HELP = (
    f"who sees the run: public (anyone) or private (the token's organization only; publish "
    f"it later from its page). Default: {DEFAULT_VISIBILITY}"
)
VISIBILITY_PARAM = Query(None, description=VISIBILITY_HELP)
PRIVATE_PARAM = Query(False, description="the older spelling of visibility=private")
VISIBILITY_CONFLICT = "private=true asks for a private run; visibility=public contradicts it"


class RunCreated(Schema):
    id: int
    created: bool
    url: str = Field(description="the run in this API")
    page: str = Field(description="the run's page, as a person opens it")
    visibility: str = Field(description="public (anyone sees it) or private (its organization)")


class RuleFailure(Schema):
    rule: str = Field(description="the rule's name (apps/trust/rules.py RULES)")
    reason: str


class RunSummary(Schema):
    id: int
    url: str
    provenance: str
    origin: str = Field(
        description="who measured it, as checked: scheduled, submitted, imported or published"
    )
    origin_host: str = Field(
        description="scheduled runs: first_party (the service's fleet) or org_host (the agent)"
    )
    rules_passed: bool = Field(description="passes every rule of the default public board")
    rules_failed: list[RuleFailure]
    status: str
    is_public: bool
    model: str
    accelerator: str
    gpus: int
    nodes: int
    engine: str
    engine_version: str
    quantization: str
    parallelism: str
    speculative: str
    scenario: str | None
    deployment_fingerprint: str
    source_citation: str
    created_at: datetime
    slo_verdict: str | None = Field(
        None,
        description="the run's leaderboard point against its scenario's SLO (workers/slo.py): "
        "meets, misses or cannot_check; null without an SLO",
    )


class PointOut(Schema):
    ordinal: int
    label: str
    concurrency: int | None
    request_rate: float | None
    window_s: float | None
    requests_total: int | None
    requests_succeeded: int | None
    requests_failed: int | None
    success_rate: float | None
    input_tokens: int | None
    output_tokens: int | None
    cached_tokens: int | None
    token_count_source: str
    requests_per_s: float | None
    input_tok_s: float | None
    output_tok_s: float | None
    total_tok_s: float | None
    unlabelled_tok_s: float | None
    goodput_rps: float | None
    prefix_cache_hit_rate: float | None
    tokens_per_chunk: float | None
    latency_ms: dict[str, Any]
    interactivity_tok_s_user: dict[str, Any]
    errors: dict[str, int]


class AccuracyOut(Schema):
    protocol: str
    task: str
    metric: str
    n: int | None
    score: float
    ci_low: float | None
    ci_high: float | None
    stderr: float | None
    failures: dict[str, int]


class RunDetail(RunSummary):
    deployment: dict[str, Any]
    labels: dict[str, str] = Field(
        default_factory=dict, description="free labels: branch, commit, pr, unofficial ..."
    )
    environment: dict[str, Any]
    source: dict[str, str]
    request_records: int
    points: list[PointOut]
    accuracy: list[AccuracyOut]


class RunPage(Schema):
    count: int
    limit: int
    offset: int
    items: list[RunSummary]


class RunQuery(Input):
    model: str | None = None
    accelerator: str | None = None
    engine: str | None = None
    quantization: str | None = None
    scenario: str | None = None
    provenance: Run.Provenance | None = None
    deployment: str | None = Field(
        None,
        pattern=r"^[0-9a-fA-F]{1,64}$",
        description="a deployment's fingerprint (64 hex digits) or ID (CI baselines)",
    )
    origin: Run.Origin | None = None
    limit: int = Field(50, ge=-INT64_MAX, le=INT64_MAX, description="1 to 200 (clamped)")
    offset: int = Field(0, ge=0, le=INT32_MAX)

    @property
    def page_size(self) -> int:
        return min(max(self.limit, 1), 200)

    def filters(self) -> selectors.RunFilters:
        return selectors.RunFilters(
            **self.model_dump(exclude={"limit", "offset"}, exclude_none=True)
        )


def _summary(run: Run) -> dict[str, Any]:
    return selectors.run_summary(run=run)


def _point(point: Point) -> dict[str, Any]:
    return {
        **{
            field: getattr(point, field) for field in PointOut.model_fields if hasattr(point, field)
        },
        "interactivity_tok_s_user": point.interactivity,
    }


@router.post(
    "",
    auth=BearerToken(),
    # 403: a document claiming a job it is not (the job secret, apps.api.api).
    response={200: RunCreated, 201: RunCreated, 403: Errors, **UPLOAD_ERRORS},
    summary="Submit a result document",
    # The body is the ResultDocument, validated by run_ingest from the raw bytes (records as
    # compact rows, apps/runs/lean.py), not by ninja (a dict tree, then models: ~7x the
    # document in memory). Its schema is documented as before (apps/api/api.py adds it).
    openapi_extra={
        "requestBody": {
            "content": {"application/json": {"schema": {"$ref": DOCUMENT_REF}}},
            "required": True,
        }
    },
)
def submit_run(
    request: HttpRequest,
    visibility: Visibility | None = VISIBILITY_PARAM,
    private: bool = PRIVATE_PARAM,
):
    """Stores the document in one transaction: 201 with the new run's id, or 200 with the
    first run's id when the idempotency key was seen before (nothing new is stored).
    Invalid documents store nothing; each error names its JSON path.

    A run submitted here is **public** unless `visibility=private` is given."""
    status, body = run_submit(
        token=request.auth,
        document=request.body,
        visibility=visibility,
        private=private,
        # A scheduled job's worker sends the secret its task carried (workers/submit.py).
        job_secret=request.headers.get(JOB_SECRET_HEADER),
    )
    return Status(status, body)


def run_submit(
    *,
    token: ApiToken,
    document: bytes,
    visibility: Visibility | None = None,
    private: bool = False,
    job_secret: str | None = None,
) -> tuple[int, dict[str, Any]]:
    """POST /api/v1/runs past its token and limits: (201 or 200, the body). Raises what the
    API maps to its errors (apps.api.api); the MCP server's submit_run calls this too."""
    if visibility is not None and private and visibility != "private":
        raise FieldRefused("visibility", VISIBILITY_CONFLICT)
    private = private or visibility == "private"
    outcome = run_ingest(
        document=document,
        org=token.org,
        is_public=not private,
        submitted_by=token,
        job_secret=job_secret,
    )
    if outcome.created:
        audit_record(
            org=token.org,
            actor=f"token {token.prefix}",
            action="run.submitted",
            target=f"run {outcome.run.pk}",
            private=private,
        )
    body = {
        "id": outcome.run.pk,
        "created": outcome.created,
        "url": f"/api/v1/runs/{outcome.run.pk}",
        "page": reverse("run-detail", args=[outcome.run.pk]),
        "visibility": "public" if outcome.run.is_public else "private",
    }
    return (201 if outcome.created else 200), body


# The list's JSON is cached until the next run lands or changes (the runs version is in the
# key): 32 clients reading it then cost a token check and a cache read each, not two queries
# and a schema pass. Only pages that hold runs, in the usual page sizes, with ASCII filters
# (matched case-insensitively, so lower-cased in the key) are stored: made-up filters, offsets
# or sizes cannot fill the cache. Not ninja's @paginate: it slices what the view returns and
# passes the page through the schema on every request, the two steps this cache exists to skip
# (docs/scaling.md, the run list API); the answer keeps its shape, {count, limit, offset, items}.
LIST_CACHED_LIMITS = frozenset({10, 20, 50, 100, 200})
LIST_CACHE_SECONDS = 600
_JSON = JSONRenderer()  # the API's renderer (ninja's default)


def _list_cache_key(
    org: Organization | None, filters: selectors.RunFilters, limit: int, offset: int
) -> str | None:
    values = {name: str(value) for name, value in asdict(filters).items() if value is not None}
    if limit not in LIST_CACHED_LIMITS or not all(v.isascii() for v in values.values()):
        return None
    query = json.dumps({k: v.lower() for k, v in values.items()}, sort_keys=True)
    digest = hashlib.sha256(query.encode()).hexdigest()[:32]
    scope = org.pk if org is not None else "public"
    return f"api:runs:{runs_version()}:{scope}:{limit}:{offset}:{digest}"


@router.get("", response={200: RunPage, 401: Errors, 422: Errors}, summary="List runs")
def list_runs(request: HttpRequest, query: Query[RunQuery]):
    """Public runs, plus the caller's organization's private runs when a token is given."""
    limit = query.page_size
    offset = query.offset
    org = optional_org(request)
    filters = query.filters()
    key = _list_cache_key(org, filters, limit, offset)
    body = cache.get(key) if key else None
    if body is None:
        count, rows = selectors.run_summaries(org=org, filters=filters, offset=offset, limit=limit)
        page = RunPage.model_validate(
            {"count": count, "limit": limit, "offset": offset, "items": rows}
        )
        body = _JSON.render(request, page.model_dump(), response_status=200)
        if key and rows:
            cache.set(key, body, LIST_CACHE_SECONDS)
    return HttpResponse(body, content_type=f"{_JSON.media_type}; charset={_JSON.charset}")


@router.get("/{run_id}", response={200: RunDetail, 401: Errors, 404: Errors}, summary="One run")
def get_run(request: HttpRequest, run_id: int):
    """404 for runs that do not exist and for private runs of other organizations alike."""
    return run_detail(_visible_run(request, run_id))


def run_detail(run: Run) -> dict[str, Any]:
    """One visible run as RunDetail: the API's and the MCP server's `run` (apps/agents)."""
    d = run.deployment
    return {
        **_summary(run),
        "deployment": selectors.run_deployment_facts(run=run),
        "labels": run.labels,
        "environment": run.environment,
        "source": {
            "tool": run.source_tool,
            "citation": run.source_citation,
            "url": run.source_url,
            "file_sha256": run.file_sha256,
            "file_name": run.file_name,
        },
        "request_records": selectors.run_record_count(run=run),
        "points": [_point(p) for p in selectors.run_points(run=run)],
        "accuracy": list(run.accuracy_results.all()),
        "fingerprint": d.fingerprint,
    }


def _visible_run(request: HttpRequest, run_id: int) -> Run:
    return visible_run(org=optional_org(request), run_id=run_id)


def visible_run(*, org: Organization | None, run_id: int) -> Run:
    """The run, or the API's 404 alike for a run that does not exist and for another
    organization's private run (the MCP server's `run` reads through this too)."""
    run = selectors.run_get(org=org, run_id=run_id)
    return run if run is not None else get_object_or_404(Run.objects.none())


@router.get(
    "/{run_id}/document",
    response={200: ResultDocument, 401: Errors, 404: Errors},
    summary="A run's result document",
    by_alias=True,  # the document's field is `schema`, as submitted, not pydantic's `schema_`
)
def get_run_document(request: HttpRequest, run_id: int):
    """The inferboard.run/v1 document, per-request records included: import it anywhere."""
    run = _visible_run(request, run_id)
    response = HttpResponse(
        json.dumps(selectors.run_document(run=run)), content_type="application/json"
    )
    response["Content-Disposition"] = f'attachment; filename="run-{run.pk}.json"'
    return response


@router.get(
    "/{run_id}/requests.jsonl",
    response={200: None, 401: Errors, 404: Errors},
    summary="A run's per-request records as JSON lines",
)
def get_run_requests(request: HttpRequest, run_id: int):
    """One JSON object per request, with `point` (the point's ordinal) on each line."""
    run = _visible_run(request, run_id)
    lines = (
        json.dumps({"point": r.pop("point__ordinal"), **r}) + "\n"
        for r in selectors.run_records(run=run)
    )
    response = StreamingHttpResponse(lines, content_type="application/x-ndjson")
    response["Content-Disposition"] = f'attachment; filename="run-{run.pk}-requests.jsonl"'
    return response


# /api/v1/audit: the runs the row audit flagged (workers/audit.py) -------------------------

audit_router = Router(tags=["audit"])


class AuditReason(Schema):
    code: str = Field(description="the check's stable code (workers/audit.py CODES)")
    paths: list[str] = Field(description="the document's figures and facts involved")
    message: str


class FlaggedRun(Schema):
    run_id: int
    url: str = Field(description="the run in this API")
    page: str = Field(description="the run's page")
    model: str
    accelerator: str
    gpus: int
    origin: str
    source_tool: str
    reasons: list[AuditReason]


class AuditCounts(Schema):
    by_reason: dict[str, int] = Field(description="flagged runs per reason code (once a run)")
    by_accelerator: dict[str, int] = Field(description="flagged runs per accelerator")


class AuditPagination(LimitOffsetPagination):
    """ninja's limit/offset pages, with the counts of every flagged run the filters keep
    (not only the page's) beside them."""

    class Input(Schema):
        # Bounded, so the schema says what the database can take (an offset past 64 bits
        # would reach PostgreSQL as an error, not a page).
        limit: int = Field(50, ge=1, le=INT32_MAX, description="1 to 200 (clamped)")
        offset: int = Field(0, ge=0, le=INT32_MAX)

    class Output(Schema):
        items: list[Any]
        count: int
        counts: AuditCounts

    def paginate_queryset(self, queryset, pagination, request, **params):
        page = super().paginate_queryset(queryset, pagination, request, **params)
        page["counts"] = selectors.audit_counts(queryset)
        page["items"] = [_flagged(run) for run in page["items"]]
        return page


def _flagged(run: Run) -> dict[str, Any]:
    return {
        **selectors.audit_row(run),
        "url": f"/api/v1/runs/{run.pk}",
        "page": reverse("run-detail", args=[run.pk]),
    }


class AuditQuery(Input):
    source: str | None = Field(
        None, min_length=1, max_length=100, description="origin (imported, published) or tool"
    )
    accelerator: str | None = Field(None, min_length=1, max_length=50, description="SKU")
    reason: Literal[tuple(CODES)] | None = Field(  # type: ignore[valid-type]
        None, description="a reason code"
    )


@audit_router.get(
    "", response={200: list[FlaggedRun], 401: Errors, 422: Errors}, summary="Flagged runs"
)
@paginate(AuditPagination, max_limit=200)
def audit_list(request: HttpRequest, query: Query[AuditQuery]):
    """Every visible run the row audit flagged (an imported or published row that contradicts
    itself or a physical bound), with its reasons, and the counts per reason and accelerator
    of all that the filters keep. Flagged runs are shown, never ranked nor priced by default."""
    filters = selectors.AuditFilters(**query.model_dump(exclude_none=True))
    return selectors.flagged_runs(org=optional_org(request), filters=filters)
