"""MTP on vs off: two deployments differing only in speculation compare like for like,
and each run page says what the speculation accepted."""

import copy

from apps.runs.services import run_ingest


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
    run_on = run_ingest(document=on, org=org).run
    run_off = run_ingest(document=off, org=org).run
    assert run_on.deployment_id != run_off.deployment_id
    page = client.get(f"/compare/?d={run_on.deployment_id}&d={run_off.deployment_id}")
    html = page.content.decode()
    assert page.status_code == 200
    assert "What differs" in html and "Not like for like" not in html
    assert "<strong>Speculative decoding</strong>: mtp vs none" in html
    assert "600 of 900 draft tokens accepted" in client.get(f"/runs/{run_on.pk}/").content.decode()
