"""/compare/ states throughput and latency differences with a bootstrap interval from the
stored request records ("... is 20% lower [..]" or "within noise"), over repeated runs where
a deployment has them."""

import html as html_text
import re
import uuid

import numpy as np
import pytest

from apps.runs.services import run_ingest
from tests import factories

GPUS = 2


def measured(accelerator: str, *, e2el_ms: float, seed: int, requests: int = 600) -> dict:
    """A closed-loop run at concurrency 4 whose records a slot-by-slot simulation made, with
    the point's aggregates computed from them as the worker would."""
    rng = np.random.default_rng(seed)
    clocks = np.zeros(4)
    records = []
    for i in range(requests):
        slot = int(np.argmin(clocks))
        send = float(clocks[slot])
        e2el = float(e2el_ms * rng.lognormal(0, 0.1))
        ttft = e2el * 0.2
        records.append(
            {"i": i, "t_send_ms": send, "ttft_ms": ttft, "ttfo_ms": ttft, "e2el_ms": e2el,
             "tpot_ms": (e2el - ttft) / 15, "n_in": 100, "n_out": 16, "status": "ok"}
        )  # fmt: skip
        clocks[slot] = send + e2el
    window = max(r["t_send_ms"] + r["e2el_ms"] for r in records) / 1000

    def dist(name: str) -> dict:
        values = np.array([r[name] for r in records])
        return {f"p{q:g}": float(np.percentile(values, q)) for q in (50, 90, 95, 99)}

    tpot = np.array([r["tpot_ms"] for r in records])
    return {
        "schema": "inferboard.run/v1",
        "idempotency_key": str(uuid.uuid4()),
        "provenance": "measured",
        "model": {"name": "M"},
        # The facts the board's rules ask for (apps/trust/rules.py), as tests/factories.py
        # states them, so the runs rank on the default board too.
        "deployment": factories.document(
            accelerator=accelerator, gpus=GPUS, quantization="FP8", engine="vllm", tp=GPUS
        )["deployment"],
        "accuracy": factories.document(quantization="FP8")["accuracy"],
        "scenario": {"input_tokens": 100, "output_tokens": 16, "arrival": "closed"},
        "points": [
            {
                "concurrency": 4,
                "window_s": window,
                "requests": {"total": requests, "succeeded": requests, "failed": 0},
                "tokens": {"input": 100 * requests, "output": 16 * requests, "source": "usage"},
                "throughput": {
                    "requests_per_s": requests / window,
                    "input_tok_s": 100 * requests / window,
                    "output_tok_s": 16 * requests / window,
                    "total_tok_s": 116 * requests / window,
                },
                "latency_ms": {
                    "ttft": dist("ttft_ms"),
                    "tpot": dist("tpot_ms"),
                    "e2el": dist("e2el_ms"),
                },  # fmt: skip
                "interactivity_tok_s_user": {"p50": float(np.percentile(1000 / tpot, 50))},
                "prompt_length_mismatch_rate": 0,
                "client_bound": False,
                "records": records,
            }
        ],
    }


def cells(html: str) -> list[str]:
    found = re.findall(r'<td class="significance-cell">(.*?)</td>', html, flags=re.S)
    text = (html_text.unescape(re.sub(r"<[^>]+>", " ", c)) for c in found)
    return [re.sub(r"\s+", " ", t).strip() for t in text]


def compare(client, *runs) -> list[str]:
    query = "&".join(f"d={r.deployment_id}" for r in runs)
    page = client.get(f"/compare/?{query}")
    assert page.status_code == 200
    return cells(page.content.decode())


def test_a_slower_deployment_is_lower_by_its_interval_and_a_like_one_is_within_noise(org, client):
    fast = run_ingest(document=measured("MI355X", e2el_ms=100, seed=1), org=None).run
    slow = run_ingest(document=measured("B200", e2el_ms=125, seed=2), org=None).run
    like = run_ingest(document=measured("H200", e2el_ms=100, seed=3), org=None).run
    first, slower, alike = compare(client, fast, slow, like)
    assert first == "—"
    assert slower.startswith("worse This column's output tok/s/GPU is 20% lower [")
    assert "This column's TTFT p99 is" in slower and "higher [" in slower
    assert alike.startswith("within noise This column's output tok/s/GPU is within noise")
    assert "runs: 1 (first column) vs 1" in alike


def test_repeated_runs_of_a_deployment_join_its_side_of_the_interval(org, client):
    for seed in (11, 12, 13):
        base = run_ingest(document=measured("MI355X", e2el_ms=100, seed=seed), org=None).run
    other = run_ingest(document=measured("B200", e2el_ms=100, seed=14), org=None).run
    _, cell = compare(client, base, other)
    assert "runs: 3 (first column) vs 1" in cell
    # An unofficial run (a branch's trial) never joins the official history it is set against.
    trial = measured("MI355X", e2el_ms=300, seed=15)
    trial["labels"] = {"unofficial": "true", "branch": "slow"}
    run_ingest(document=trial, org=None)
    _, cell = compare(client, base, other)
    assert "runs: 3 (first column) vs 1" in cell
    assert "within noise" in cell


def test_a_run_landing_at_the_level_joins_the_interval_on_the_next_view(org, client):
    """The interval is kept by the runs it resampled (apps/costs/answer_selectors.py): a new
    repeat is another set of runs, so the next view draws it in, not the kept interval."""
    base = run_ingest(document=measured("MI355X", e2el_ms=100, seed=41), org=None).run
    other = run_ingest(document=measured("B200", e2el_ms=100, seed=42), org=None).run
    _, cell = compare(client, base, other)
    assert "runs: 1 (first column) vs 1" in cell
    assert compare(client, base, other)[1] == cell  # the same runs: the same interval
    run_ingest(document=measured("MI355X", e2el_ms=100, seed=43), org=None)
    _, cell = compare(client, base, other)
    assert "runs: 2 (first column) vs 1" in cell


def test_a_run_without_request_records_is_taken_at_its_figure_and_said_so(org, client, document):
    """One side with records is enough for an interval (the answer's rule): the other side's
    summary is taken at its figure, and the cell says so."""
    fast = run_ingest(document=measured("MI355X", e2el_ms=100, seed=21), org=None).run
    document["deployment"]["accelerator"] = "B200"
    document["scenario"] = {"input_tokens": 100, "output_tokens": 16, "arrival": "closed"}
    for point in document["points"]:
        point.pop("records", None)
        # Input at the 100:16 scenario's ratio (the row audit checks rates against lengths).
        tput, tokens = point["throughput"], point["tokens"]
        tput["input_tok_s"] = tput["output_tok_s"] * 100 / 16
        tput["total_tok_s"] = tput["input_tok_s"] + tput["output_tok_s"]
        tokens["input"] = tokens["output"] * 100 // 16
    summary_only = run_ingest(document=document, org=None).run
    _, cell = compare(client, fast, summary_only)
    assert "This column's output tok/s/GPU is" in cell and "[" in cell
    assert "1 run(s) without request records: each taken at its figure" in cell
    # Neither side with records or repeats: a single measurement, and the page says so.
    document["deployment"]["accelerator"] = "H200"
    other = run_ingest(document={**document, "idempotency_key": "summary-2"}, org=None).run
    _, cell = compare(client, summary_only, other)
    assert cell.startswith("single measurement")


def test_the_json_export_carries_the_throughput_interval(org, client):
    fast = run_ingest(document=measured("MI355X", e2el_ms=100, seed=31), org=None).run
    slow = run_ingest(document=measured("B200", e2el_ms=125, seed=32), org=None).run
    query = f"d={fast.deployment_id}&d={slow.deployment_id}&format=json"
    first, second = client.get(f"/compare/?{query}").json()
    assert first["throughput_verdict_vs_first"] is None
    assert second["throughput_verdict_vs_first"] == "worse"
    assert second["throughput_change_low"] < -0.2 < second["throughput_change_high"] < 0
    assert second["throughput_change_vs_first"] == pytest.approx(0.8 - 1, abs=0.03)
