"""Bodies no client should send, answered as JSON 4xx naming the problem, never a 500."""

from __future__ import annotations

import json

import pytest

from apps.runs.models import Run

pytestmark = pytest.mark.django_db


def post_json(client, auth, document):
    return client.post(
        "/api/v1/runs", data=json.dumps(document), content_type="application/json", **auth
    )


def paths(response) -> dict[str, str]:
    return {item["path"]: item["message"] for item in response.json()["detail"]}


@pytest.mark.parametrize(
    ("change", "path"),
    [
        (lambda d: d["deployment"].__setitem__("gpus", 2**31), "deployment.gpus"),
        (
            lambda d: d["deployment"]["parallelism"].__setitem__("tp", 2**31),
            "deployment.parallelism.tp",
        ),  # noqa: E501
        (lambda d: d["points"][0].__setitem__("concurrency", 2**31), "points[0].concurrency"),
        (
            lambda d: d["points"][0]["requests"].__setitem__("total", 2**31),
            "points[0].requests.total",
        ),  # noqa: E501
        (lambda d: d["points"][0]["tokens"].__setitem__("input", 2**63), "points[0].tokens.input"),
        (lambda d: d["scenario"].__setitem__("input_tokens", 2**31), "scenario.input_tokens"),
        (
            lambda d: d["points"][0]["records"][0].__setitem__("n_in", 2**31),
            "points[0].records[0].n_in",
        ),  # noqa: E501
        (lambda d: d["deployment"].__setitem__("accelerator", "A" * 51), "deployment.accelerator"),
        (
            lambda d: d["deployment"]["quantization"].__setitem__("weights", "Q" * 101),
            "deployment.quantization.weights",
        ),  # noqa: E501
        (lambda d: d["deployment"].__setitem__("accelerator", "MI\u0000"), "deployment"),
        (
            lambda d: d["points"][0]["records"][0].__setitem__("error", "x\u0000"),
            "points[0].records[0].error",
        ),  # noqa: E501
        (lambda d: d["environment"].__setitem__("extra", {"k": "\u0000"}), "environment.extra"),
    ],
)
def test_values_the_database_cannot_hold_get_422_naming_the_field(
    client, auth, document, change, path
):
    change(document)
    response = post_json(client, auth, document)
    assert response.status_code == 422, response.content
    assert path in paths(response)
    assert Run.objects.count() == 0


@pytest.mark.parametrize("field", ['"tpot_ms": 4.7', '"output_tok_s": 200'])
@pytest.mark.parametrize("number", ["Infinity", "-Infinity", "NaN", "1e309"])
def test_non_finite_numbers_in_points_and_records_get_422(client, auth, document, field, number):
    text = json.dumps(document)
    assert field in text
    body = text.replace(field, field.split(":")[0] + f": {number}", 1)
    response = client.post("/api/v1/runs", data=body, content_type="application/json", **auth)
    assert response.status_code == 422, response.content
    assert Run.objects.count() == 0


def test_environment_extra_nested_a_thousand_deep_gets_422_not_a_500(client, auth, document):
    deep: dict = {}
    for _ in range(900):
        deep = {"a": deep}
    document["environment"]["extra"] = deep
    response = post_json(client, auth, document)
    assert response.status_code in (400, 422), response.content
    assert response["Content-Type"].startswith("application/json")
    assert Run.objects.count() == 0


def test_an_offset_beyond_any_run_gets_422_naming_offset(client):
    response = client.get("/api/v1/runs?offset=99999999999999999999")
    assert response.status_code == 422
    assert "offset" in paths(response)


def test_an_id_beyond_64_bits_gets_a_json_4xx(client):
    response = client.get(f"/api/v1/runs/{2**70}")
    assert response.status_code in (404, 422)
    assert response["Content-Type"].startswith("application/json")


def test_a_multipart_import_without_a_boundary_gets_400_as_json(client, auth):
    response = client.post(
        "/api/v1/imports", data=b"--x\r\n", content_type="multipart/form-data", **auth
    )
    assert response.status_code == 400, response.content
    assert response["Content-Type"].startswith("application/json")


def test_an_import_of_deeply_nested_json_gets_422_naming_the_file(client, auth):
    from django.core.files.uploadedfile import SimpleUploadedFile

    nested = ("[" * 100_000 + "]" * 100_000).encode()
    upload = SimpleUploadedFile("deep.json", nested, content_type="application/json")
    response = client.post("/api/v1/imports", {"file": upload}, **auth)
    assert response.status_code == 422, response.content
    assert "file" in paths(response)


def test_a_chunked_body_gets_411_instead_of_being_read_as_empty(client, auth):
    response = client.post(
        "/api/v1/runs",
        data=b"",
        content_type="application/json",
        HTTP_TRANSFER_ENCODING="chunked",
        **auth,
    )
    assert response.status_code == 411
