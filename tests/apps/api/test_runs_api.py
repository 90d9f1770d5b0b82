import json
import uuid

import pytest
import redis
from django.conf import settings as django_settings
from django.core.management import call_command

from apps.accounts.services import organization_get_or_create, token_create, token_revoke
from apps.runs.models import Point, RequestRecord, Run

pytestmark = pytest.mark.django_db


def post_run(client, document, *, query: str = "", **headers):
    return client.post(
        f"/api/v1/runs{query}",
        data=json.dumps(document),
        content_type="application/json",
        **headers,
    )


@pytest.mark.sqlite_smoke
def test_a_new_document_gets_201_and_a_replay_gets_200_with_the_same_id(client, document, auth):
    first = post_run(client, document, **auth)
    assert first.status_code == 201, first.content
    assert first.json()["page"] == f"/runs/{first.json()['id']}/"
    replay = post_run(client, document, **auth)
    assert replay.status_code == 200
    assert replay.json()["id"] == first.json()["id"]
    assert replay.json()["created"] is False
    assert Run.objects.count() == 1


@pytest.mark.parametrize(
    "header",
    [None, "Bearer ib_not-a-real-token", "Basic dXNlcjpwYXNz", "Bearer "],
    ids=["missing", "wrong", "wrong-scheme", "empty"],
)
def test_it_rejects_a_missing_or_wrong_token_with_401(client, document, header):
    headers = {"HTTP_AUTHORIZATION": header} if header else {}
    response = post_run(client, document, **headers)
    assert response.status_code == 401
    assert Run.objects.count() == 0


def test_it_rejects_a_revoked_token(client, document, issued, auth):
    token_revoke(token=issued.token)
    assert post_run(client, document, **auth).status_code == 401
    assert client.get("/api/v1/runs", **auth).status_code == 401


def test_validation_errors_name_the_field_path_and_store_nothing(client, document, auth):
    document["points"][1]["latency_ms"]["ttft"]["p99"] = -5
    document["points"][0]["requests"]["total"] = "many"
    response = post_run(client, document, **auth)
    assert response.status_code == 422
    detail = {item["path"]: item["message"] for item in response.json()["detail"]}
    assert detail["points[1].latency_ms.ttft.p99"] == "must be >= 0"
    assert "points[0].requests.total" in detail
    assert (Run.objects.count(), Point.objects.count(), RequestRecord.objects.count()) == (0, 0, 0)


def test_it_refuses_a_disaggregated_deployment_whose_gpus_are_not_its_pools(client, document, auth):
    # 8 GPUs stated over pools of 8 + 16: every per-GPU figure would read 3x too good.
    document["deployment"]["gpus"] = 8
    document["deployment"]["disaggregation"] = {"prefill_gpus": 8, "decode_gpus": 16}
    response = post_run(client, document, **auth)
    assert response.status_code == 422
    detail = {item["path"]: item["message"] for item in response.json()["detail"]}
    assert list(detail) == ["deployment.gpus"]
    assert "8 + 16 = 24" in detail["deployment.gpus"]
    assert Run.objects.count() == 0
    document["deployment"]["gpus"] = 24
    assert post_run(client, document, **auth).status_code == 201


def test_a_body_that_is_not_json_is_a_clear_4xx(client, auth):
    response = client.post(
        "/api/v1/runs", data="{not json", content_type="application/json", **auth
    )
    assert 400 <= response.status_code < 500
    assert Run.objects.count() == 0


def test_an_oversized_body_gets_413_before_anything_is_read(client, document, auth, settings):
    settings.API_MAX_BODY_BYTES = 1024
    response = post_run(client, document, **auth)
    assert response.status_code == 413
    assert "1024" in response.json()["detail"]
    assert Run.objects.count() == 0


def test_a_private_run_is_404_for_anonymous_users_and_other_organizations(client, document, auth):
    run_id = post_run(client, document, query="?private=true", **auth).json()["id"]
    other = token_create(org=organization_get_or_create(slug="rival")).plaintext
    other_auth = {"HTTP_AUTHORIZATION": f"Bearer {other}"}

    assert client.get(f"/api/v1/runs/{run_id}", **auth).status_code == 200
    assert client.get(f"/api/v1/runs/{run_id}").status_code == 404
    assert client.get(f"/api/v1/runs/{run_id}", **other_auth).status_code == 404
    assert client.get("/api/v1/runs").json()["count"] == 0
    assert client.get("/api/v1/runs", **other_auth).json()["count"] == 0
    assert client.get("/api/v1/runs", **auth).json()["count"] == 1


def test_a_run_shows_its_points_deployment_and_accuracy(client, document, auth):
    run_id = post_run(client, document, **auth).json()["id"]
    body = client.get(f"/api/v1/runs/{run_id}").json()
    assert body["accelerator"] == "MI355X" and body["gpus"] == 8
    assert body["parallelism"] == "TP4×DP2"
    assert body["scenario"] == "seed-20k-1k-60"
    assert [p["concurrency"] for p in body["points"]] == [1, 16]
    assert body["points"][1]["latency_ms"]["ttft"]["p99"] == 2180
    assert body["points"][0]["prefix_cache_hit_rate"] == 0.6
    assert body["request_records"] == 2
    assert body["accuracy"][0]["score"] == 0.6667


def test_runs_can_be_filtered_and_paginated(client, document, auth):
    call_command("loadreference", no_inferencex=True, verbosity=0)
    post_run(client, document, **auth)

    def count(query: str) -> int:
        return client.get(f"/api/v1/runs?{query}").json()["count"]

    # The reference data: Wafer's 3 published MI355X runs and sglang's cookbook's 9 (6 on
    # B200, 3 on MI355X, all FP8 or NVFP4 on 8k-1k).
    assert count("") == 13
    assert count("provenance=published") == 12
    assert count("provenance=measured&accelerator=mi355x") == 1
    assert count("engine=sglang&quantization=MXFP4&model=GLM%205.2") == 4
    assert count("scenario=seed-20k-1k-60") == 4
    assert count("scenario=8k-1k") == 9
    assert count("accelerator=B200") == 6
    page = client.get("/api/v1/runs?limit=2&offset=1").json()
    assert (page["count"], len(page["items"]), page["offset"]) == (13, 2, 1)
    bad = client.get("/api/v1/runs?provenance=guessed")
    assert bad.status_code == 422
    assert bad.json()["detail"][0]["path"] == "provenance"


def test_the_cached_run_list_shows_a_new_run_at_once(
    client, document, auth, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        post_run(client, document, **auth)
    assert client.get("/api/v1/runs").json()["count"] == 1  # now cached
    assert client.get("/api/v1/runs").json()["count"] == 1  # served from the cache
    with django_capture_on_commit_callbacks(execute=True):
        post_run(client, {**document, "idempotency_key": str(uuid.uuid4())}, **auth)
    assert client.get("/api/v1/runs").json()["count"] == 2


def test_the_cached_run_list_keeps_private_runs_to_their_organization(
    client, document, auth, django_capture_on_commit_callbacks
):
    rival = {"HTTP_AUTHORIZATION": "Bearer " + token_create(org=organization_get_or_create(
        slug="rival")).plaintext}  # fmt: skip
    with django_capture_on_commit_callbacks(execute=True):
        post_run(client, document, **auth)
        private = {**document, "idempotency_key": str(uuid.uuid4())}
        post_run(client, private, query="?private=true", **auth)
    for _ in range(2):  # the second round is served from the cache
        assert client.get("/api/v1/runs", **auth).json()["count"] == 2
        assert client.get("/api/v1/runs").json()["count"] == 1
        assert client.get("/api/v1/runs", **rival).json()["count"] == 1


def test_made_up_filters_offsets_and_page_sizes_never_fill_the_list_cache(client, document, auth):
    if not django_settings.REDIS_URL:
        pytest.fail("REDIS_URL is not set: run the suite with scripts/test")
    keys = redis.Redis.from_url(django_settings.REDIS_URL)
    post_run(client, document, **auth)
    for n in range(50):
        assert client.get(f"/api/v1/runs?model=made-up-{n}").json()["items"] == []
        assert client.get(f"/api/v1/runs?offset={n + 1}").json()["items"] == []
        assert client.get(f"/api/v1/runs?limit={3 + n % 6}").status_code == 200
        assert client.get(f"/api/v1/runs?model=GLM%205.2\u00e9{n}").status_code == 200
    assert keys.keys("*api:runs:*") == []
    # A page that holds runs, in a usual size, is stored: the check above can fail.
    assert client.get("/api/v1/runs?model=glm%205.2&limit=20").json()["count"] == 1
    assert len(keys.keys("*api:runs:*")) == 1


@pytest.mark.sqlite_smoke
def test_accelerators_are_listed_with_price_tiers(client):
    call_command("loadreference", no_inferencex=True, verbosity=0)
    accelerators = {a["sku"]: a for a in client.get("/api/v1/accelerators").json()}
    b200 = accelerators["B200"]
    prices = {p["tier"]: (p["usd_per_gpu_hour"], p["price_set"]) for p in b200["prices"]}
    # The newest set; its neocloud tier is the July 2026 set's, the newest that states one.
    assert prices == {
        "owning_hyperscaler": (1.73, "semianalysis-2026-07-rental"),
        "owning_neocloud": (2.0693175588620671, "semianalysis-2026-07"),
        "rental_3yr": (3.70, "semianalysis-2026-07-rental"),
    }
    assert b200["all_in_kw"] == 1.71
    assert accelerators["MI355X"]["pool"] == "pool.mi355x"
    august = {
        a["sku"]: a for a in client.get("/api/v1/accelerators?prices_as_of=2025-12-01").json()
    }
    assert {p["tier"]: p["usd_per_gpu_hour"] for p in august["B200"]["prices"]} == {
        "owning_hyperscaler": 1.95,
        "owning_neocloud": 2.34,
        "rental_3yr": 2.90,
    }
    assert august["B200"]["all_in_kw"] == 2.17


def test_scenarios_include_the_presets_and_can_be_created(client, auth):
    slugs = {s["slug"] for s in client.get("/api/v1/scenarios").json()}
    assert {"seed-20k-1k-60", "8k-1k", "1k-1k", "single-stream"} <= slugs
    new = {"input_tokens": 2048, "output_tokens": 256, "prefix_cache_hit_rate": 0.3}
    created = client.post("/api/v1/scenarios", json.dumps(new), "application/json", **auth)
    assert created.status_code == 201
    again = client.post("/api/v1/scenarios", json.dumps(new), "application/json", **auth)
    assert again.status_code == 200 and again.json()["slug"] == created.json()["slug"]
    anonymous = client.post("/api/v1/scenarios", json.dumps(new), "application/json")
    assert anonymous.status_code == 401


def test_the_openapi_document_describes_the_result_document(client):
    spec = client.get("/api/v1/openapi.json").json()
    assert "/api/v1/runs" in spec["paths"]
    assert "ResultDocument" in spec["components"]["schemas"]
    assert client.get("/api/v1/docs").status_code == 200


def test_the_openapi_document_repeats_no_key_in_any_object(client):
    # Swagger's YAML parser refuses a repeated key ("duplicated mapping key"), and json.loads
    # would hide one by keeping the last: read the pairs as they are on the wire.
    repeated: list[str] = []

    def pairs(items: list[tuple[str, object]]) -> dict:
        keys = [key for key, _ in items]
        repeated.extend(sorted({key for key in keys if keys.count(key) > 1}))
        return dict(items)

    json.loads(client.get("/api/v1/openapi.json").content, object_pairs_hook=pairs)
    assert repeated == []


def test_a_submitted_document_is_validated_from_its_bytes_not_as_a_tree_of_models(client, auth):
    import tracemalloc

    from tests.apps.runs.test_ingest import _records_document

    # A first submission imports what a request needs: one-off allocations, not the body's.
    small = json.dumps(_records_document(10)).encode()
    assert client.post("/api/v1/runs", data=small, content_type="application/json", **auth)
    body = json.dumps(_records_document(20_000)).encode()
    tracemalloc.start()
    try:
        response = client.post("/api/v1/runs", data=body, content_type="application/json", **auth)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert response.status_code == 201, response.content[:500]
    assert RequestRecord.objects.count() == 20_010
    # The test client holds two copies of the body: measured 4.5x here, and 13.9x when ninja
    # parsed the body into a dict tree and then models.
    assert peak < 6 * len(body), (peak, len(body))


def test_the_list_and_the_detail_give_the_same_summary_of_a_run(client, document, auth):
    created = post_run(client, document, **auth).json()
    [listed] = client.get("/api/v1/runs").json()["items"]
    detail = client.get(f"/api/v1/runs/{created['id']}").json()
    assert listed == {key: detail[key] for key in listed}
    assert listed["slo_verdict"] is not None  # the example's scenario states an SLO


@pytest.mark.parametrize(
    ("query", "public"),
    [("", True), ("?visibility=public", True), ("?visibility=private", False)],
    ids=["default", "public", "private"],
)
def test_it_honours_the_visibility_asked_on_submit(client, document, auth, query, public):
    response = post_run(client, document, query=query, **auth)
    assert response.status_code == 201, response.content
    run = Run.objects.get(pk=response.json()["id"])
    assert run.is_public is public
    assert response.json()["visibility"] == ("public" if public else "private")
    # The private run is its organization's: an anonymous reader does not find it.
    assert client.get(f"/api/v1/runs/{run.pk}").status_code == (200 if public else 404)


@pytest.mark.parametrize(
    "query", ["?visibility=secret", "?visibility=public&private=true"], ids=["unknown", "both"]
)
def test_it_refuses_a_visibility_it_cannot_honour_naming_the_field(client, document, auth, query):
    response = post_run(client, document, query=query, **auth)
    assert response.status_code == 422
    assert "visibility" in json.dumps(response.json()["detail"])
    assert Run.objects.count() == 0


def test_the_default_visibility_is_stated_in_the_docs_and_on_the_token_page(client, org, person):
    schema = client.get("/api/v1/openapi.json").json()
    assert schema["info"]["description"].startswith("Runs submitted here are **public**")
    client.force_login(person(org, "admin"))
    page = client.get("/org/").content.decode()
    assert 'id="submit-visibility"' in page and "<strong>public</strong>" in page
