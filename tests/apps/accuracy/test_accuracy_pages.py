import pytest

from apps.accuracy.models import AccuracyResult
from tests.factories import document, point
from tests.reviews import ingest_reviewed

pytestmark = pytest.mark.django_db

N = 400


def gsm8k(wrong: set[int], *, protocol_hash: str = "p1") -> dict:
    items = [
        {"item_id": f"gsm8k-{i}", "correct": i not in wrong, "extracted": "1", "gold": "1"}
        for i in range(N)
    ]
    correct = N - len(wrong)
    return {
        "protocol": "gsm8k-5shot-v1",
        "protocol_hash": protocol_hash,
        "task": "gsm8k",
        "metric": "exact_match_numeric",
        "n": N,
        "correct": correct,
        "score": correct / N,
        "items": items,
    }


def stored(org, quantization: str, accuracy: dict, tput: float = 1600) -> AccuracyResult:
    doc = document(
        quantization=quantization,
        accuracy=[accuracy],
        points=[point(16, output_tok_s=tput, ttft_p99_ms=1500, interactivity=100)],
    )
    return ingest_reviewed(document=doc, org=org).run.accuracy_results.get()


@pytest.fixture
def bf16_vs_mxfp4(org):
    # MXFP4 loses 20 items BF16 got right and gains 7: discordant 20 vs 7 (McNemar p ~ 0.019).
    bf16 = stored(org, "BF16", gsm8k(set(range(100, 120))), tput=1000)
    mxfp4 = stored(org, "MXFP4", gsm8k(set(range(0, 20)) | set(range(107, 120))), tput=1600)
    return bf16, mxfp4


def test_the_comparison_page_shows_a_paired_verdict_for_two_stored_runs(client, bf16_vs_mxfp4):
    bf16, mxfp4 = bf16_vs_mxfp4
    html = client.get(f"/accuracy/compare/?a={bf16.pk}&b={mxfp4.pk}&margin=1").content.decode()
    assert "Verdict: " in html
    assert "McNemar p = 0.0192" in html
    assert "<dt>Lost (A right, B wrong)</dt><dd>20</dd>" in html
    assert "<dt>Gained (A wrong, B right)</dt><dd>7</dd>" in html
    assert "gsm8k-0" in html


def test_the_api_gives_the_same_paired_figures(client, bf16_vs_mxfp4):
    bf16, mxfp4 = bf16_vs_mxfp4
    body = client.get(f"/api/v1/accuracy/compare?a={bf16.pk}&b={mxfp4.pk}&margin=1").json()
    assert (body["lost"], body["gained"], body["n"]) == (20, 7, N)
    assert body["mcnemar_p"] == pytest.approx(0.019157, abs=1e-5)
    assert body["difference_points"] == pytest.approx(100 * -13 / N)
    low, high = body["interval_points"]
    assert low < body["difference_points"] < high
    assert body["verdict"] in {"worse", "within", "inconclusive", "better"}


def test_results_of_different_protocols_are_not_paired(client, org):
    a = stored(org, "BF16", gsm8k(set(), protocol_hash="p1"))
    b = stored(org, "FP8", gsm8k(set(), protocol_hash="p2"))
    response = client.get(f"/api/v1/accuracy/compare?a={a.pk}&b={b.pk}")
    assert response.status_code == 422
    assert "protocols differ" in response.json()["detail"][0]["message"]
    page = client.get(f"/accuracy/compare/?a={a.pk}&b={b.pk}").content.decode()
    assert "cannot be paired" in page


def test_bad_comparison_input_is_a_clear_4xx(client, bf16_vs_mxfp4):
    bf16, _ = bf16_vs_mxfp4
    assert client.get(f"/api/v1/accuracy/compare?a={bf16.pk}&b=999999").status_code == 404
    negative = client.get(f"/api/v1/accuracy/compare?a={bf16.pk}&b={bf16.pk}&margin=-1")
    assert negative.status_code == 422
    assert negative.json()["detail"][0]["path"] == "margin"
    assert client.get("/accuracy/compare/?a=x").status_code == 400


def test_the_accuracy_page_charts_accuracy_against_throughput_per_quantization(
    client, bf16_vs_mxfp4
):
    html = client.get("/accuracy/?model=GLM 5.2&accelerator=MI355X&task=gsm8k").content.decode()
    assert 'data-figure="fig-trade"' in html
    # MXFP4 vs BF16: 1,600 vs 1,000 tok/s -> +60% throughput, 367/400 vs 380/400 -> -3.25 points
    assert "60.0%" in html
    assert "-3.25" in html
