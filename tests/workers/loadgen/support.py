"""Helpers shared by the load generator tests."""

from __future__ import annotations

import asyncio

from workers.loadgen.client import EndpointConfig, RequestSpec
from workers.loadgen.runner import Level, LoadPlan, SweepResult, run_sweep


class WordWorkload:
    """Prompts of `words` distinct words (one fault-server token each)."""

    def __init__(self, words: int = 5, max_tokens: int = 8) -> None:
        self.words = words
        self.max_tokens = max_tokens

    def warmup_specs(self, width: int) -> list[RequestSpec]:
        return []

    def spec(self, k: int) -> RequestSpec:
        prompt = " ".join(f"w{k}x{j}" for j in range(self.words))
        return RequestSpec(prompt=prompt, max_tokens=self.max_tokens, target_n_in=self.words)


def sweep(url: str, *, api: str = "completions", workload=None, levels=None, **plan) -> SweepResult:
    timeout_s = plan.pop("timeout_s", 30.0)
    transport = plan.pop("transport", "aiohttp")
    count_tokens = plan.pop("count_tokens", None)
    cfg = EndpointConfig(base_url=url, model="m", api=api, timeout_s=timeout_s, transport=transport)
    plan.setdefault("requests", 4)
    load = LoadPlan(levels=levels or [Level(concurrency=2)], **plan)
    return asyncio.run(run_sweep(cfg, workload or WordWorkload(), load, count_tokens=count_tokens))
