"""Finding 3: with PostgreSQL unreachable the production command answers 503 with
Retry-After within seconds (connect and pool timeouts), never a 30 s wait and a 500;
/readyz names the database and /healthz stays up."""

from __future__ import annotations

import httpx
import pytest

from tests.faults.conftest import dead_url

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.parametrize("pool", ["10", "0"], ids=["pooled", "a-connection-per-request"])
def test_requests_answer_503_not_a_hang_while_the_database_is_down(production_server, pool):
    url = production_server(DATABASE_URL=dead_url("postgres", "/inferboard"), DB_POOL_SIZE=pool)
    token = {"Authorization": "Bearer ib_whatever"}
    # The client's deadline bounds a failure, it is not a speed check: without the settings'
    # 3 s connect and pool timeouts, the pool would wait its default 30 s and the client would
    # give up first. A loaded machine stretches the 3 s well past 5 s, never to 20.
    with httpx.Client(base_url=url, timeout=20) as http:
        for method, path, headers in (
            ("GET", "/api/v1/runs", {}),
            ("POST", "/api/v1/runs", token),
            ("GET", "/", {}),
            ("GET", "/runs/", {}),
        ):
            response = http.request(method, path, headers=headers, content=b"{}")
            assert response.status_code == 503, (method, path, response.text[:500])
            assert int(response.headers["Retry-After"]) > 0
            if path.startswith("/api/"):
                assert response.json()["detail"][0]["path"] == "database"
            else:
                assert "Temporarily unavailable" in response.text
        ready = http.get("/readyz")
        assert ready.status_code == 503 and ready.json()["unavailable"] == ["database"]
        assert http.get("/healthz").status_code == 200
