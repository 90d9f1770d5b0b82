"""Finding 6: with DEBUG off the server refuses to start without an explicit
ENDPOINT_ALLOWLIST (no loopback default), and refusals never list the allowlist."""

from __future__ import annotations

import pytest

from tests.test_settings import REAL_SECRETS, django_check


def test_production_refuses_to_start_without_an_allowlist():
    secrets = {k: v for k, v in REAL_SECRETS.items() if k != "ENDPOINT_ALLOWLIST"}
    result = django_check({"DEBUG": "0", **secrets})
    assert result.returncode != 0
    assert "ENDPOINT_ALLOWLIST must be set when DEBUG is off" in result.stderr
    assert django_check({"DEBUG": "0", **secrets, "ENDPOINT_ALLOWLIST": " "}).returncode != 0
    assert django_check({"DEBUG": "0", **REAL_SECRETS}).returncode == 0


@pytest.mark.django_db
def test_a_refusal_says_not_allowed_without_naming_the_allowlist(client, auth, settings):
    settings.ENDPOINT_ALLOWLIST = ["10.99.0.0/16", "gpu-secret.corp.internal"]
    body = {
        "name": "probe",
        "url": "http://127.0.0.1:9100/",
        "model": {"name": "m"},
        "deployment": {
            "accelerator": "H200",
            "gpus": 1,
            "engine": {"name": "vllm"},
            "quantization": {"weights": "FP8"},
        },
    }
    response = client.post("/api/v1/endpoints", body, content_type="application/json", **auth)
    assert response.status_code == 422
    message = response.json()["detail"][0]["message"]
    assert "not allowed" in message
    assert "10.99" not in message and "corp.internal" not in message
