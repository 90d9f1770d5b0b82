"""/methodology/ renders docs/methodology.md, and every definition link on the pages lands
on a heading there."""

import re

import pytest
from django.core.management import call_command

from apps.accuracy.models import AccuracyResult
from tests.factories import document
from tests.reviews import ingest_reviewed

pytestmark = pytest.mark.django_db

LINK = re.compile(r'href="/methodology/#([^"]+)"')


def test_the_methodology_page_renders_the_document_with_its_anchors(client):
    html = client.get("/methodology/").content.decode()
    for anchor in ("slo", "leaderboard-run-rule", "usd-per-mtok", "percentiles", "accuracy"):
        assert f'id="{anchor}"' in html
    assert "<strong>cannot check</strong>" in html  # Markdown, rendered


def test_every_number_heading_links_to_a_definition_that_exists(client, org):
    call_command("loadreference", no_inferencex=True, verbosity=0)
    gsm = {
        "protocol": "gsm8k-5shot-v1",
        "task": "gsm8k",
        "metric": "exact_match_numeric",
        "n": 2,
        "score": 0.5,
        "items": [{"item_id": "1", "correct": True}, {"item_id": "2", "correct": False}],
    }
    a = ingest_reviewed(document=document(accuracy=[gsm]), org=org).run
    b = ingest_reviewed(document=document(accelerator="B200", accuracy=[gsm]), org=org).run
    ra, rb = AccuracyResult.objects.get(run=a), AccuracyResult.objects.get(run=b)
    anchors = set(re.findall(r'id="([^"]+)"', client.get("/methodology/").content.decode()))
    pages = [
        "/?scenario=seed-20k-1k-60",
        f"/runs/{a.pk}/",
        f"/compare/?d={a.deployment_id}&d={b.deployment_id}",
        "/costs/?ttft_s_max=2.22",
        f"/accuracy/compare/?a={ra.pk}&b={rb.pk}",
    ]
    for url in pages:
        links = set(LINK.findall(client.get(url).content.decode()))
        assert links, url
        assert links <= anchors, (url, links - anchors)


def test_the_openapi_document_describes_slo_bounds_and_percentile_provenance(client):
    schemas = client.get("/api/v1/openapi.json").json()["components"]["schemas"]
    slo = schemas["Slo"]["properties"]
    assert {"bounds", "min_success_rate", "ttft_percentile"} <= slo.keys()
    assert schemas["SloBound"]["properties"]["unit"]["enum"] == ["ms", "s", "tok/s/user"]
    assert "method" in schemas["Distribution"]["properties"]
    assert "client_bound" in schemas["Point"]["properties"]


def test_the_story_prices_the_unstated_2626_under_both_readings(client):
    call_command("loadreference", no_inferencex=True, verbosity=0)
    html = client.get("/story/glm-5-2/").content.decode()
    # 8 × $1.50/h (the newest set's owning hyperscaler tier) at 2,626 tok/s: $1.2694 per Mtok
    # if those are output tokens; if they are total tokens of 20k-in / 1k-out requests, 1 in
    # 21 is output: $26.6565 per output Mtok. The page rounds to cents and says why it is a range.
    assert "$1.27–$26.66" in html
    assert "1 token in 21 of this 20k-in / 1k-out workload is output" in html
