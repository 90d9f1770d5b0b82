"""Disaggregated InferenceX rows read per deployed GPU on every surface (issue 51).

InferenceX states a disaggregated row's output tok/s per DECODE GPU and its input tok/s per
PREFILL GPU (only the total is per GPU of both pools). Per deployed GPU, by hand from the
source file: output = output_tput_per_gpu x D / (P + D), input = input_tput_per_gpu x P /
(P + D). The questions below are ones whose answer is a disaggregated point on the shipped
data (no TTFT bound: the throughput tier with an interactivity floor); each figure the API,
/answer/, /compare/, /costs/ and the claim checker show is checked against that reading of
the source row the chosen point was imported from. One test: loading the data is the cost."""

import json
import math
import re

import pytest
from django.core.management import call_command

from apps.catalog.reference import INFERENCEX_DIR
from apps.runs.models import Run

pytestmark = pytest.mark.django_db

MODEL, SCENARIO = "DeepSeek-R1-0528", "8k-1k"
QUESTIONS = (
    {"precision": "fp4", "interactivity_min": 30},
    {"precision": "fp4", "interactivity_min": 50},
    {"precision": "fp8", "interactivity_min": 30},
)
CARD = re.compile(r'<article class="cost-card" ([^>]*)>(.*?)</article>', re.S)
PEAK_RPS = 40  # a workload several replicas of each deployment serve
HOURS_PER_MONTH = 730


def _source_rows() -> list[dict]:
    return [
        row
        for name in ("benchmarks.json", "benchmarks-history.json")
        for row in json.loads((INFERENCEX_DIR / name).read_bytes())
    ]


def _by_hand(rows: list[dict], run_id: int, concurrency: int) -> dict[str, float]:
    """Output and input tok/s per deployed GPU of the stored point, from the source row
    it was imported from (found by its CI run, date, hardware, pools and concurrency)."""
    run = Run.objects.select_related("deployment__accelerator").get(pk=run_id)
    d = run.deployment
    written = run.environment["extra"]["inferencex"]
    found = {
        (row["metrics"]["output_tput_per_gpu"], row["metrics"]["input_tput_per_gpu"])
        for row in rows
        if row["disagg"]
        and row["run_url"] == written["run_url"]
        and row["date"] == written["date"]
        and row["hardware"].upper() == d.accelerator.sku.upper()
        and (row["num_prefill_gpu"], row["num_decode_gpu"]) == (d.prefill_gpus, d.decode_gpus)
        and row["conc"] == concurrency
        and (row["isl"], row["osl"]) == (8192, 1024)
    }
    assert len(found) == 1, (run_id, concurrency, found)
    [(output_per_decode_gpu, input_per_prefill_gpu)] = found
    p, dd = d.prefill_gpus, d.decode_gpus
    return {
        "gpus": p + dd,
        "output": output_per_decode_gpu * dd / (p + dd),
        "input": input_per_prefill_gpu * p / (p + dd),
    }


def _attributes(tag: str) -> dict[str, str]:
    return dict(re.findall(r'data-([a-z-]+)="([^"]*)"', tag))


def test_disaggregated_rows_read_per_deployed_gpu_on_every_surface(client):
    call_command("loadreference", verbosity=0)
    rows = _source_rows()
    checked: set[tuple[int, int]] = set()
    for question in QUESTIONS:
        asked = {
            "model": MODEL,
            "scenario": SCENARIO,
            "a": "MI355X",
            "b": "B200",
            "engine": "any",
            "spec": "any",
            "slo": "throughput",
            **question,
        }
        readings = {}
        for basis in ("output", "input"):
            body = client.get(
                "/api/v1/compare/answer", {**asked, "basis": basis, "swing": "false"}
            ).json()
            for key in ("a", "b"):
                point = body[key]["point"]
                if point["facts"]["serving"] != "disaggregated":
                    continue
                hand = _by_hand(rows, point["run_id"], point["concurrency"])
                assert body[key]["tok_s_per_gpu"] == pytest.approx(hand[basis], rel=1e-9)
                assert point["facts"]["gpus"] == hand["gpus"]
                if basis == "output":
                    checked.add((point["run_id"], point["concurrency"]))
            readings[basis] = body
        body = readings["output"]
        a, b = body["a"], body["b"]
        hand = {
            key: _by_hand(rows, side["point"]["run_id"], side["point"]["concurrency"])["output"]
            if side["point"]["facts"]["serving"] == "disaggregated"
            else side["tok_s_per_gpu"]
            for key, side in (("a", a), ("b", b))
        }
        assert body["tok_s_ratio"] == pytest.approx(hand["a"] / hand["b"], rel=1e-9)

        # /answer/: the same figures for the same question.
        html = client.get("/answer/", {**asked, "basis": "output"}).content.decode()
        for key in ("a", "b"):
            assert f"{hand[key]:.1f}" in html, (question, key)

        # /compare/ of the two chosen deployments (B first: the ratio reads A over B).
        compared = client.get(
            "/compare/",
            {
                "d": [b["point"]["deployment_id"], a["point"]["deployment_id"]],
                "scenario": SCENARIO,
                "slo": "throughput",
                "interactivity_min": question["interactivity_min"],
                "format": "json",
            },
        ).json()
        assert [r["answer_run_id"] for r in compared] == [
            b["point"]["run_id"],
            a["point"]["run_id"],
        ]
        assert compared[0]["answer_tok_s_per_gpu"] == pytest.approx(hand["b"], rel=1e-9)
        assert compared[1]["answer_tok_s_per_gpu"] == pytest.approx(hand["a"], rel=1e-9)

        # /costs/: each accelerator's card sizes the fleet on the per-deployed-GPU figure.
        costs = client.get(
            "/costs/",
            {
                **{k: v for k, v in asked.items() if k not in ("engine", "spec")},
                "workload_unit": "peak_requests_per_s",
                "peak_requests_per_s": PEAK_RPS,
                "input_tokens": 8192,
                "output_tokens": 1024,
                "headroom": 0,
                "token_kind": "output",
            },
        ).content.decode()
        cards = {
            c["accelerator"]: (c, text)
            for c, text in ((_attributes(t), x) for t, x in CARD.findall(costs))
        }
        for key, side in (("a", a), ("b", b)):
            card, text = cards[side["sku"]]
            assert card["run"] == str(side["point"]["run_id"]), (question, key)
            gpus = side["point"]["facts"]["gpus"]
            replicas = math.ceil(PEAK_RPS * 1024 / (hand[key] * gpus) - 1e-9)
            assert f'<span class="gpus">{replicas * gpus}</span> GPUs' in text, (question, key)
            month = replicas * gpus * side["point"]["usd_per_gpu_hour"] * HOURS_PER_MONTH
            shown = re.search(r'<span class="month">\$([\d,.]+)</span>', text).group(1)
            assert float(shown.replace(",", "")) == pytest.approx(month, abs=1), (question, key)

        # The claim checker's reading of the stored runs: the same points, the same ratio.
        claim = client.get(
            "/costs/claim/",
            {
                "model": MODEL,
                "scenario": SCENARIO,
                "precision": question["precision"],
                "spec": "any",
                "engine": "any",
                # The checker asks no SLO tier: a TTFT ceiling no point comes near stands
                # for the throughput tier's none.
                "ttft_s_max": 3600,
                "interactivity_min": question["interactivity_min"],
                "token_kind": "output",
            },
            HTTP_HX_REQUEST="true",
        ).content.decode()
        pa, pb = a["point"], b["point"]
        [row] = [
            r
            for r in claim.split("<tr")
            if f"run {pa['run_id']} {pa['level']} vs run {pb['run_id']} {pb['level']}" in r
        ]
        assert f"<td>{hand['a'] / hand['b']:.3f}</td>" in row
    # Three disaggregated rows at least, read by hand from the source file.
    assert len(checked) >= 3, checked
