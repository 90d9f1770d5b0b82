"""The worker's side of the REST API: job events (status, heartbeats) and result submission.

Workers talk to the server only over HTTP with a token; they never hold database credentials.
Every call is bounded by timeouts and retried with backoff on network errors and 5xx, so a
server restart does not lose a finished measurement.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

from workers.results import ResultDocument
from workers.retry import backoff_delays

log = logging.getLogger(__name__)


RUNS_PATH = "/api/v1/runs"
# The header a scheduled job's result document comes with (apps.runs.services.run_ingest).
JOB_SECRET_HEADER = "X-Inferboard-Job-Secret"


def server_base(url: str) -> str:
    """The server's base URL from what a user passes as `--submit URL`.

    `--submit` names the server (`https://inferboard.example.com`) for every command;
    the runs endpoint itself (`.../api/v1/runs`) is accepted too, so older scripts keep working.
    """
    base = url.strip().rstrip("/")
    return base.removesuffix(RUNS_PATH).rstrip("/")


def runs_url(url: str, *, private: bool = False) -> str:
    """Where result documents are POSTed on the server `url` names."""
    return server_base(url) + RUNS_PATH + ("?private=true" if private else "")


class ServerError(Exception):
    """The server could not be reached, or kept failing, after every retry."""


class ServerRefused(Exception):
    """The server answered with a 4xx: retrying the same request will not help."""


class Retryable(Exception):
    """An attempt the server may answer on a later try (a 5xx, a 429, a reply without JSON)."""


def succeeded(path: str, response: httpx.Response) -> httpx.Response:
    """A 2xx response as it is; a 5xx or 429 is Retryable; any other status is refused."""
    if response.status_code < 300:
        return response
    last = f"HTTP {response.status_code}: {response.text[:500]}"
    if response.status_code < 500 and response.status_code != 429:
        raise ServerRefused(f"{path}: {last}")
    raise Retryable(last)


# What a worker reports about a job (POST /api/v1/jobs/{id}/events), and the server's answer:
# one definition for both sides (apps/jobs reads these), so the two cannot drift.
EVENTS = ("started", "heartbeat", "succeeded", "failed", "cancelled")


@dataclass(frozen=True)
class EventAnswer:
    """`proceed` false on `started` means: do not run; `cancel` true on a heartbeat: stop."""

    status: str
    proceed: bool = False
    cancel: bool = False
    detail: str = ""
    # The endpoint's key, in the answer that lets this worker start the job (never logged).
    api_key: str | None = field(default=None, repr=False)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> EventAnswer:
        return cls(
            status=str(data.get("status", "")),
            proceed=bool(data.get("proceed", False)),
            cancel=bool(data.get("cancel", False)),
            detail=str(data.get("detail", "")),
            api_key=data.get("api_key") or None,
        )


class ServerClient:
    def __init__(
        self,
        base_url: str,
        token: str,
        *,
        timeout_s: float = 30.0,
        attempts: int = 6,
        backoff_s: float = 1.0,
    ) -> None:
        self.base_url = server_base(base_url)
        self.token = token
        self.timeout_s = timeout_s
        self.attempts = attempts
        self.backoff_s = backoff_s

    def _post(
        self,
        path: str,
        body: str,
        attempts: int | None = None,
        extra_headers: dict[str, str] | None = None,
    ) -> dict[str, Any]:
        headers = {
            "Authorization": f"Bearer {self.token}",
            "Content-Type": "application/json",
            **(extra_headers or {}),
        }
        url = self.base_url + path

        def once() -> dict[str, Any]:
            response = httpx.post(url, content=body, headers=headers, timeout=self.timeout_s)
            if response.is_redirect:
                raise ServerRefused(
                    f"{path}: redirected to {response.headers.get('location')}; set "
                    "INFERBOARD_SERVER_URL to the server's final (https) URL"
                )
            answer = succeeded(path, response)
            try:
                return answer.json()
            except ValueError:
                # A proxy's HTML page, say: the server did not really answer.
                raise Retryable(
                    f"HTTP {answer.status_code} without JSON: {answer.text[:200]}"
                ) from None

        return self._retrying("POST", path, attempts or self.attempts, once)

    def _retrying[T](self, method: str, path: str, tries: int, once: Callable[[], T]) -> T:
        """`once()`, tried up to `tries` times with backoff while it fails on the network or
        raises Retryable; ServerRefused (or any other error) ends it at once."""
        delays, last = backoff_delays(self.backoff_s), ""
        for attempt in range(1, tries + 1):
            try:
                return once()
            except httpx.HTTPError as exc:
                last = f"{type(exc).__name__}: {exc}"
            except Retryable as exc:
                last = str(exc)
            if attempt < tries:
                delay = next(delays)
                log.warning("%s %s failed (%s); retrying in %.0f s", method, path, last, delay)
                time.sleep(delay)
        raise ServerError(f"{method} {path} failed after {tries} attempts: {last}")

    def event(
        self,
        job_id: int,
        event: str,
        *,
        attempt: int,
        worker: str,
        message: str = "",
        run_id: int | None = None,
        retries: int | None = None,
        member: int | None = None,
    ) -> EventAnswer:
        body: dict[str, Any] = {
            "event": event,
            "attempt": attempt,
            "worker": worker,
            "message": message[:2000],
        }
        if run_id is not None:
            body["run_id"] = run_id
        if member is not None:  # one member of a job fanned out over several workers
            body["member"] = member
        data = self._post(f"/api/v1/jobs/{job_id}/events", json.dumps(body), retries)
        return EventAnswer.from_json(data)

    def submit(
        self, document: ResultDocument, *, private: bool = False, job_secret: str | None = None
    ) -> int:
        """POST the document; the same idempotency key on every retry, so at most one run.

        `job_secret`: the one a queued job's task carried; it travels in a header, never in
        the document (which the server stores and serves)."""
        path = runs_url("", private=private)
        headers = {JOB_SECRET_HEADER: job_secret} if job_secret else None
        data = self._post(path, json.dumps(document.to_json_dict()), extra_headers=headers)
        return int(data["id"])

    def submit_part(
        self,
        job_id: int,
        part: dict[str, Any],
        *,
        attempt: int,
        member: int,
        worker: str,
        job_secret: str | None = None,
    ) -> dict[str, Any]:
        """POST one member's part of a fanned-out job; the server answers the job's status
        and, once the last part is in, the merged run's id. Resending a part replaces it."""
        body = {"attempt": attempt, "member": member, "worker": worker, "part": part}
        headers = {JOB_SECRET_HEADER: job_secret} if job_secret else None
        data = self._post(f"/api/v1/jobs/{job_id}/parts", json.dumps(body), extra_headers=headers)
        return {"status": str(data.get("status", "")), "run_id": data.get("run_id")}
