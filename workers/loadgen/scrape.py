"""The server's own view: its Prometheus /metrics, scraped at a fixed interval during a run.

vLLM, sglang and llama.cpp's server each expose one, under their own names; the series are
stored under engine-neutral names (`requests_waiting`, `kv_cache_usage` ...) with the
engine's original name kept beside each. The text format is parsed by prometheus_client,
not by hand.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from time import perf_counter_ns
from typing import Literal

import httpx
from prometheus_client.parser import text_string_to_metric_families

from workers.loadgen.metrics import NS_PER_MS, NS_PER_S, RequestTiming
from workers.results import ServerMetrics, ServerSeries, SpeculativeAcceptance

Kind = Literal["gauge", "counter"]


@dataclass(frozen=True, slots=True)
class Neutral:
    name: str
    kind: Kind
    sources: tuple[str, ...]  # engines' sample names, first match wins
    combine: Literal["sum", "mean"] = "sum"  # over label sets (several ranks, models)


# What matters to read a run: load, queueing, KV-cache pressure, the prefix cache,
# speculative decoding and preemptions. Names as each engine exports them.
NEUTRAL_METRICS: tuple[Neutral, ...] = (
    Neutral(
        "requests_running",
        "gauge",
        ("vllm:num_requests_running", "sglang:num_running_reqs", "llamacpp:requests_processing"),
    ),
    Neutral(
        "requests_waiting",
        "gauge",
        ("vllm:num_requests_waiting", "sglang:num_queue_reqs", "llamacpp:requests_deferred"),
    ),
    Neutral(
        "kv_cache_usage",
        "gauge",
        (
            "vllm:kv_cache_usage_perc",
            "vllm:gpu_cache_usage_perc",
            "sglang:token_usage",
            "llamacpp:kv_cache_usage_ratio",
        ),
        combine="mean",
    ),
    Neutral(
        "prompt_tokens",
        "counter",
        ("vllm:prompt_tokens_total", "sglang:prompt_tokens_total", "llamacpp:prompt_tokens_total"),
    ),
    Neutral(
        "generation_tokens",
        "counter",
        (
            "vllm:generation_tokens_total",
            "sglang:generation_tokens_total",
            "llamacpp:tokens_predicted_total",
        ),
    ),
    Neutral(
        "prefix_cache_hit_tokens",
        "counter",
        ("vllm:prefix_cache_hits_total", "llamacpp:prompt_tokens_cached_total"),
    ),
    Neutral("prefix_cache_query_tokens", "counter", ("vllm:prefix_cache_queries_total",)),
    Neutral("prefix_cache_hit_rate", "gauge", ("sglang:cache_hit_rate",), combine="mean"),
    Neutral(
        "spec_draft_tokens",
        "counter",
        ("vllm:spec_decode_num_draft_tokens_total", "llamacpp:spec_decode_num_draft_tokens_total"),
    ),
    Neutral(
        "spec_accepted_tokens",
        "counter",
        (
            "vllm:spec_decode_num_accepted_tokens_total",
            "llamacpp:spec_decode_num_accepted_tokens_total",
        ),
    ),
    Neutral(
        "spec_drafts",
        "counter",
        ("vllm:spec_decode_num_drafts_total", "llamacpp:spec_decode_num_drafts_total"),
    ),
    Neutral("spec_accept_length", "gauge", ("sglang:spec_accept_length",), combine="mean"),
    Neutral("preemptions", "counter", ("vllm:num_preemptions_total",)),
)

ENGINE_PREFIXES = {"vllm:": "vllm", "sglang:": "sglang", "llamacpp:": "llama.cpp"}


@dataclass(slots=True)
class Reading:
    t_ns: int  # when the answer arrived
    values: dict[str, tuple[str, float]]  # neutral name -> (source name, value)
    # When the scrape was sent (defaults to the arrival). An answer that arrives after a
    # window ends may still have been made before its last request was counted; only one
    # asked for after the end is sure to count everything in the window.
    sent_ns: int | None = None


def parse_metrics(text: str) -> tuple[dict[str, tuple[str, float]], str | None]:
    """Neutral name -> (the engine's name, value) for every known metric in one scrape, and
    the engine the names belong to (None: none known)."""
    samples: dict[str, list[float]] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            samples.setdefault(sample.name, []).append(float(sample.value))
    engine = next(
        (e for prefix, e in ENGINE_PREFIXES.items() if any(n.startswith(prefix) for n in samples)),
        None,
    )
    values: dict[str, tuple[str, float]] = {}
    for metric in NEUTRAL_METRICS:
        source = next((s for s in metric.sources if s in samples), None)
        if source is None:
            continue
        found = samples[source]
        value = sum(found) if metric.combine == "sum" else sum(found) / len(found)
        values[metric.name] = (source, value)
    return values, engine


@dataclass
class Scraper:
    """Scrapes `url` every `interval_s` (a fixed schedule, not interval after each answer);
    a reading is stamped when its answer arrived."""

    url: str
    interval_s: float = 1.0
    headers: dict[str, str] = field(default_factory=dict)
    readings: list[Reading] = field(default_factory=list)
    engine: str | None = None
    errors: int = 0

    async def scrape(self, http: httpx.AsyncClient) -> None:
        sent_ns = perf_counter_ns()
        try:
            response = await http.get(self.url, headers=self.headers)
            response.raise_for_status()
            values, engine = parse_metrics(response.text)
        except (httpx.HTTPError, ValueError):
            # A missed scrape is a gap in the series, never a failed run.
            self.errors += 1
            return
        self.engine = self.engine or engine
        self.readings.append(Reading(perf_counter_ns(), values, sent_ns))

    async def run(self, http: httpx.AsyncClient) -> None:
        interval_ns = int(self.interval_s * NS_PER_S)
        next_ns = perf_counter_ns()
        while True:
            next_ns += interval_ns
            await asyncio.sleep(max(0.0, (next_ns - perf_counter_ns()) / NS_PER_S))
            await self.scrape(http)

    def window(self, start_ns: int, end_ns: int) -> ServerMetrics | None:
        """The readings that cover [start, end]: those inside it, the last one answered before
        it and the first one asked for after it, so counter deltas span the whole window."""
        before = [r for r in self.readings if r.t_ns <= start_ns]
        after = [r for r in self.readings if _sent(r) >= end_ns]
        inside = [r for r in self.readings if r.t_ns > start_ns and _sent(r) < end_ns]
        chosen = before[-1:] + inside + after[:1]
        if not chosen:
            return None
        series = []
        for metric in NEUTRAL_METRICS:
            points = [(r.t_ns, r.values[metric.name]) for r in chosen if metric.name in r.values]
            if not points:
                continue
            series.append(
                ServerSeries(
                    name=metric.name,
                    source=points[-1][1][0],
                    kind=metric.kind,
                    t_ms=[(t - start_ns) / NS_PER_MS for t, _ in points],
                    values=[value for _, (_, value) in points],
                )
            )
        by_name = {s.name: s for s in series}
        waiting = by_name.get("requests_waiting")
        preempted = by_name.get("preemptions")
        return ServerMetrics(
            engine=self.engine,
            interval_s=self.interval_s,
            series=series,
            queued_max=max(waiting.values) if waiting else None,
            preemptions=preempted.values[-1] - preempted.values[0] if preempted else None,
        )


def _sent(reading: Reading) -> int:
    return reading.t_ns if reading.sent_ns is None else reading.sent_ns


def server_acceptance(server: ServerMetrics) -> SpeculativeAcceptance | None:
    """Speculative acceptance over a point's window from the server's own counters (vLLM,
    llama.cpp) or its acceptance-length gauge (sglang); None when it did not speculate."""
    by_name = {s.name: s for s in server.series}

    def rise(name: str) -> int | None:
        series = by_name.get(name)
        return round(series.values[-1] - series.values[0]) if series else None

    drafted, accepted, drafts = (
        rise("spec_draft_tokens"),
        rise("spec_accepted_tokens"),
        rise("spec_drafts"),
    )
    if drafted and accepted is not None:
        return SpeculativeAcceptance(
            rate=min(1.0, accepted / drafted),
            # Each verify step yields its accepted drafts plus the target's own token.
            length=1 + accepted / drafts if drafts else None,
            drafts=drafts,
            draft_tokens=drafted,
            accepted_tokens=accepted,
            source="server_metrics",
        )
    length = by_name.get("spec_accept_length")
    if length is not None and length.values:
        return SpeculativeAcceptance(
            length=sum(length.values) / len(length.values), source="server_metrics"
        )
    return None


def metrics_url(root: str) -> str:
    return root.rstrip("/") + "/metrics"


async def probe(url: str, headers: dict[str, str] | None = None) -> bool:
    """Whether `url` answers with Prometheus text naming at least one known metric."""
    async with httpx.AsyncClient(timeout=10) as http:
        scraper = Scraper(url, headers=headers or {})
        await scraper.scrape(http)
        return bool(scraper.readings and scraper.readings[0].values)


@contextlib.asynccontextmanager
async def scraping(scraper: Scraper) -> AsyncIterator[Scraper]:
    """Scrape in the background for the duration of the block, and once more at its end."""
    async with httpx.AsyncClient(timeout=max(1.0, scraper.interval_s * 5)) as http:
        # One reading before anything is measured, so every window has one before it.
        await scraper.scrape(http)
        task = asyncio.create_task(scraper.run(http))
        try:
            yield scraper
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            await scraper.scrape(http)


def point_window(timings: Sequence[RequestTiming]) -> tuple[int, int] | None:
    """The measured window of one point, as build_point defines it (warm-up left out)."""
    measured = [t for t in timings if not t.warmup]
    if not measured:
        return None
    return min(t.t_send_ns for t in measured), max(t.last_ns() for t in measured)
