"""What a result document says was measured, and how: the model, the deployment serving it,
the scenario with its SLO, and the environment. Never imports Django.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from workers import slo as slo_rule
from workers.result_fields import (
    MAX_EXTRA_BYTES,
    Count,
    NonNegative,
    Rate,
    ShortText,
    Size,
    StrictModel,
    field_problem,
    json_problem,
)

# The longest level a scenario may ask for: 30 days.
MAX_DURATION_S = 30 * 24 * 3600


class Source(StrictModel):
    """Where a run came from when a worker of ours did not measure it."""

    tool: str | None = Field(None, max_length=100, description="e.g. 'vllm bench serve 0.11.0'")
    citation: str | None = Field(None, max_length=2000)
    url: str | None = Field(None, max_length=2000)
    file_sha256: str | None = Field(None, pattern=r"^[0-9a-f]{64}$")
    file_name: str | None = Field(None, max_length=500)


class ModelInfo(StrictModel):
    name: ShortText
    family: str | None = Field(None, max_length=200)
    revision: str | None = Field(None, max_length=200)


class Engine(StrictModel):
    name: ShortText = Field(description="sglang, vllm, atom, trtllm, llama.cpp ...")
    version: str | None = Field(None, max_length=100)
    image_digest: str | None = Field(None, max_length=200)


class Quantization(StrictModel):
    weights: str = Field(min_length=1, max_length=100, description="BF16, FP8, MXFP4, NVFP4 ...")
    activations: str | None = Field(None, max_length=100)
    kv_cache: str | None = Field(None, max_length=100)
    note: str | None = Field(None, max_length=500)


class Parallelism(StrictModel):
    """None means 'not stated by the source', which is not the same as 1."""

    tp: Size | None = None
    dp: Size | None = None
    ep: Size | None = None
    pp: Size | None = None
    dp_attention: bool | None = None

    def label(self) -> str:
        parts = [f"{k.upper()}{v}" for k, v in self._sizes() if v and v > 1]
        if self.dp_attention:
            parts.append("DP-attn")
        return "×".join(parts) if parts else ("TP1" if self.tp == 1 else "unstated")

    def _sizes(self) -> list[tuple[str, int | None]]:
        return [("tp", self.tp), ("dp", self.dp), ("ep", self.ep), ("pp", self.pp)]


class Speculative(StrictModel):
    method: str = Field(min_length=1, max_length=100, description="mtp, eagle, ngram ...")
    draft_tokens: Size | None = None


class PoolShape(StrictModel):
    """How one pool of a disaggregated deployment is laid out (None: not stated)."""

    tp: Size | None = None
    ep: Size | None = None
    dp_attention: bool | None = None
    workers: Size | None = Field(None, description="engine instances in the pool")

    def label(self) -> str:
        parts = [f"{k.upper()}{v}" for k, v in (("tp", self.tp), ("ep", self.ep)) if v and v > 1]
        if self.dp_attention:
            parts.append("DP-attn")
        return "×".join(parts) or ("TP1" if self.tp == 1 else "")


class Disaggregation(StrictModel):
    """Prefill and decode served by separate GPU pools (e.g. InferenceX 'ctx 8 gen 8')."""

    prefill_gpus: Size
    decode_gpus: Size
    prefill: PoolShape | None = None
    decode: PoolShape | None = None

    def label(self) -> str:
        """'1P TP8 + 2D TP8×EP8': workers and layout of each pool, as far as stated."""

        def side(letter: str, gpus: int, shape: PoolShape | None) -> str:
            workers = shape.workers if shape and shape.workers else None
            layout = shape.label() if shape else ""
            head = f"{workers}{letter}" if workers else f"{letter}({gpus} GPUs)"
            return f"{head} {layout}".strip()

        return (
            f"{side('P', self.prefill_gpus, self.prefill)} + "
            f"{side('D', self.decode_gpus, self.decode)}"
        )


class Deployment(StrictModel):
    accelerator: str = Field(min_length=1, max_length=50, description="SKU: MI355X, B200 ...")
    gpus: Size
    nodes: Size = 1
    engine: Engine
    quantization: Quantization
    parallelism: Parallelism = Field(default_factory=Parallelism)
    speculative: Speculative | None = None
    disaggregation: Disaggregation | None = None
    multinode: bool | None = Field(None, description="served across nodes; None: not stated")
    engine_flags: list[str] = Field(default_factory=list, max_length=500)
    notes: str | None = Field(None, max_length=2000)

    @model_validator(mode="after")
    def _gpus_are_the_pools(self) -> Deployment:
        # Every per-GPU figure is over the deployment's GPUs: a disaggregated one's GPUs are
        # its pools', or each figure of it would read (P+D)/gpus times what was measured.
        pools = self.disaggregation
        if pools is not None and self.gpus != pools.prefill_gpus + pools.decode_gpus:
            raise field_problem(
                "gpus",
                f"is {self.gpus}, but a disaggregated deployment's GPUs are its pools': "
                f"prefill_gpus + decode_gpus = {pools.prefill_gpus} + {pools.decode_gpus} = "
                f"{pools.prefill_gpus + pools.decode_gpus}",
            )
        return self


class SloBound(StrictModel):
    metric: Literal["ttft", "tpot", "e2el", "interactivity"]
    percentile: str = Field(
        description='"p50", "p90", "p95", "p99" or "p99.9"',
        json_schema_extra={"pattern": slo_rule.PERCENTILE_PATTERN},
    )
    limit: float = Field(gt=0)
    unit: Literal["ms", "s", "tok/s/user"] = Field(
        "ms", description="ms or s for latencies, tok/s/user for interactivity (a floor)"
    )

    @field_validator("percentile")
    @classmethod
    def _known_percentile(cls, value: str) -> str:
        return slo_rule.percentile_name(value)

    @model_validator(mode="after")
    def _unit_fits(self) -> SloBound:
        slo_rule.Bound(self.metric, self.percentile, self.limit, self.unit)
        return self


class Slo(StrictModel):
    """Bounds plus a minimum success rate (workers/slo.py decides meets / misses / cannot
    check). The older fields still mean what they did: each at `ttft_percentile`, in ms."""

    ttft_ms: float | None = Field(None, gt=0, description="legacy: TTFT bound at ttft_percentile")
    ttft_percentile: float = Field(
        99,
        gt=0,
        le=100,
        description="legacy: the percentile of ttft_ms, tpot_ms and e2el_ms",
        json_schema_extra={"enum": [50, 90, 95, 99, 99.9]},
    )
    tpot_ms: float | None = Field(None, gt=0, description="legacy: TPOT bound at ttft_percentile")
    e2el_ms: float | None = Field(None, gt=0, description="legacy: E2EL bound at ttft_percentile")
    bounds: list[SloBound] = Field(default_factory=list, max_length=20)
    min_success_rate: Rate = Field(
        slo_rule.DEFAULT_MIN_SUCCESS_RATE, description="a point with fewer successes misses"
    )

    @field_validator("ttft_percentile")
    @classmethod
    def _stored_percentile(cls, value: float) -> float:
        slo_rule.percentile_name(value, "ttft_percentile")
        return value

    def rule(self) -> slo_rule.Slo:
        """The SLO as workers/slo.py judges it."""
        legacy = slo_rule.from_legacy(
            ttft_ms=self.ttft_ms,
            ttft_percentile=self.ttft_percentile,
            tpot_ms=self.tpot_ms,
            e2el_ms=self.e2el_ms,
        )
        extra = tuple(slo_rule.Bound(b.metric, b.percentile, b.limit, b.unit) for b in self.bounds)
        return slo_rule.Slo(legacy.bounds + extra, self.min_success_rate)


class Scenario(StrictModel):
    preset: str | None = Field(None, max_length=100, description="name of a server-side preset")
    name: str | None = Field(None, min_length=1, max_length=200)
    input_tokens: Size
    output_tokens: Size
    # None = the source did not state it (an imported file); never read as 0. The load
    # generator always states both.
    length_spread: Rate | None = Field(
        None, description="±fraction of uniform length spread; null: not stated"
    )
    prefix_cache_hit_rate: Rate | None = Field(
        None, description="target prefix cache hit rate; null: not stated"
    )
    dataset: str = Field("random", max_length=100)
    arrival: Literal["closed", "open"] = "closed"
    warmup_requests: Count = 0
    # A level shorter than a tenth of a second measures nothing (5e-324 was stored once).
    duration_s: float | None = Field(None, ge=0.1, le=MAX_DURATION_S)
    request_count: Size | None = None
    slo: Slo | None = None
    # Revision 2 (optional, so revision-1 documents still ingest): multi-turn sessions and
    # trace replay are described by their parameters and the trace's identity, never by a
    # file only the measurer holds.
    sessions: SessionScenario | None = None
    trace: TraceIdentity | None = None


class SessionScenario(StrictModel):
    """Conversations whose turns depend on earlier ones: turn t's prompt is the whole
    conversation so far (every earlier message and answer) plus one new message."""

    kind: Literal["chat", "agentic"] = "chat"
    turns: Size = Field(description="turns per session")
    system_tokens: Count = Field(0, description="a system prompt shared by every session")
    first_tokens: Size = Field(description="the first user message, unique per session")
    turn_tokens: Size = Field(description="each later user or tool message")
    output_tokens: Size = Field(description="answer tokens per turn")
    think_time_s: NonNegative = Field(0.0, description="pause between an answer and the next turn")
    sessions: Size | None = Field(None, description="sessions per load level")


class TraceIdentity(StrictModel):
    """A replayed file: runs replaying the same bytes at the same scale are comparable."""

    name: ShortText
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    format: Literal["mooncake", "prompts-jsonl", "sharegpt"] = "mooncake"
    scale: float = Field(1.0, gt=0, description="time scale: 2 replays twice as fast")
    requests: Count | None = None
    block_tokens: Size | None = Field(None, description="tokens per hash_ids block")


class Environment(StrictModel):
    worker: str | None = Field(None, max_length=200)
    host: str | None = Field(None, max_length=200)
    loadgen_version: str | None = Field(None, max_length=100)
    started_at: datetime | None = None
    finished_at: datetime | None = None
    extra: dict[str, Any] = Field(default_factory=dict)

    @field_validator("extra")
    @classmethod
    def _bounded(cls, extra: dict[str, Any]) -> dict[str, Any]:
        problem = json_problem(extra)
        if problem:
            raise ValueError(problem)
        if len(json.dumps(extra, separators=(",", ":"))) > MAX_EXTRA_BYTES:
            raise ValueError(f"must be at most {MAX_EXTRA_BYTES} bytes as JSON")
        return extra
