"""The result document `inferboard.run/v1`: the contract between what measured and the server.

Workers, importers and the server all speak it. This module must never import Django:
GPU hosts install the worker without the server.

Units: every latency is in milliseconds (`*_ms`), every throughput in tokens (or requests)
per second over the measurement window, every rate in [0, 1].

Here: the measured points, accuracy results and the document itself, and how a document is
parsed. Its field types and limits are result_fields.py; what was measured (model,
deployment, scenario, environment) is result_facts.py.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Mapping
from typing import Any, Final, Literal

from pydantic import ConfigDict, Field, ValidationError, model_validator

from workers.result_facts import Deployment, Environment, ModelInfo, Scenario, Source
from workers.result_fields import (
    MAX_LABELS,
    Count,
    LabelKey,
    LabelValue,
    NonNegative,
    Provenance,
    Rate,
    ShortText,
    Size,
    StrictModel,
    TokenTotal,
    error_loc,
    json_path,
)

SCHEMA_ID: Final = "inferboard.run/v1"
# v1 grows by optional fields only; a document says the revision whose fields it uses.
SCHEMA_REVISION = 3


class Distribution(StrictModel):
    """Summary of per-request values. `method` says how its percentiles were computed."""

    method: str | None = Field(
        None,
        max_length=200,
        description="'linear' (numpy default) when computed from request records; "
        "'reported by <tool> <version>' when a peer tool computed it",
    )
    mean: NonNegative | None = None
    std: NonNegative | None = None
    min: NonNegative | None = None
    p50: NonNegative | None = None
    p90: NonNegative | None = None
    p95: NonNegative | None = None
    p99: NonNegative | None = None
    p999: NonNegative | None = None
    max: NonNegative | None = None

    @model_validator(mode="after")
    def _percentiles_rise(self) -> Distribution:
        previous_name, previous = None, None
        for name in ("min", "p50", "p90", "p95", "p99", "p999", "max"):
            value = getattr(self, name)
            if value is None:
                continue
            if previous is not None and value < previous * (1 - 1e-9):
                raise ValueError(f"{name} ({value}) is below {previous_name} ({previous})")
            previous_name, previous = name, value
        return self


class Latencies(StrictModel):
    ttft: Distribution | None = None
    ttfo: Distribution | None = None
    tpot: Distribution | None = None
    itl: Distribution | None = Field(None, description="per-chunk gaps")
    itl_token_weighted: Distribution | None = Field(
        None, description="a chunk of k tokens contributes k gaps of gap/k"
    )
    e2el: Distribution | None = None
    queue_delay: Distribution | None = None
    ttft_from_sched: Distribution | None = None
    e2el_from_sched: Distribution | None = None


class RequestCounts(StrictModel):
    # total and failed are None when the source counts only successes (sglang `completed`).
    total: Count | None = None
    succeeded: Count
    failed: Count | None = None

    @model_validator(mode="after")
    def _adds_up(self) -> RequestCounts:
        if self.total is None or self.failed is None:
            if self.total is not None or self.failed is not None:
                raise ValueError("total and failed are stated together or not at all")
            return self
        if self.succeeded + self.failed != self.total:
            raise ValueError("succeeded + failed must equal total")
        return self


class TokenCounts(StrictModel):
    input: TokenTotal | None = None
    output: TokenTotal | None = None
    cached: TokenTotal | None = Field(None, description="None: the server did not report it")
    source: Literal["usage", "tokenizer", "requested", "unknown"] = "usage"


class Throughput(StrictModel):
    """Whole-deployment rates over the window; per GPU is derived by dividing by GPUs."""

    requests_per_s: NonNegative | None = None
    input_tok_s: NonNegative | None = None
    output_tok_s: NonNegative | None = None
    total_tok_s: NonNegative | None = None
    unlabelled_tok_s: NonNegative | None = Field(
        None, description="aggregate tok/s whose kind (output or total) the source did not state"
    )


RequestStatus = Literal[
    "ok",
    "http_error",
    "timeout",
    "connection_error",
    "inband_error",
    "empty_output",
    "short_output",
    "malformed_sse",
    "truncated",  # the stream ended without [DONE] or a finish_reason: cut short
    "cancelled",
    "other",
]


class RequestRecord(StrictModel):
    # Compact on purpose: documents carry tens of thousands of these.
    i: Count = Field(description="request index within the point")
    t_sched_ms: float | None = Field(None, description="planned send, from the window start")
    t_send_ms: float = Field(description="actual send, from the window start")
    ttft_ms: NonNegative | None = None
    ttfo_ms: NonNegative | None = None
    e2el_ms: NonNegative | None = None
    tpot_ms: NonNegative | None = None
    n_in: Count | None = None
    n_out: Count | None = None
    cached: Count | None = None
    chunks: Count | None = None
    status: RequestStatus = "ok"
    http_status: int | None = Field(None, ge=100, le=599)
    error: str | None = Field(None, max_length=500, pattern=r"^[^\x00]*$")
    session: Count | None = Field(None, description="revision 2: session index in the point")
    turn: Count | None = Field(None, description="revision 2: turn index within its session")

    # Replaces the base's NUL validator with a plain method (a pydantic descriptor in the
    # base, so mypy sees another kind of member).
    def _no_nul(self) -> StrictModel:  # type: ignore[override]
        # Not a validator here: `error` is the one free text, and its pattern (checked in
        # Rust) keeps NUL out without a Python call for each of 100,000 records.
        return self


class SpeculativeAcceptance(StrictModel):
    """What the source measured of speculative decoding (vLLM `spec_decode_*` fields)."""

    rate: Rate | None = None
    length: NonNegative | None = Field(None, description="mean tokens per verify step")
    drafts: Count | None = None
    draft_tokens: Count | None = None
    accepted_tokens: Count | None = None
    per_position: list[Rate] | None = Field(None, max_length=64)
    source: Literal["requests", "server_metrics", "imported"] | None = Field(
        None,
        description="revision 2: per-request draft counts (llama.cpp's timings), the "
        "server's /metrics counters over the window, or an imported file",
    )


class TurnStats(StrictModel):
    """One turn index over every session of a point: how TTFT grows with the context."""

    turn: Count
    requests: Count
    succeeded: Count
    context_tokens_mean: NonNegative | None = Field(None, description="mean prompt tokens")
    ttft_ms: Distribution | None = None
    prefix_cache_hit_rate: Rate | None = Field(None, description="None: not reported")


class SessionStats(StrictModel):
    total: Count
    completed: Count = Field(description="sessions whose every turn succeeded")
    completion_s: Distribution | None = Field(
        None, description="first send to last answer of each completed session, seconds"
    )


class ServerSeries(StrictModel):
    """One server metric over a point's window, under an engine-neutral name."""

    name: str = Field(min_length=1, max_length=100, description="e.g. requests_waiting")
    source: str = Field(min_length=1, max_length=200, description="the engine's own name")
    kind: Literal["gauge", "counter"]
    t_ms: list[float] = Field(max_length=100_000, description="from the point's window start")
    values: list[float] = Field(max_length=100_000)

    @model_validator(mode="after")
    def _aligned(self) -> ServerSeries:
        if len(self.t_ms) != len(self.values):
            raise ValueError("t_ms and values must have the same length")
        return self


class ServerMetrics(StrictModel):
    """The server's own view, scraped from its Prometheus /metrics while the point ran."""

    engine: str | None = Field(None, max_length=100, description="vllm, sglang, llama.cpp")
    interval_s: float = Field(gt=0)
    series: list[ServerSeries] = Field(default_factory=list, max_length=100)
    queued_max: NonNegative | None = Field(None, description="most requests the server queued")
    preemptions: NonNegative | None = Field(None, description="preemptions during the window")


class ClientLoad(StrictModel):
    """The load generator's own process during one level: was the client the bottleneck?"""

    cpu_utilization: NonNegative = Field(
        description="client process CPU time / wall time over the level; 1.0 is one core busy"
    )
    loop_lag_p99_ms: NonNegative | None = Field(
        None, description="event-loop lag: how late a periodic timer ran, p99"
    )
    loop_lag_max_ms: NonNegative | None = None
    cpu_threshold: NonNegative | None = Field(None, description="client-bound at or above this")
    loop_lag_threshold_ms: NonNegative | None = Field(
        None, description="client-bound when lag p99 is at or above this"
    )
    processes: int = Field(1, ge=1, description="client processes; CPU is their mean")


class Point(StrictModel):
    """One load level of a run."""

    label: str | None = Field(None, max_length=100)
    concurrency: Size | None = None
    request_rate: float | None = Field(None, gt=0, description="open-loop arrivals per second")
    window_s: float | None = Field(None, gt=0)
    requests: RequestCounts | None = None
    tokens: TokenCounts | None = None
    throughput: Throughput
    latency_ms: Latencies = Field(default_factory=Latencies)
    interactivity_tok_s_user: Distribution | None = Field(
        None, description="percentiles over per-request 1/TPOT"
    )
    tokens_per_chunk: NonNegative | None = None
    goodput_rps: NonNegative | None = None
    prefix_cache_hit_rate: Rate | None = Field(None, description="observed; None: not reported")
    prompt_length_mismatch_rate: Rate | None = None
    client_bound: bool | None = Field(
        None, description="the client was saturated at this level; never a leaderboard point"
    )
    client: ClientLoad | None = None
    success_rate: Rate | None = Field(
        None, description="only where counts are unknown (published figures); else derived"
    )
    errors: dict[str, Count] = Field(default_factory=dict)
    speculative_acceptance: SpeculativeAcceptance | None = None
    turns: list[TurnStats] | None = Field(None, max_length=10_000, description="revision 2")
    sessions: SessionStats | None = Field(None, description="revision 2")
    server: ServerMetrics | None = Field(None, description="revision 2")
    records: list[RequestRecord] | None = None


class AccuracyItem(StrictModel):
    item_id: str = Field(min_length=1, max_length=200)
    correct: bool | None = Field(None, description="None when the item failed (see failure)")
    extracted: str | None = Field(None, max_length=500)
    gold: str | None = Field(None, max_length=500)
    finish_reason: str | None = Field(None, max_length=50)
    output_tokens: Count | None = None
    failure: str | None = Field(None, max_length=100)
    response: str | None = Field(None, max_length=100_000, description="never for GPQA")


class AccuracyResult(StrictModel):
    protocol: ShortText = Field(description="e.g. gsm8k-5shot-v1")
    protocol_hash: str | None = Field(None, max_length=100)
    task: ShortText
    metric: ShortText = Field(description="e.g. exact_match_numeric, em_strict")
    n: Count | None = Field(None, description="scored items; None when the source did not say")
    correct: float | None = Field(None, ge=0)
    kind: Literal["proportion", "score"] = Field(
        "proportion",
        description="proportion: share of n items right (binomial interval); score: any other "
        "metric (F1, BLEU, perplexity ...), no n and no binomial interval",
    )
    score: float
    stderr: NonNegative | None = None
    ci_low: Rate | None = None
    ci_high: Rate | None = None
    failures: dict[str, Count] = Field(default_factory=dict)
    data_hash: str | None = Field(None, max_length=100)
    items: list[AccuracyItem] | None = None

    @model_validator(mode="after")
    def _consistent(self) -> AccuracyResult:
        if self.kind == "proportion" and not 0 <= self.score <= 1:
            raise ValueError("a proportion's score must be in [0, 1]; use kind 'score'")
        if self.kind == "score" and (
            self.n is not None or self.correct is not None or self.ci_low is not None
        ):
            # A binomial n or interval on an F1 or BLEU would be read as one (Wilson).
            raise ValueError("a score has no n, correct count or binomial interval")
        if self.n is not None and self.correct is not None and self.correct > self.n:
            raise ValueError("correct must not exceed n")
        if self.ci_low is not None and self.ci_high is not None and self.ci_low > self.ci_high:
            raise ValueError("ci_low must not exceed ci_high")
        return self


class ResultDocument(StrictModel):
    schema_: Literal["inferboard.run/v1"] = Field(SCHEMA_ID, alias="schema")
    schema_revision: int | None = Field(
        None,
        ge=1,
        le=SCHEMA_REVISION,
        description="additive revisions of v1; absent: 1. 2 adds scenario.sessions, "
        "scenario.trace, point.turns, point.sessions, point.server and records' "
        "session/turn; 3 adds stopped_early",
    )
    idempotency_key: str = Field(
        min_length=8,
        max_length=100,
        pattern=r"^[A-Za-z0-9:._-]+$",
        description="a UUID from the worker; importers use 'sha256:<file hash>'",
    )
    provenance: Provenance
    status: Literal["succeeded", "failed", "partial"] = "succeeded"
    stopped_early: str | None = Field(
        None,
        min_length=1,
        max_length=500,
        description="revision 3: why the run ended before its planned end (cancelled, "
        "interrupted), in its source's words; its points hold what it measured until then, "
        "its status is partial (failed when nothing succeeded), and it never ranks by default",
    )
    source: Source | None = None
    model: ModelInfo
    deployment: Deployment
    scenario: Scenario | None = None
    environment: Environment = Field(default_factory=Environment)
    points: list[Point] = Field(default_factory=list)
    accuracy: list[AccuracyResult] = Field(default_factory=list)
    labels: dict[LabelKey, LabelValue] | None = Field(
        None,
        max_length=MAX_LABELS,
        description="free labels (branch, commit, pr, 'unofficial' ...): a run labelled "
        "unofficial is shown beside official ones, never ranked with them",
    )

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    @model_validator(mode="after")
    def _has_content(self) -> ResultDocument:
        if not self.points and not self.accuracy:
            raise ValueError("a run needs at least one point or one accuracy result")
        if self.points and self.scenario is None:
            raise ValueError("points need a scenario")
        if self.stopped_early and self.status == "succeeded":
            # It measured part of what it set out to: never stored as a whole run.
            raise ValueError("a run that stopped early is partial, or failed, not succeeded")
        return self

    @classmethod
    def measured(cls, **fields: Any) -> ResultDocument:
        """A run this worker measured: keyed by a fresh UUID (an import's key is its file's
        hash, so the same file stores once; every measurement is a new run)."""
        return cls(idempotency_key=str(uuid.uuid4()), provenance="measured", **fields)

    def deployment_fingerprint(self) -> str:
        return deployment_fingerprint(self.model.name, self.deployment)

    def to_json_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)


def percentile_methods_fill(document: ResultDocument) -> None:
    """Say how each distribution that does not say was computed: 'linear' when our worker
    measured it from request records, else 'reported by <tool>' (what the peer tool or
    publisher computed, whatever its method)."""
    if document.provenance in ("measured", "simulated"):
        method = "linear"
    else:
        source = document.source or Source()
        method = f"reported by {source.tool or source.citation or 'an unnamed source'}"[:200]
    for point in document.points:
        dists = [getattr(point.latency_ms, name) for name in Latencies.model_fields]
        dists.append(point.interactivity_tok_s_user)
        for dist in dists:
            if dist is not None and dist.method is None:
                dist.method = method


def deployment_fingerprint(model_name: str, deployment: Deployment) -> str:
    """A stable hash over everything that was served (not over notes or free text)."""
    served = deployment.model_dump(mode="json", exclude={"notes"})
    # Added later: leaving them out when unset keeps every earlier fingerprint unchanged.
    for later in ("disaggregation", "multinode"):
        if served.get(later) is None:
            served.pop(later, None)
    if served.get("disaggregation"):
        served["disaggregation"] = {
            k: v for k, v in served["disaggregation"].items() if v is not None
        }
    canonical = json.dumps({"model": model_name, **served}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


class DocumentError(ValueError):
    """A document that does not validate. `errors` holds (json_path, message) pairs."""

    def __init__(self, errors: list[tuple[str, str]]):
        self.errors = errors
        super().__init__("; ".join(f"{path}: {message}" for path, message in errors))


def error_message(error: Mapping[str, Any]) -> str:
    ctx = error.get("ctx") or {}
    kind = error["type"]
    bounds = {
        "greater_than_equal": ">=",
        "greater_than": ">",
        "less_than_equal": "<=",
        "less_than": "<",
    }
    if kind in bounds:
        limit = next(iter(ctx.values()))
        if isinstance(limit, float) and limit.is_integer():
            limit = int(limit)
        return f"must be {bounds[kind]} {limit}"
    if kind in ("extra_forbidden", "unexpected_keyword_argument"):  # a model; a dataclass
        return "unknown field"
    if kind == "missing":
        return "required"
    if kind == "string_pattern_mismatch" and ctx.get("pattern") == r"^[^\x00]*$":
        return "must not contain a NUL character (\\u0000)"
    if kind == "value_error":
        return str(ctx.get("error", error["msg"]))
    return error["msg"][0].lower() + error["msg"][1:]


class DuplicateKey(ValueError):
    """A JSON object names the same key twice (the last one would silently win)."""

    def __init__(self, key: str) -> None:
        super().__init__(f"duplicate key {key!r}")
        self.key = key


def unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """`object_pairs_hook` for json.loads: a dict, or DuplicateKey for a repeated key."""
    result = dict(pairs)
    if len(result) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise DuplicateKey(key)
            seen.add(key)
    return result


def _check_pairs(pairs: list[tuple[str, Any]]) -> None:
    # Keeps nothing: only the check matters, so memory stays that of the deepest object. The
    # whole pass costs about what json.loads does (~0.4 s for a 21 MB document).
    if len(pairs) > 1 and len(dict(pairs)) != len(pairs):
        unique_keys(pairs)


def reject_duplicate_keys(data: str | bytes) -> None:
    """Raise DuplicateKey when any object in the JSON text repeats a key; JSON that does not
    parse is left to the validator, which names what is wrong with it."""
    try:
        json.loads(data, object_pairs_hook=_check_pairs)
    except DuplicateKey:
        raise
    except ValueError:
        pass


def parse_document[D: ResultDocument](
    # mypy cannot check a default against a type variable (python/mypy#3737); the default
    # is D's own bound, so every call is typed right.
    data: dict[str, Any] | str | bytes,
    model: type[D] = ResultDocument,  # type: ignore[assignment]
) -> D:
    """Validate a document, raising DocumentError with JSON paths of every problem.

    `model` may be a subclass with a leaner form of some field (the server's ingestion).
    A key given twice in one object is an error naming the key (JSON parsers keep the last
    one, so `"provenance": "measured", "provenance": "published"` would store published)."""
    try:
        if isinstance(data, str | bytes):
            reject_duplicate_keys(data)
            return model.model_validate_json(data)
        return model.model_validate(data)
    except DuplicateKey as exc:
        message = "appears more than once in one object (duplicate key); send it once"
        raise DocumentError([(exc.key, message)]) from None
    except ValidationError as exc:
        raise DocumentError(
            [(json_path(error_loc(e)), error_message(e)) for e in exc.errors(include_url=False)]
        ) from None


def json_schema() -> dict[str, Any]:
    schema = ResultDocument.model_json_schema(by_alias=True)
    schema["$id"] = "https://inferboard.dev/schemas/inferboard.run/v1.json"
    schema["title"] = SCHEMA_ID
    return schema


if __name__ == "__main__":
    # `python -m workers.results > workers/schema/inferboard.run.v1.json` refreshes the export.
    print(json.dumps(json_schema(), indent=2, sort_keys=True))
