"""A small typed client for inferboard's REST API: list, get, submit, import, compare.

`inferboard-worker bench --submit` and `eval --submit` post through `InferboardClient.submit`;
the Celery tasks and the agent use the same class for their job events. Reads retry like
writes (timeouts, backoff on network errors and 5xx); a 4xx raises ServerRefused at once.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
from pydantic import BaseModel, ConfigDict

from workers.results import ResultDocument
from workers.submit import RUNS_PATH, ServerClient, ServerRefused, succeeded


class _Answer(BaseModel):
    # The server may add fields; a client older than it still reads what it knows.
    model_config = ConfigDict(extra="allow")


class RuleFailure(_Answer):
    rule: str
    reason: str


class RunSummary(_Answer):
    id: int
    url: str
    provenance: str
    origin: str
    origin_host: str = ""
    rules_passed: bool
    rules_failed: list[RuleFailure] = []
    model: str
    accelerator: str
    gpus: int
    engine: str
    quantization: str
    scenario: str | None
    deployment_fingerprint: str
    slo_verdict: str | None = None


class RunPage(_Answer):
    count: int
    limit: int
    offset: int
    items: list[RunSummary]


class RunDetail(RunSummary):
    deployment: dict[str, Any]
    environment: dict[str, Any]
    points: list[dict[str, Any]]
    accuracy: list[dict[str, Any]]
    request_records: int


class Imported(_Answer):
    pass


class Comparison(_Answer):
    cost_ratio: float | None
    throughput_ratio: float | None
    slo: str
    reason: str
    differences: list[dict[str, Any]]


class InferboardClient(ServerClient):
    """The server at `base_url` (`https://inferboard.example.com`), with an API token
    (optional for reads: without one, public runs only)."""

    def _get(self, path: str, params: dict[str, Any] | None = None) -> Any:
        headers = {"Authorization": f"Bearer {self.token}"} if self.token else {}
        query = {k: v for k, v in (params or {}).items() if v is not None}

        def once() -> Any:
            response = httpx.get(
                self.base_url + path, params=query, headers=headers, timeout=self.timeout_s
            )
            return succeeded(path, response).json()

        return self._retrying("GET", path, self.attempts, once)

    def list_runs(
        self,
        *,
        model: str | None = None,
        accelerator: str | None = None,
        engine: str | None = None,
        quantization: str | None = None,
        scenario: str | None = None,
        provenance: str | None = None,
        origin: str | None = None,
        limit: int = 50,
        offset: int = 0,
    ) -> RunPage:
        params = {
            "model": model,
            "accelerator": accelerator,
            "engine": engine,
            "quantization": quantization,
            "scenario": scenario,
            "provenance": provenance,
            "origin": origin,
            "limit": limit,
            "offset": offset,
        }
        return RunPage.model_validate(self._get(RUNS_PATH, params))

    def get_run(self, run_id: int) -> RunDetail:
        return RunDetail.model_validate(self._get(f"{RUNS_PATH}/{run_id}"))

    def get_document(self, run_id: int) -> ResultDocument:
        """The run's result document, per-request records included."""
        return ResultDocument.model_validate(self._get(f"{RUNS_PATH}/{run_id}/document"))

    def import_file(
        self,
        path: Path,
        *,
        format: str | None = None,
        deployment: Path | None = None,
        private: bool = False,
    ) -> Imported:
        """Import a peer tool's result file (POST /api/v1/imports, multipart)."""
        files: list[tuple[str, tuple[str, bytes]]] = [("file", (path.name, path.read_bytes()))]
        if deployment is not None:
            files.append(("deployment", (deployment.name, deployment.read_bytes())))
        response = httpx.post(
            self.base_url + "/api/v1/imports",
            params={"private": "true"} if private else None,
            data={"format": format} if format else None,
            files=files,
            headers={"Authorization": f"Bearer {self.token}"},
            timeout=self.timeout_s,
        )
        if response.status_code >= 300:
            raise ServerRefused(f"/api/v1/imports: HTTP {response.status_code}: {response.text}")
        return Imported.model_validate(response.json())

    def compare(self, run_a: int, run_b: int, *, token_kind: str = "output") -> Comparison:
        """A vs B at the scenario's SLO: cost and throughput ratios with what differs."""
        params = {"run_a": run_a, "run_b": run_b, "token_kind": token_kind}
        return Comparison.model_validate(self._get("/api/v1/costs/compare", params))
