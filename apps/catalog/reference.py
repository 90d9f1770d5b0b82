"""The reference data shipped with inferboard, and its published runs as result documents.

Pure: reads the bundled JSON, builds documents; storing them is the services' job.
"""

import json
import re
from pathlib import Path
from typing import Any

from workers import result_facts
from workers import results as doc

REFERENCE_FILE = Path(__file__).parent / "reference" / "published.json"
# InferenceX's API responses as its dashboard's repository committed them, byte for byte
# (their source, commit and licence: inferencex/SOURCES.md).
INFERENCEX_DIR = Path(__file__).parent / "reference" / "inferencex"
INFERENCEX_SNAPSHOT = (
    "InferenceX API responses as of 2026-06-14 (the latest row's date), committed on "
    "2026-08-15 in vngcloud/InferenceX-app 7fe6d62 packages/app/cypress/fixtures/api/"
)


def reference_data() -> dict[str, Any]:
    return json.loads(REFERENCE_FILE.read_text())


def _parallelism(text: str) -> result_facts.Parallelism:
    sizes = {k.lower(): int(v) for k, v in re.findall(r"\b(TP|DP|EP|PP)\s*(\d+)", text.upper())}
    return result_facts.Parallelism(**sizes)


def _quantization(text: str) -> result_facts.Quantization:
    weights, _, rest = text.partition(" ")
    return result_facts.Quantization(weights=weights, note=rest.strip(" ()") or None)


def published_documents(data: dict[str, Any]) -> list[doc.ResultDocument]:
    """One document per published result that carries a throughput figure."""
    documents = []
    for result in data["results"]:
        if "node_throughput_tok_s" not in result:
            continue
        scenario = result["scenario"]
        points = [
            doc.Point(
                label="node aggregate",
                throughput=doc.Throughput(unlabelled_tok_s=result["node_throughput_tok_s"]),
                latency_ms=doc.Latencies(
                    ttft=doc.Distribution(max=result["ttft_s_max"] * 1000)
                    if "ttft_s_max" in result
                    else None
                ),
                success_rate=result.get("success_rate"),
            )
        ]
        if "single_stream_tok_s" in result:
            points.append(
                doc.Point(
                    label="single stream",
                    concurrency=1,
                    throughput=doc.Throughput(unlabelled_tok_s=result["single_stream_tok_s"]),
                )
            )
        flags = [flag.strip() for flag in result.get("flags", "").split(";") if flag.strip()]
        # The source states speculative decoding only in its prose ("MTP speculative decoding
        # fixed"); stated so, it is the deployment's speculative method, as pages compare it.
        speculative = next(
            (
                result_facts.Speculative(method=flag.split()[0])
                for flag in flags
                if "speculative decoding" in flag.lower()
            ),
            None,
        )
        documents.append(
            doc.ResultDocument(
                idempotency_key=f"published:{result['id']}",
                provenance="published",
                source=result_facts.Source(citation=data["sources"][result["source"]]),
                model=result_facts.ModelInfo(
                    name=result["model"], family=result["model"].split()[0]
                ),
                deployment=result_facts.Deployment(
                    accelerator=result["accelerator"],
                    gpus=result["gpus"],
                    engine=result_facts.Engine(name=result["engine"]),
                    quantization=_quantization(result["quantization"]),
                    parallelism=_parallelism(result["parallelism"]),
                    engine_flags=flags,
                    speculative=speculative,
                ),
                scenario=result_facts.Scenario(
                    preset="seed-20k-1k-60"
                    if (scenario["input_tokens"], scenario["output_tokens"]) == (20_000, 1_000)
                    else None,
                    input_tokens=scenario["input_tokens"],
                    output_tokens=scenario["output_tokens"],
                    prefix_cache_hit_rate=scenario.get("prefix_cache_hit_rate"),
                ),
                environment=result_facts.Environment(
                    extra={"unit_note": result.get("unit_note", "")}
                ),
                points=points,
            )
        )
    return documents
