"""MTP on vs off: two deployments differing only in speculation compare like for like,
and each run page says what the speculation accepted."""

import copy
import re

from tests.reviews import ingest_reviewed


def test_compare_names_speculation_as_the_only_difference(document, org, client):
    on = copy.deepcopy(document)
    on["points"][0]["speculative_acceptance"] = {
        "draft_tokens": 900,
        "accepted_tokens": 600,
        "rate": 0.6667,
        "source": "requests",
    }
    off = copy.deepcopy(document)
    off["idempotency_key"] = "speculation-off-0001"
    del off["deployment"]["speculative"]
    run_on = ingest_reviewed(document=on, org=org).run
    run_off = ingest_reviewed(document=off, org=org).run
    assert run_on.deployment_id != run_off.deployment_id
    page = client.get(f"/compare/?d={run_on.deployment_id}&d={run_off.deployment_id}")
    html = page.content.decode()
    assert page.status_code == 200
    assert "What differs" in html and "Not like for like" not in html
    # One word for no speculation on every page: the table row and this list both say "off".
    assert "<strong>Speculative decoding</strong>: mtp vs off" in html
    assert "600 of 900 draft tokens accepted" in client.get(f"/runs/{run_on.pk}/").content.decode()


def _cells(html: str, css_class: str) -> list[str]:
    """The text of each column's cell in one row of /compare/'s table, tags stripped."""
    cells = re.findall(rf'<td class="num {css_class}">(.*?)</td>', html, flags=re.S)
    return [re.sub(r"<[^>]+>", "", cell).strip() for cell in cells]


def test_compare_shows_what_each_column_accepted_and_its_tokens_per_chunk(document, org, client):
    on = copy.deepcopy(document)
    for point in on["points"]:
        point["speculative_acceptance"] = {
            "rate": 0.75,
            "length": 2.5,
            "drafts": 400,
            "draft_tokens": 800,
            "accepted_tokens": 600,
            "source": "server_metrics",
        }
        point["tokens_per_chunk"] = 2.4
    off = copy.deepcopy(document)
    off["idempotency_key"] = "speculation-off-0002"
    del off["deployment"]["speculative"]
    for point in off["points"]:
        point["tokens_per_chunk"] = 1.0
    run_on = ingest_reviewed(document=on, org=org).run
    run_off = ingest_reviewed(document=off, org=org).run
    html = client.get(f"/compare/?d={run_on.deployment_id}&d={run_off.deployment_id}").content
    html = html.decode()
    assert "<th>Speculative decoding</th><td>mtp</td><td>off</td>" in html
    assert _cells(html, "spec-rate") == ["75% 600 of 800 (server metrics)", "—"]
    assert _cells(html, "spec-length") == ["2.50", "—"]
    assert _cells(html, "spec-chunk") == ["2.40", "1.00"]
