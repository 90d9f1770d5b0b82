"""The run page draws the server's scraped series on the client's timeline: seconds from the
level's start on x, the client's requests in flight beside the server's running and queued."""

import json
import re

from tests.reviews import ingest_reviewed


def _figure(html: str, figure_id: str) -> dict:
    found = re.search(rf'<script id="{figure_id}" type="application/json">(.*?)</script>', html)
    assert found, f"no figure {figure_id} on the page"
    return json.loads(found.group(1))


def _timeline_document(document: dict) -> dict:
    point = document["points"][0]
    # Two requests overlapping from 1 s to 5.11 s: the client had 1, then 2, then 1 in flight.
    point["records"][0].update(t_send_ms=0.1, e2el_ms=5110)
    point["records"][1].update(t_send_ms=1000.0, e2el_ms=5190)
    point["server"] = {
        "engine": "vllm",
        "interval_s": 1.0,
        "queued_max": 2,
        "series": [
            {
                "name": "requests_waiting",
                "source": "vllm:num_requests_waiting",
                "kind": "gauge",
                "t_ms": [-5.0, 1500.0, 3000.0, 6500.0],
                "values": [0.0, 2.0, 1.0, 0.0],
            },
            {
                "name": "kv_cache_usage",
                "source": "vllm:kv_cache_usage_perc",
                "kind": "gauge",
                "t_ms": [-5.0, 1500.0, 3000.0, 6500.0],
                "values": [0.05, 0.4, 0.6, 0.1],
            },
            {
                "name": "generation_tokens",
                "source": "vllm:generation_tokens_total",
                "kind": "counter",
                "t_ms": [-5.0, 6500.0],
                "values": [100.0, 1100.0],
            },
        ],
    }
    return document


def test_the_run_page_charts_the_servers_queue_against_the_clients_requests_in_flight(
    document, org, client
):
    run = ingest_reviewed(document=_timeline_document(document), org=org).run
    html = client.get(f"/runs/{run.pk}/").content.decode()
    figure = _figure(html, "fig-server-0")
    traces = {t["name"]: t for t in figure["data"]}
    client_trace = traces["client: requests in flight"]
    # Sampled from 0 s to the last request's end (1 + 5.19 s), from the stored records.
    assert client_trace["x"][0] == 0.0 and client_trace["x"][-1] == 6.19
    in_flight = client_trace["y"]
    assert in_flight[0] == 0 and max(in_flight) == 2 and in_flight[-1] == 0
    at_3s = client_trace["x"].index(min(client_trace["x"], key=lambda t: abs(t - 3.0)))
    assert in_flight[at_3s] == 2
    waiting = traces["server: requests_waiting"]
    assert waiting["x"] == [-0.005, 1.5, 3.0, 6.5] and waiting["y"] == [0.0, 2.0, 1.0, 0.0]
    assert waiting.get("yaxis", "y") == "y"
    assert traces["server: kv_cache_usage (fraction, right axis)"]["yaxis"] == "y2"
    # Token counters are on scales no request count shares: the table beside it has them.
    assert not any("generation_tokens" in name for name in traces)
    assert figure["layout"]["xaxis"]["title"]["text"] == "seconds from the level's start"
    # The keyboard-reachable text alternative lists the same points.
    assert 'id="chart-server-0"' in html
    assert "Data table: c=1: the server and the client over time" in html
    row = '<td>server: requests_waiting</td><td class="wrap"></td><td class="num">1.500</td>'
    assert row + '<td class="num">2</td>' in html


def test_a_level_without_scraped_series_draws_no_timeline(document, org, client):
    document["points"][0]["speculative_acceptance"] = {"rate": 0.5, "source": "requests"}
    run = ingest_reviewed(document=document, org=org).run
    html = client.get(f"/runs/{run.pk}/").content.decode()
    assert "fig-server-" not in html
