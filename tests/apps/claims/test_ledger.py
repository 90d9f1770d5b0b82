"""The claims ledger: published claims in GET /api/v1/claims with source, basis and verdicts
then and now; a new price set or a new run that flips one is recorded once and tells its
subscriber's webhook once (a real receiver on loopback, its signature checked)."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import date, timedelta

import pytest
from django.utils import timezone

from apps.accounts.services import organization_get_or_create
from apps.claims.models import ClaimAlert, ClaimFlip, ClaimStanding, ClaimSubscription
from apps.claims.models import PublishedClaim as Claim
from apps.claims.services import claim_alerts_deliver, claims_evaluate, claims_load, claims_tick
from apps.costs.reference import price_sets
from tests.apps.regressions.test_alerts import receiving, verified
from tests.factories import document, point
from tests.reviews import ingest_reviewed

pytestmark = pytest.mark.django_db

SEED = "wafer-glm52-half-cost"
GLM5 = "inferencex-glm5-mtp-1-41x"
THROUGHPUT = "wafer-glm52-80pct-throughput"


@pytest.fixture(autouse=True)
def loopback_receivers_allowed(settings) -> None:
    settings.REGRESSION_WEBHOOK_PRIVATE_HOSTS = True


def test_the_seed_claim_and_the_others_are_in_the_api_with_source_basis_and_verdicts(client):
    claims_load()
    body = client.get("/api/v1/claims").json()
    by_slug = {c["slug"]: c for c in body}
    assert SEED in by_slug and len(by_slug) >= 6
    for entry in body:
        assert entry["source"]["title"] and (
            entry["source"].get("url") or entry["source"]["cited_in"]
        )
        assert entry["published_on"] and "tier" in entry["basis"]
        if entry["kind"] == "cost":
            assert entry["verdict_then"] and entry["verdict_now"]
    seed = by_slug[SEED]
    # Under its own date's prices (August 2025: $1.48 vs $1.95): (1.48 / 1.95) / 0.8 = 0.95.
    assert seed["verdict_then"]["price_set"] == "semianalysis-2025-08"
    assert round(seed["verdict_then"]["cost_ratio"], 3) == 0.949
    assert seed["verdict_now"]["price_set"] == "semianalysis-2026-07-rental"
    assert round(seed["verdict_now"]["cost_ratio"], 3) == round((1.50 / 1.73) / 0.8, 3)
    assert not seed["verdict_then"]["holds"] and seed["never_held"]
    # Each tier of the newest set is priced, the neocloud tier from the July 2026 set.
    assert {v["tier"] for v in seed["tiers_now"]} == {
        "owning_hyperscaler",
        "owning_neocloud",
        "rental_3yr",
    }
    glm5 = by_slug[GLM5]
    assert glm5["verdict_then"]["holds"] and not glm5["verdict_now"]["holds"]
    assert glm5["stopped_holding_on"] == "2026-07-31"
    amd = by_slug["amd-win-on-tco-dsr1-vs-b200-trtllm"]
    assert amd["verdict_then"]["holds"] and not amd["verdict_now"]["holds"]
    # A throughput claim names no price: nothing to re-price, only stored runs to check.
    assert by_slug[THROUGHPUT]["verdict_now"] is None
    # No stored run here: each says so, through the one answer's own words.
    assert seed["stored_runs"]["holds"] is None and seed["stored_runs"]["reason"]


def test_the_ledger_as_of_an_earlier_date_is_priced_by_the_set_then(client):
    claims_load()
    june = {c["slug"]: c for c in client.get("/api/v1/claims?prices_as_of=2026-06-01").json()}
    assert june[GLM5]["price_set_now"] == "semianalysis-2025-08"
    assert june[GLM5]["verdict_now"]["holds"] and june[GLM5]["stopped_holding_on"] is None
    refused = client.get("/api/v1/claims?prices_as_of=tomorrowish")
    assert refused.status_code == 422
    assert refused.json()["detail"][0]["path"] == "prices_as_of"
    assert client.get("/api/v1/claims/no-such-claim").status_code == 404


def _subscribed(target: str, slug: str) -> ClaimSubscription:
    acme = organization_get_or_create(slug="acme")
    claim = Claim.objects.get(slug=slug)
    return ClaimSubscription.objects.create(
        org=acme, channel="webhook", target=target, secret="s3cret", claim=claim
    )


def test_a_new_price_set_that_flips_a_claim_sends_the_webhook_once():
    claims_load()
    shipped = price_sets()
    assert claims_evaluate(sets=shipped) == []  # the first look records, it flips nothing
    assert ClaimStanding.objects.get(claim__slug=GLM5).holds_on_figures is False
    # A newer set prices MI355X at $1.30 against B200's $1.73: (1.30 / 1.73) / 1.0702 = 0.702,
    # about the claimed 1 / 1.41 = 0.709 again.
    newer = replace(
        shipped[-1],
        name="test-2027-01",
        title="A set published after the shipped ones",
        in_force_from=date(2027, 1, 1),
        usd_per_gpu_hour={"owning_hyperscaler": {"MI355X": 1.30, "B200": 1.73}},
        all_in_kw={},
    )
    with receiving() as receiver:
        subscription = _subscribed(receiver.url, GLM5)
        flips = claims_evaluate(sets=(*shipped, newer))
        assert GLM5 in {f.claim.slug for f in flips}
        flip = ClaimFlip.objects.get(claim__slug=GLM5)
        assert flip.cause == ClaimFlip.Cause.PRICE_SET and flip.price_set == "test-2027-01"
        assert (flip.before["holds_on_figures"], flip.after["holds_on_figures"]) == (False, True)
        assert claim_alerts_deliver() == 1
        # Delivered once: again, and a re-evaluation under the same sets, send nothing more.
        assert claim_alerts_deliver() == 0
        assert claims_evaluate(sets=(*shipped, newer)) == []
        assert claim_alerts_deliver(now=timezone.now() + timedelta(days=1)) == 0
    assert len(receiver.received) == 1
    headers, body = receiver.received[0]
    assert verified(subscription.secret, headers, body)
    payload = json.loads(body)
    assert payload["type"] == "inferboard.claim_flip" and payload["claim"] == GLM5
    assert payload["after"]["price_set"] == "test-2027-01"
    assert ClaimAlert.objects.get().status == ClaimAlert.Status.SENT


def _run(accelerator: str, output_tok_s: float, org, key: str):
    doc = document(
        accelerator=accelerator,
        points=[point(16, output_tok_s=output_tok_s, ttft_p99_ms=1000, interactivity=60)],
    )
    doc["idempotency_key"] = f"claims-ledger-{key}"
    return ingest_reviewed(document=doc, org=org, is_public=True).run


def test_a_new_run_that_flips_a_claim_on_the_stored_runs_is_told_once(org):
    claims_load()
    # "About 80% of B200's throughput" on the seed's workload: 2,400 against 3,000 tok/s.
    mi355x = _run("MI355X", 2400, org, "mi")
    b200 = _run("B200", 3000, org, "b200-1")
    claims_evaluate()
    standing = ClaimStanding.objects.get(claim__slug=THROUGHPUT)
    assert (standing.holds_on_runs, standing.runs) == (True, [mi355x.pk, b200.pk])
    with receiving() as receiver:
        _subscribed(receiver.url, THROUGHPUT)
        # A faster B200 run: the one answer now pairs it, and 2,400 / 4,000 is 60%.
        faster = _run("B200", 4000, org, "b200-2")
        flipped, sent = claims_tick()
        assert (flipped, sent) == (1, 1)
        assert claims_tick() == (0, 0)  # nothing new since: no evaluation, nothing to send
    flip = ClaimFlip.objects.get(claim__slug=THROUGHPUT)
    assert flip.cause == ClaimFlip.Cause.RUNS
    assert flip.after["runs"] == [mi355x.pk, faster.pk]
    assert "on the stored runs it holds before and does not hold now" in flip.summary
    assert len(receiver.received) == 1


def test_the_ledger_page_shows_each_claim_then_and_now(client):
    claims_load()
    page = client.get("/claims/").content.decode()
    seed = page.split('id="row-wafer-glm52-half-cost"')[1].split("</tr>")[0]
    assert "0.949×: does not hold" in seed and "1.084×: does not hold" in seed
    assert "never held" in seed
    glm5 = page.split(f'id="row-{GLM5}"')[1].split("</tr>")[0]
    assert "0.709×: holds" in glm5 and "2026-07-31" in glm5
    assert 'class="price-set-name">semianalysis-2026-07-rental<' in page
    earlier = client.get("/claims/?prices_as_of=2026-06-01").content.decode()
    assert 'class="price-set-name">semianalysis-2025-08<' in earlier


def test_an_admin_subscribes_and_others_may_not(client, org, person, settings):
    claims_load()
    assert client.get("/claims/subscriptions/").status_code == 403
    client.force_login(person(org, role="viewer"))
    refused = client.post("/claims/subscriptions/", {"channel": "webhook", "target": "x"})
    assert refused.status_code == 403
    client.force_login(person(org, role="admin"))
    bad = client.post(
        "/claims/subscriptions/", {"channel": "webhook", "target": "ftp://example.com/x"}
    )
    assert bad.status_code == 400 and "http(s) URL" in bad.content.decode()
    made = client.post(
        "/claims/subscriptions/",
        {"channel": "webhook", "target": "http://127.0.0.1:9/hook", "claim": ""},
    )
    assert made.status_code == 200 and 'id="new-secret"' in made.content.decode()
    subscription = ClaimSubscription.objects.get(org=org)
    assert subscription.claim is None and len(subscription.secret) > 20
