"""API and page latency under 32 concurrent loopback clients, with and without one large run.

    python bench/api_load.py [--clients 32] [--seconds 5] [--large-mb 64]

Runs the documented production setup (`gunicorn --config python:apps.serving
apps.asgi:application`: uvicorn workers, WEB_CONCURRENCY 3, DEBUG off, Redis cache, collected
static files) on a
fresh PostgreSQL database made and dropped by the run (DATABASE_URL's server, default
postgres://postgres@127.0.0.1:5432/inferboard_apiload; REDIS_URL, default
redis://127.0.0.1:6379/15). For each of `GET /api/v1/runs`, `GET /` and `POST /api/v1/runs`
(small documents), and `GET /healthz` as the floor (a view that only answers "ok": what
the server and client stack cost on this machine), it prints requests/s, p50 and p99, first
with 40 small runs stored, then again after one run of about --large-mb MiB (request records)
is stored, and the ratio: the large run should change list latency by no more than noise.
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import json
import os
import secrets
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DEFAULT_DB = "postgres://postgres@127.0.0.1:5432/inferboard_apiload"
DEFAULT_REDIS = "redis://127.0.0.1:6379/15"
EXAMPLE = json.loads((ROOT / "tests" / "examples" / "measured-run.json").read_text())


def small_document() -> dict:
    document = copy.deepcopy(EXAMPLE)
    document["idempotency_key"] = str(uuid.uuid4())
    for point in document["points"]:
        point.pop("records", None)
    return document


def large_document(megabytes: int) -> bytes:
    """One run whose request records make it about `megabytes` MiB of JSON."""
    document = copy.deepcopy(EXAMPLE)
    document["idempotency_key"] = str(uuid.uuid4())
    record = {
        "i": 0,
        "t_sched_ms": 10.0,
        "t_send_ms": 10.05,
        "ttft_ms": 400.0,
        "ttfo_ms": 400.0,
        "e2el_ms": 5100.0,
        "tpot_ms": 4.7,
        "n_in": 20000,
        "n_out": 1000,
        "cached": 12000,
        "chunks": 1000,
        "status": "ok",
    }
    per_record = len(json.dumps(record)) + 2
    # 1% under the size, so that "64" still fits under API_MAX_BODY_BYTES (64 MiB).
    count = int(megabytes * 1024 * 1024 * 0.99) // per_record // len(document["points"])
    while True:
        for point in document["points"]:
            point["records"] = [{**record, "i": i} for i in range(count)]
            point["requests"] = {"total": count, "succeeded": count, "failed": 0}
        body = json.dumps(document).encode()
        if len(body) <= megabytes * 1024 * 1024 * 0.99:
            return body
        count = int(count * 0.98)


async def load(url: str, method: str, clients: int, seconds: float, token: str) -> dict:
    """`clients` loops, each sending its next request when the last one answered."""
    latencies: list[float] = []
    failures = 0
    stop = time.perf_counter() + seconds
    headers = {"Authorization": f"Bearer {token}"}

    async def client(http: httpx.AsyncClient) -> None:
        nonlocal failures
        while time.perf_counter() < stop:
            body = small_document() if method == "POST" else None
            start = time.perf_counter()
            answer = await http.request(method, url, json=body, headers=headers)
            latencies.append(time.perf_counter() - start)
            failures += answer.status_code >= 400

    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(timeout=120, limits=limits) as http:
        started = time.perf_counter()
        await asyncio.gather(*(client(http) for _ in range(clients)))
        elapsed = time.perf_counter() - started
    latencies.sort()
    return {
        "rps": len(latencies) / elapsed,
        "p50_ms": statistics.median(latencies) * 1000,
        "p99_ms": latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))] * 1000,
        "requests": len(latencies),
        "failures": failures,
    }


def manage(env: dict, *args: str) -> str:
    out = subprocess.run(
        [sys.executable, "manage.py", *args], env=env, cwd=ROOT, capture_output=True, text=True
    )
    if out.returncode != 0:
        sys.exit(f"manage.py {' '.join(args)} failed:\n{out.stderr[-3000:]}")
    return out.stdout


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=3.0, help="per endpoint and round")
    parser.add_argument(
        "--rounds", type=int, default=3, help="rounds per endpoint and phase; the median counts"
    )
    parser.add_argument("--large-mb", type=int, default=64)
    parser.add_argument("--workers", type=int, default=3, help="WEB_CONCURRENCY (compose: 3)")
    args = parser.parse_args()

    from cryptography.fernet import Fernet

    from workers.testing.processes import free_port, stop, wait_until_healthy

    base = os.environ.get("DATABASE_URL", DEFAULT_DB).rsplit("/", 1)[0]
    name = f"inferboard_apiload_{uuid.uuid4().hex[:8]}"
    admin = f"{base}/postgres"
    var_dir = tempfile.mkdtemp(prefix="inferboard-apiload-")
    env = {
        **os.environ,
        "DATABASE_URL": f"{base}/{name}",
        "REDIS_URL": os.environ.get("REDIS_URL", DEFAULT_REDIS),
        "DEBUG": "0",
        # Production refuses placeholder or weak secrets (apps/settings.py): make real ones.
        "SECRET_KEY": secrets.token_urlsafe(50),
        "ENDPOINT_CREDENTIALS_KEY": Fernet.generate_key().decode(),
        "ENDPOINT_ALLOWLIST": "127.0.0.0/8",
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "SECURE_SSL_REDIRECT": "0",
        "INFERBOARD_VAR_DIR": var_dir,
        "WEB_CONCURRENCY": str(args.workers),
        # Measures what a write costs the server, not the per-token write limit (120/min).
        "RATE_LIMIT_TOKEN_WRITES": "1000000/60",
        "RATE_LIMIT_ORG_WRITES": "1000000/60",
        "PYTHONPATH": str(ROOT),
    }
    import psycopg

    with psycopg.connect(admin, autocommit=True) as db:
        db.execute(f'CREATE DATABASE "{name}"')
    server = None
    try:
        manage(env, "migrate", "-v0")
        manage(env, "loadreference")
        manage(env, "collectstatic", "--noinput", "-v0")
        token = manage(env, "createtoken", "bench").strip().splitlines()[-1].strip()
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        server = subprocess.Popen(
            [
                str(Path(sys.executable).with_name("gunicorn")),
                "--config",
                "python:apps.serving",
                "apps.asgi:application",
                "--bind",
                f"127.0.0.1:{port}",
            ],
            env=env,
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_until_healthy(url, server, 120, path="/healthz")
        headers = {"Authorization": f"Bearer {token}"}
        with httpx.Client(timeout=300) as http:
            for _ in range(40):
                http.post(url + "/api/v1/runs", json=small_document(), headers=headers)
        targets = [
            # The floor: the serving stack (uvicorn, Django's middleware, the client) alone.
            ("GET /healthz (floor)", "GET", url + "/healthz"),
            ("GET /api/v1/runs", "GET", url + "/api/v1/runs"),
            ("GET /", "GET", url + "/"),
            ("POST /api/v1/runs", "POST", url + "/api/v1/runs"),
        ]

        def phase() -> dict[str, dict]:
            # Rounds interleave the endpoints, and the round with the median p50 counts: this
            # machine is shared, and one busy second should not decide a ratio.
            rounds: dict[str, list[dict]] = {label: [] for label, _, _ in targets}
            for _ in range(args.rounds):
                for label, method, target in targets:
                    figures = asyncio.run(load(target, method, args.clients, args.seconds, token))
                    rounds[label].append(figures)
            return {
                label: sorted(runs, key=lambda r: r["p50_ms"])[len(runs) // 2]
                for label, runs in rounds.items()
            }

        before = phase()
        body = large_document(args.large_mb)
        started = time.perf_counter()
        answer = httpx.post(
            url + "/api/v1/runs",
            content=body,
            headers={**headers, "Content-Type": "application/json"},
            timeout=600,
        )
        ingest_s = time.perf_counter() - started
        if answer.status_code != 201:
            sys.exit(f"the large run was refused: {answer.status_code} {answer.text[:500]}")
        after = phase()
    finally:
        if server is not None:
            stop(server)
        with psycopg.connect(admin, autocommit=True) as db:
            db.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        shutil.rmtree(var_dir, ignore_errors=True)

    load1, _, _ = os.getloadavg()
    print(
        f"{args.clients} concurrent loopback clients, median of {args.rounds} rounds of "
        f"{args.seconds:g} s, load average {load1:.1f} on {os.cpu_count()} CPUs, gunicorn + "
        f"uvicorn, {args.workers} workers, PostgreSQL + Redis; large run "
        f"{len(body) / 2**20:.1f} MiB stored in {ingest_s:.1f} s"
    )
    print(f"{'':22} {'no large run':>28}   {'one large run':>28}   ratio (large / none)")
    print(f"{'':22} {'req/s':>8} {'p50 ms':>9} {'p99 ms':>9}   {'req/s':>8} {'p50 ms':>9} "
          f"{'p99 ms':>9}   {'p50':>6} {'p99':>6}")  # fmt: skip
    for label, _, _ in targets:
        a, b = before[label], after[label]
        failures = a["failures"] + b["failures"]
        failed = f"  ({a['failures']} / {b['failures']} failed)" if failures else ""
        print(
            f"{label:22} {a['rps']:8.1f} {a['p50_ms']:9.1f} {a['p99_ms']:9.1f}   "
            f"{b['rps']:8.1f} {b['p50_ms']:9.1f} {b['p99_ms']:9.1f}   "
            f"{b['p50_ms'] / a['p50_ms']:6.2f} {b['p99_ms'] / a['p99_ms']:6.2f}{failed}"
        )
    floor, listed = after["GET /healthz (floor)"], after["GET /api/v1/runs"]
    print(
        f"GET /api/v1/runs with the large run stored, against the floor: "
        f"{listed['rps'] / floor['rps']:.2f}x the requests/s, "
        f"{listed['p50_ms'] / floor['p50_ms']:.2f}x the p50"
    )


if __name__ == "__main__":
    main()
