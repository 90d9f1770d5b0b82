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
# sglang cookbook's GLM-5.2 speed cells, transcribed; the source files it was read from lie in
# reference/glm52/ (their repository, commit and licence: glm52/SOURCES.md).
GLM52_COOKBOOK_FILE = Path(__file__).parent / "reference" / "glm52-cookbook.json"
GLM52_DIR = Path(__file__).parent / "reference" / "glm52"
# InferenceX's API responses as its dashboard's repository committed them, byte for byte
# (their source, commit and licence: inferencex/SOURCES.md).
INFERENCEX_DIR = Path(__file__).parent / "reference" / "inferencex"
INFERENCEX_SNAPSHOT = (
    "InferenceX API responses as of 2026-06-14 (the latest row's date), committed on "
    "2026-08-15 in vngcloud/InferenceX-app 7fe6d62 packages/app/cypress/fixtures/api/"
)


def reference_data() -> dict[str, Any]:
    data = json.loads(REFERENCE_FILE.read_text())
    data["glm52_cookbook"] = json.loads(GLM52_COOKBOOK_FILE.read_text())
    return data


def _parallelism(text: str) -> result_facts.Parallelism:
    sizes = {k.lower(): int(v) for k, v in re.findall(r"\b(TP|DP|EP|PP)\s*(\d+)", text.upper())}
    return result_facts.Parallelism(**sizes)


def _quantization(text: str) -> result_facts.Quantization:
    weights, _, rest = text.partition(" ")
    return result_facts.Quantization(weights=weights, note=rest.strip(" ()") or None)


def published_documents(data: dict[str, Any]) -> list[doc.ResultDocument]:
    """One document per published result that carries a throughput figure, then one per
    configuration of the sglang cookbook's GLM-5.2 cells."""
    documents = _seed_documents(data)
    if "glm52_cookbook" in data:
        documents.extend(cookbook_documents(data["glm52_cookbook"]))
    return documents


def _seed_documents(data: dict[str, Any]) -> list[doc.ResultDocument]:
    return [
        _seed_document(result, citation=data["sources"][result["source"]])
        for result in data["results"]
        if "node_throughput_tok_s" in result
    ]


def _seed_points(result: dict[str, Any]) -> list[doc.Point]:
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
    return points


def _seed_deployment(result: dict[str, Any]) -> result_facts.Deployment:
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
    return result_facts.Deployment(
        accelerator=result["accelerator"],
        gpus=result["gpus"],
        engine=result_facts.Engine(name=result["engine"]),
        quantization=_quantization(result["quantization"]),
        parallelism=_parallelism(result["parallelism"]),
        engine_flags=flags,
        speculative=speculative,
    )


def _seed_document(result: dict[str, Any], *, citation: str) -> doc.ResultDocument:
    scenario = result["scenario"]
    return doc.ResultDocument(
        idempotency_key=f"published:{result['id']}",
        provenance="published",
        source=result_facts.Source(citation=citation),
        model=result_facts.ModelInfo(name=result["model"], family=result["model"].split()[0]),
        deployment=_seed_deployment(result),
        scenario=result_facts.Scenario(
            preset="seed-20k-1k-60"
            if (scenario["input_tokens"], scenario["output_tokens"]) == (20_000, 1_000)
            else None,
            input_tokens=scenario["input_tokens"],
            output_tokens=scenario["output_tokens"],
            prefix_cache_hit_rate=scenario.get("prefix_cache_hit_rate"),
        ),
        environment=result_facts.Environment(extra={"unit_note": result.get("unit_note", "")}),
        points=_seed_points(result),
    )


def cookbook_documents(cookbook: dict[str, Any]) -> list[doc.ResultDocument]:
    """One run per cookbook configuration (accelerator × precision × strategy: each strategy
    is its own serve recipe), one point per concurrency it was measured at."""
    return [_cookbook_document(cookbook, config) for config in cookbook["configurations"]]


def _cookbook_point(cell: dict[str, Any], gpus: int, isl: int, osl: int) -> doc.Point:
    # The page defines its figure as output/GPU x (isl + osl) / osl (its comment on the
    # tokens_per_sec_per_gpu field), at fixed lengths (--random-range-ratio 1.0): the output
    # and input rates are that figure's shares. Interactivity p50 is 1000 / TPOT p50: 1/x is
    # monotonic, so it keeps the median's place. Each is labelled derived in the run.
    return doc.Point(
        label=f"concurrency {cell['max_concurrency']}",
        concurrency=cell["max_concurrency"],
        # The source states total (input + output) tok/s per GPU; a point stores the
        # deployment's rate, per GPU being derived again by dividing by its GPUs.
        throughput=doc.Throughput(
            total_tok_s=cell["tokens_per_sec_per_gpu"] * gpus,
            output_tok_s=cell["tokens_per_sec_per_gpu"] * gpus * osl / (isl + osl),
            input_tok_s=cell["tokens_per_sec_per_gpu"] * gpus * isl / (isl + osl),
        ),
        latency_ms=doc.Latencies(
            ttft=doc.Distribution(p50=cell["ttft_ms_p50"]),
            tpot=doc.Distribution(p50=cell["tpot_ms_p50"]),
        ),
        interactivity_tok_s_user=doc.Distribution(p50=1000 / cell["tpot_ms_p50"]),
    )


def _cookbook_deployment(
    cookbook: dict[str, Any], config: dict[str, Any]
) -> result_facts.Deployment:
    speculative = config["speculative"]
    return result_facts.Deployment(
        accelerator=config["accelerator"],
        gpus=config["gpus"],
        engine=result_facts.Engine(name=cookbook["engine"], version=config["engine_version"]),
        quantization=result_facts.Quantization(
            weights=config["quantization"], note=config["checkpoint"]
        ),
        parallelism=result_facts.Parallelism(**config["parallelism"]),
        speculative=result_facts.Speculative(**speculative) if speculative else None,
        engine_flags=config["engine_flags"],
        notes=config["note"],
    )


def _cookbook_document(cookbook: dict[str, Any], config: dict[str, Any]) -> doc.ResultDocument:
    scenario, source = cookbook["scenario"], cookbook["source"]
    isl, osl = scenario["input_tokens"], scenario["output_tokens"]
    return doc.ResultDocument(
        idempotency_key=f"published:{config['id']}",
        provenance="published",
        source=result_facts.Source(citation=source["citation"], url=source["url"]),
        model=result_facts.ModelInfo(
            name=cookbook["model"],
            family=cookbook["model"].split()[0],
            revision=config["checkpoint"],
        ),
        deployment=_cookbook_deployment(cookbook, config),
        scenario=result_facts.Scenario(
            preset="8k-1k",
            input_tokens=isl,
            output_tokens=osl,
            dataset=scenario["dataset"],
            warmup_requests=scenario["warmup_requests"],
        ),
        environment=result_facts.Environment(
            extra={
                "source_key": source["key"],
                "cookbook_cell": config["match"],
                "throughput_kind": cookbook["throughput_kind"],
                "derived": "output and input tok/s as the stated total's shares at "
                f"{isl}/{osl} (the page's output/GPU x (isl + osl) / osl); "
                "interactivity p50 = 1000 / TPOT p50",
                "latency_percentile": cookbook["latency_percentile"],
                "benchmark": scenario["note"],
            }
        ),
        points=[_cookbook_point(cell, config["gpus"], isl, osl) for cell in config["points"]],
    )
