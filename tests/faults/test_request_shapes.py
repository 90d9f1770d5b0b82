"""Findings 7, 9 and 11 (NaN): hostile request shapes get a 4xx that says what is wrong,
never a 500 with a traceback: too many multipart files or fields, too many query parameters,
duplicate keys in a document, non-finite numbers in query parameters."""

from __future__ import annotations

import json
import logging
import re

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db


def test_a_multipart_import_with_too_many_files_is_400(client, auth, caplog):
    files = {f"records{i}": (f"r{i}.jsonl", b"{}") for i in range(120)}
    body = _multipart({"file": ("f.json", b"{}"), **files})
    response = client.post(
        "/api/v1/imports", body, content_type="multipart/form-data; boundary=BOUNDARY", **auth
    )
    assert response.status_code == 400, response.content
    assert "files" in response.json()["detail"]
    assert "Traceback" not in caplog.text


def test_a_multipart_import_with_too_many_fields_is_400(client, auth, caplog):
    fields = {f"f{i}": i for i in range(1100)}
    body = _multipart({"file": ("f.json", b"{}")}, fields)
    response = client.post(
        "/api/v1/imports", body, content_type="multipart/form-data; boundary=BOUNDARY", **auth
    )
    assert response.status_code == 400, response.content
    assert "fields" in response.json()["detail"] or "parameters" in response.json()["detail"]
    assert "Traceback" not in caplog.text


def test_more_than_1000_query_parameters_is_400_for_anyone(client, caplog):
    caplog.set_level(logging.INFO)
    query = "&".join(f"p{i}=1" for i in range(1100))
    response = Client().get(f"/api/v1/runs?{query}")
    assert response.status_code == 400
    assert "parameters" in response.json()["detail"]
    assert "Traceback" not in caplog.text


def _multipart(files: dict, fields: dict | None = None) -> bytes:
    parts = []
    for name, value in (fields or {}).items():
        head = f'--BOUNDARY\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n'
        parts.append(f"{head}{value}\r\n".encode())
    for name, (filename, data) in files.items():
        head = (
            f'--BOUNDARY\r\nContent-Disposition: form-data; name="{name}"; '
            f'filename="{filename}"\r\nContent-Type: application/octet-stream\r\n\r\n'
        )
        parts.append(head.encode() + data + b"\r\n")
    return b"".join(parts) + b"--BOUNDARY--\r\n"


def test_a_duplicate_key_in_a_result_document_is_422_naming_it(client, auth, document):
    text = json.dumps(document)
    # "provenance": "measured", "provenance": "published": the last would win.
    assert '"provenance": "measured"' in text
    text = text.replace(
        '"provenance": "measured"', '"provenance": "measured", "provenance": "published"'
    )
    response = client.post("/api/v1/runs", text, content_type="application/json", **auth)
    assert response.status_code == 422, response.content
    (error,) = response.json()["detail"]
    assert error["path"] == "provenance" and "duplicate" in error["message"]
    from apps.runs.models import Run

    assert not Run.objects.exists()


def test_a_duplicate_key_deep_in_a_document_is_422_too(client, auth, document):
    concurrency = document["points"][0]["concurrency"]
    text = json.dumps(document).replace(
        f'"concurrency": {concurrency}', f'"concurrency": {concurrency}, "concurrency": 999', 1
    )
    response = client.post("/api/v1/runs", text, content_type="application/json", **auth)
    assert response.status_code == 422
    assert response.json()["detail"][0]["path"] == "concurrency"


def test_a_duplicate_key_in_any_json_body_is_422_naming_it(client, auth):
    body = '{"name": "a", "name": "b"}'
    response = client.post("/api/v1/pools", body, content_type="application/json", **auth)
    assert response.status_code == 422
    assert response.json()["detail"][0]["path"] == "name"


def number_query_parameters(client) -> list[tuple[str, str, str]]:
    schema = client.get("/api/v1/openapi.json").json()
    found = []
    for path, methods in schema["paths"].items():
        for method, operation in methods.items():
            for parameter in operation.get("parameters", []):
                spec = parameter.get("schema", {})
                types = {spec.get("type")} | {s.get("type") for s in spec.get("anyOf", [])}
                if parameter["in"] == "query" and "number" in types:
                    found.append((method, path, parameter["name"]))
    return found


@pytest.mark.parametrize("value", ["nan", "NaN", "inf", "-Infinity", "1e999"])
def test_every_number_query_parameter_refuses_non_finite_values(client, auth, value):
    parameters = number_query_parameters(client)
    assert ("post", "/api/v1/agent/claim", "wait") in parameters
    accepted = []
    for method, path, name in parameters:
        url = re.sub(r"\{[^}]+\}", "1", path) + f"?{name}={value}&pool=pool.x"
        response = getattr(client, method)(url, **auth)
        paths = []
        if response.status_code == 422:
            paths = [e["path"] for e in response.json()["detail"]]
        if name not in paths:
            accepted.append(f"{method.upper()} {path} {name}={value}: {response.status_code}")
    assert not accepted, accepted
