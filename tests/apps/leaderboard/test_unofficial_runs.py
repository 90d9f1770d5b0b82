"""Runs labelled unofficial (CI trials of a branch or pull request) never rank on the board;
`?unofficial=1` overlays them beside the official rows, visibly different."""

import copy
import re

import pytest

from apps.runs.services import run_ingest

pytestmark = pytest.mark.django_db


def labelled(document: dict, key: str, **labels: str) -> dict:
    trial = copy.deepcopy(document)
    trial["idempotency_key"] = key
    trial["labels"] = {"unofficial": "true", **labels}
    for point in trial["points"]:
        # A slower branch: every token rate halved together (the row audit checks that total
        # is output + input and input:output matches the scenario).
        tput = point["throughput"]
        for kind in ("input_tok_s", "output_tok_s", "total_tok_s"):
            if kind in tput:
                tput[kind] /= 2
    return trial


def board_rows(html: str) -> list[str]:
    table = html.split('id="leaderboard"', 1)[1].split("</table>", 1)[0]
    return re.findall(r'href="/runs/(\d+)/"', table)


def test_an_unofficial_run_never_takes_its_deployments_row(document, client):
    official = run_ingest(document=document, org=None).run
    trial = run_ingest(document=labelled(document, "trial-run-0001", branch="slow"), org=None).run
    assert trial.deployment_id == official.deployment_id  # the newer run of the same deployment
    html = client.get("/").content.decode()
    assert board_rows(html) == [str(official.pk)]
    assert 'id="unofficial-runs"' not in html


def test_a_deployment_with_only_unofficial_runs_is_not_on_the_board(document, client):
    official = run_ingest(document=document, org=None).run
    other = labelled(document, "trial-run-0002", pr="7")
    other["deployment"]["accelerator"] = "B200"
    trial = run_ingest(document=other, org=None).run
    assert trial.deployment_id != official.deployment_id
    assert board_rows(client.get("/").content.decode()) == [str(official.pk)]


def test_the_overlay_shows_unofficial_runs_beside_the_board_with_their_labels(document, client):
    official = run_ingest(document=document, org=None).run
    trial_doc = labelled(document, "trial-run-0003", branch="fix/kv", pr="42", commit="abc1234")
    trial = run_ingest(document=trial_doc, org=None).run
    page = client.get("/?unofficial=1")
    html = page.content.decode()
    assert board_rows(html) == [str(official.pk)]
    section = html.split('id="unofficial-runs"', 1)[1].split("</section>", 1)[0]
    assert 'class="badge badge-unofficial">unofficial<' in section
    assert "branch=fix/kv, commit=abc1234, pr=42" in section
    assert f'href="/runs/{trial.pk}/"' in section
    # On the charts: a trace of its own, hollow markers, named as not ranked.
    for chart in ("pareto_interactivity", "pareto_latency"):
        traces = page.context[chart]["data"]
        overlay = [t for t in traces if t["name"] == "unofficial (labelled, not ranked)"]
        assert overlay and overlay[0]["marker"]["symbol"] == "diamond-open"
        assert set(overlay[0]["customdata"]) == {f"/runs/{trial.pk}/"}  # each of its levels
        assert all(f"/runs/{trial.pk}/" not in t["customdata"] for t in traces if t not in overlay)


def test_the_run_page_shows_its_labels_and_that_it_is_unofficial(document, client):
    trial = run_ingest(document=labelled(document, "trial-run-0004", branch="fix/kv"), org=None)
    html = client.get(f"/runs/{trial.run.pk}/").content.decode()
    heading = html[html.index("<h1>") : html.index("</h1>")]
    assert '<span class="badge badge-unofficial">unofficial</span>' in heading
    assert "<code>branch=fix/kv</code> <code>unofficial=true</code>" in html


def test_the_overlay_is_priced_with_the_visitors_own_prices_as_the_rows_are(document, client):
    run_ingest(document=document, org=None)
    run_ingest(document=labelled(document, "trial-run-0005", branch="fix/kv"), org=None)
    sku = document["deployment"]["accelerator"]

    def overlay_costs(price: float) -> list[float]:
        page = client.get(f"/?unofficial=1&y=usd_per_mtok&price_{sku}={price}")
        traces = page.context["pareto_interactivity"]["data"]
        (overlay,) = [t for t in traces if t["name"] == "unofficial (labelled, not ranked)"]
        return overlay["y"]

    # $/Mtok is linear in $/GPU-hr: the visitor's doubled price doubles every marker.
    at_two, at_four = overlay_costs(2), overlay_costs(4)
    assert at_two and len(at_two) == len(at_four)
    assert all(b == pytest.approx(2 * a) for a, b in zip(at_two, at_four, strict=True))
