"""Every GLM 5.2 figure shipped for B200 and MI355X equals what its source file says.

The figures are loaded from a transcription (reference/glm52-cookbook.json); this test reads
the shipped copies of the sources themselves (reference/glm52/), with a parser of its own,
so a typing slip in the transcription fails here.
"""

import hashlib
import json
import re

import pytest
from django.core.management import call_command

from apps.catalog.models import PublishedFigure
from apps.catalog.reference import GLM52_DIR
from apps.runs.models import Run

pytestmark = pytest.mark.django_db

COOKBOOK_COMMIT = "7c9bb316cf9ed2e61b61c9c595f2032324950827"
SKUS = {"b200": "B200", "mi355x": "MI355X"}
QUANT = {"fp8": "FP8", "nvfp4": "NVFP4"}


def _js_literal(text: str, name: str):
    """The `export const <name> = ...;` literal of a cookbook file, as Python data. The files
    hold plain object literals (the config says so: no spreads or calls), so a small tokenizer
    does: strings of any quote become JSON strings, bare keys are quoted, comments and
    trailing commas dropped."""
    head = f"export const {name} = "
    body = text[text.index(head) + len(head) :]
    out, i = [], 0
    while i < len(body):
        ch = body[i]
        if ch in "\"'`":
            j, chars = i + 1, []
            while body[j] != ch:
                if body[j] == "\\":
                    j += 1
                    chars.append({"n": "\n", "t": "\t"}.get(body[j], body[j]))
                else:
                    chars.append(body[j])
                j += 1
            out.append(json.dumps("".join(chars)))
            i = j + 1
        elif body.startswith("//", i):
            i = body.index("\n", i)
        elif ch.isalpha() or ch == "_" or (ch.isdigit() and out and out[-1] in "{,"):
            word = re.match(r"[A-Za-z0-9_.]+", body[i:]).group(0)
            rest = body[i + len(word) :].lstrip()
            keyword = {"true": "true", "false": "false", "null": "null"}.get(word)
            out.append(json.dumps(word) if rest.startswith(":") else keyword or word)
            i += len(word)
        elif ch == ";" and out.count("[") + out.count("{") == out.count("]") + out.count("}"):
            break
        elif ch.isspace():
            i += 1
        else:
            out.append(ch)
            i += 1
    js = "".join(out)
    return json.loads(re.sub(r",([}\]])", r"\1", js))


def _source_cells() -> dict[tuple[str, str, str], dict]:
    text = (GLM52_DIR / "glm-5.2-benchmarks.jsx").read_text()
    cells = {}
    for entry in _js_literal(text, "benchmarks"):
        m = entry["match"]
        if m["hw"] in SKUS and m["nodes"] == "single" and "speed" in entry:
            cells[(m["hw"], m["quant"], m["strategy"])] = entry
    return cells


def _serve_cells() -> dict[tuple[str, str, str], dict]:
    config = _js_literal((GLM52_DIR / "glm-5.2.jsx").read_text(), "config")
    return {
        (c["match"]["hw"], c["match"]["quant"], c["match"]["strategy"]): c
        for c in config["cells"]
        if c["match"]["nodes"] == "single"
    }, config


def test_sources_md_names_the_commit_licence_and_each_copy_hash():
    sources = (GLM52_DIR / "SOURCES.md").read_text()
    assert "sgl-project/sglang" in sources and COOKBOOK_COMMIT in sources
    assert "Apache License 2.0" in sources
    for name in ("glm-5.2-benchmarks.jsx", "glm-5.2.jsx", "GLM-5.2.mdx"):
        digest = hashlib.sha256((GLM52_DIR / name).read_bytes()).hexdigest()
        assert digest in sources, name


def test_every_b200_and_mi355x_cookbook_cell_is_a_published_run_with_the_source_figures():
    call_command("loadreference", no_inferencex=True, verbosity=0)
    cells = _source_cells()
    serve, config = _serve_cells()
    # Every measured single-node cell of the two accelerators: FP8 on both, NVFP4 on B200.
    assert {(hw, q) for hw, q, _ in cells} == {
        ("b200", "fp8"),
        ("b200", "nvfp4"),
        ("mi355x", "fp8"),
    }
    assert len(cells) == 9
    for (hw, quant, strategy), entry in cells.items():
        run = Run.objects.select_related("deployment__accelerator", "scenario").get(
            idempotency_key=f"published:sglang-cookbook-glm52-{hw}-{quant}-{strategy}"
        )
        d = run.deployment
        assert run.provenance == "published"
        assert COOKBOOK_COMMIT in run.source_url and "Apache-2.0" in run.source_citation
        assert (d.accelerator.sku, d.gpus, d.engine.name, d.engine_version, d.quant_weights) == (
            SKUS[hw],
            8,
            "sglang",
            entry["sglang_version"],
            QUANT[quant],
        )
        assert run.document["model"]["revision"] == config["modelNames"][f"default|{quant}"]
        flags = [
            f
            for f in serve[(hw, quant, strategy)]["flags"]
            if not re.search(r"\{\{(MODEL_NAME|HOST_IP|PORT)\}\}", f)
        ]
        assert run.document["deployment"]["engine_flags"] == flags
        facts = run.document["deployment"]
        sizes = {k: int(v) for k, v in re.findall(r"--(tp|dp) (\d+)", " ".join(flags))}
        assert {k: facts["parallelism"].get(k) for k in ("tp", "dp")} == {
            "tp": sizes.get("tp"),
            "dp": sizes.get("dp"),
        }
        assert bool(facts["parallelism"].get("dp_attention")) == ("--enable-dp-attention" in flags)
        drafts = re.search(r"--speculative-num-draft-tokens (\d+)", " ".join(flags))
        spec = facts.get("speculative")
        assert (spec and (spec["method"], spec["draft_tokens"])) == (
            drafts and ("EAGLE", int(drafts.group(1)))
        )
        assert (run.scenario.slug, run.scenario.input_tokens, run.scenario.output_tokens) == (
            "8k-1k",
            8192,
            1024,
        )
        points = list(run.points.order_by("ordinal"))
        assert len(points) == len(entry["speed"])
        for point, cell in zip(points, entry["speed"], strict=True):
            w = cell["workload"]
            assert (w["dataset"], w["isl"], w["osl"]) == ("random", 8192, 1024)
            assert point.concurrency == w["max_concurrency"]
            # total (input + output) tok/s per GPU, as the source states it, and its output
            # share by the page's definition (output/GPU x (isl + osl) / osl)
            assert point.total_tok_s / d.gpus == cell["tokens_per_sec_per_gpu"]
            assert point.output_tok_s / d.gpus == pytest.approx(
                cell["tokens_per_sec_per_gpu"] * 1024 / (8192 + 1024)
            )
            assert point.unlabelled_tok_s is None
            assert point.interactivity["p50"] == pytest.approx(1000 / cell["tpot_ms"])
            assert point.latency_ms["ttft"]["p50"] == cell["ttft_ms"]
            assert point.latency_ms["tpot"]["p50"] == cell["tpot_ms"]


def test_the_source_states_the_kinds_the_runs_carry():
    benchmarks = (GLM52_DIR / "glm-5.2-benchmarks.jsx").read_text()
    assert "tokens_per_sec_per_gpu = total (in+out) tok/s/GPU" in benchmarks
    page = (GLM52_DIR / "GLM-5.2.mdx").read_text()
    assert "SGLANG_SIMULATE_ACC_LEN" in page and "--random-range-ratio 1.0" in page
    _, config = _serve_cells()
    assert "latencyPercentile" not in config  # so the page's default label, P50, applies
    assert "--warmup-requests 64" in config["benchmarkCommands"]["speed"]
    call_command("loadreference", no_inferencex=True, verbosity=0)
    run = Run.objects.get(idempotency_key="published:sglang-cookbook-glm52-b200-fp8-low-latency")
    assert "SGLANG_SIMULATE_ACC_LEN=3.5" in run.deployment.notes
    assert run.environment["extra"]["throughput_kind"].startswith("total (input + output)")


def test_the_b200_figure_of_the_write_ups_is_shipped_as_they_give_it():
    call_command("loadreference", no_inferencex=True, verbosity=0)
    figure = PublishedFigure.objects.get(key="wafer-glm52-b200-writeups").payload
    quotes = [
        line
        for line in (GLM52_DIR / "wafer-b200-writeups.md").read_text().splitlines()
        if line.startswith("> ")
    ]
    assert len(quotes) == 2
    for quote in quotes:
        found = re.search(r"([\d,]+) tok/s/node at ([\d.]+) RPS", quote)
        assert found, quote
        assert float(found.group(1).replace(",", "")) == figure["reported_node_throughput_tok_s"]
        assert float(found.group(2)) == figure["request_rate_rps"]
    assert figure["accelerator"] == "B200"
    assert figure["scenario"] == {
        "input_tokens": 20000,
        "output_tokens": 1000,
        "prefix_cache_hit_rate": 0.6,
    }
    # Not a run: the write-ups state no GPUs, engine or precision for the B200 side.
    assert not Run.objects.filter(idempotency_key__contains="b200-writeups").exists()
