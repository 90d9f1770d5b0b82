"""Builders for result documents in tests: one deployment, a few points, optional records."""

import uuid
from typing import Any


def point(
    concurrency: int,
    *,
    output_tok_s: float,
    ttft_p99_ms: float,
    interactivity: float,
    e2el_p50_ms: float | None = None,
    total: int = 10,
    failed: int = 0,
    records: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    # Figures that agree with each other (the row audit, workers/audit.py, refuses a
    # measured document that contradicts itself): the last token comes after the first one
    # and every TPOT of a ~1,000-token answer, and the window is no longer than its requests
    # (finished and in flight, at least 500 output tokens each: every scenario the tests
    # give these points asks for more) can fill at the stated rate.
    tpot_ms = 1000 / interactivity
    if e2el_p50_ms is None:
        e2el_p50_ms = ttft_p99_ms / 2 + 1024 * tpot_ms
    window_s = min(60.0, (total + concurrency) * 500 / output_tok_s)
    data: dict[str, Any] = {
        "concurrency": concurrency,
        "window_s": window_s,
        "requests": {"total": total, "succeeded": total - failed, "failed": failed},
        "throughput": {"output_tok_s": output_tok_s, "total_tok_s": output_tok_s * 9},
        "latency_ms": {
            "ttft": {"p50": ttft_p99_ms / 2, "p99": ttft_p99_ms},
            "e2el": {"p50": e2el_p50_ms, "p99": e2el_p50_ms * 1.5},
            "tpot": {"p50": tpot_ms},
        },
        "interactivity_tok_s_user": {"p50": interactivity},
        # What the board's rules read (apps/trust/rules.py): prompts matched, client not bound.
        "prompt_length_mismatch_rate": 0,
        "client_bound": False,
    }
    if records is not None:
        data["records"] = records
    return data


def document(
    *,
    accelerator: str = "MI355X",
    gpus: int = 8,
    quantization: str = "MXFP4",
    engine: str = "sglang",
    engine_version: str = "0.5.23",
    model: str = "GLM 5.2",
    provenance: str = "measured",
    preset: str = "seed-20k-1k-60",
    points: list[dict[str, Any]] | None = None,
    accuracy: list[dict[str, Any]] | None = None,
    tp: int = 8,
) -> dict[str, Any]:
    shapes = {
        "seed-20k-1k-60": (20_000, 1_000, 0.6),
        "1k-1k": (1024, 1024, 0.0),
        "8k-1k": (8192, 1024, 0.0),
    }
    input_tokens, output_tokens, prefix = shapes[preset]
    if accuracy is None and quantization.upper() not in ("BF16", "FP16", "FP32"):
        # A quantized deployment ranks only with an accuracy result (apps/trust/rules.py).
        accuracy = [
            {
                "protocol": "gsm8k-5shot-v1",
                "task": "gsm8k",
                "metric": "exact_match_numeric",
                "n": 1319,
                "score": 0.95,
            }
        ]
    return {
        "schema": "inferboard.run/v1",
        "idempotency_key": str(uuid.uuid4()),
        "provenance": provenance,
        "model": {"name": model},
        "deployment": {
            "accelerator": accelerator,
            "gpus": gpus,
            # Complete facts, as the board's rules ask (apps/trust/rules.py).
            "engine": {
                "name": engine,
                "version": engine_version,
                "image_digest": f"sha256:{engine}-{engine_version}",
            },
            "quantization": {
                "weights": quantization,
                "activations": "BF16",
                "kv_cache": "BF16",
            },
            "parallelism": {"tp": tp},
            "engine_flags": [f"--tp {tp}"],
        },
        "scenario": {
            "preset": preset,
            "input_tokens": input_tokens,
            "output_tokens": output_tokens,
            "prefix_cache_hit_rate": prefix,
        },
        "points": points
        if points is not None
        else [
            point(1, output_tok_s=200, ttft_p99_ms=500, interactivity=200),
            point(16, output_tok_s=1600, ttft_p99_ms=1500, interactivity=100),
            point(64, output_tok_s=3000, ttft_p99_ms=4000, interactivity=40),
        ],
        "accuracy": accuracy or [],
    }
