"""Bytes and cold DOMContentLoaded of every public page, in Chromium.

    python bench/page_weight.py [--root CHECKOUT] [--repeat 3]

Serves CHECKOUT (default: this one; point it at an export of main to measure "before") with
DEBUG off the way deploy/ does (collectstatic, then the app serves static files), or with
--as-run-command the way scripts/run does (DEBUG on, static files gzipped as served), on a
throwaway PostgreSQL database (DATABASE_URL, default
postgres://postgres@127.0.0.1:5432/inferboard_bench_weight; created and dropped by the run)
seeded with a few runs through tests/factories.py. Each page is loaded in a fresh browser
context (empty cache) and reports, over everything it loaded:

- bytes: decoded body bytes (what the browser had to parse),
- transferred: bytes on the wire, headers included (compression shows here),
- DOMContentLoaded (median of --repeat cold loads) and its ratio to /methodology/, a page
  without charts measured in the same run.
"""

import argparse
import base64
import os
import secrets
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DB = "postgres://postgres@127.0.0.1:5432/inferboard_bench_weight"
BASELINE = "/methodology/"

SEED = """
import json
from django.core.management import call_command
from apps.accounts.services import organization_get_or_create
from apps.runs.services import run_ingest
from tests.factories import document, point
from workers import figures

# The factory takes the answer's TTFT p99 by its column's name (workers/figures.py).
ttft_tail = figures.figure(figures.ANSWER_LATENCY).column

call_command("loadreference", verbosity=0)
org = organization_get_or_create(slug="bench")
gsm = {"protocol": "gsm8k-5shot-v1", "task": "gsm8k", "metric": "exact_match_numeric"}
runs = []
for accelerator, quantization, engine, tput in [
    ("MI355X", "MXFP4", "sglang", 1.0), ("MI355X", "FP8", "vllm", 0.8),
    ("B200", "NVFP4", "sglang", 1.2), ("H200", "FP8", "vllm", 0.6),
]:
    points = [
        point(
            c, output_tok_s=tput * 70 * c, interactivity=160 / c ** 0.5, **{ttft_tail: 300 + 60 * c}
        )
        for c in (1, 4, 16, 64)
    ]
    doc = document(
        accelerator=accelerator, quantization=quantization, engine=engine, points=points,
        accuracy=[{**gsm, "n": 1319, "score": 0.95}],
    )
    runs.append(run_ingest(document=doc, org=org).run)
print(json.dumps({"run": runs[0].pk, "deployments": [r.deployment_id for r in runs]}))
"""


def pages(seed: dict) -> list[str]:
    first, second = seed["deployments"][:2]
    return [
        "/",
        "/runs/",
        f"/runs/{seed['run']}/",
        f"/deployments/{first}/",
        f"/compare/?d={first}&d={second}",
        "/costs/",
        "/costs/claim/",
        "/accuracy/",
        "/story/glm-5-2/",
        "/methodology/",
        "/api/v1/docs",
    ]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def recreate_database(url: str) -> None:
    import psycopg

    parts = urlsplit(url)
    name = parts.path.lstrip("/")
    admin = parts._replace(path="/postgres").geturl()
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')


def drop_database(url: str) -> None:
    import psycopg

    parts = urlsplit(url)
    with psycopg.connect(parts._replace(path="/postgres").geturl(), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{parts.path.lstrip("/")}" WITH (FORCE)')


def measure(browser, url: str) -> dict:
    """One cold load: every response's decoded and on-the-wire bytes, and DOMContentLoaded."""
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    page = context.new_page()
    cdp = context.new_cdp_session(page)
    cdp.send("Network.enable")
    cdp.send("Network.setCacheDisabled", {"cacheDisabled": True})
    decoded: dict[str, int] = {}
    wire: dict[str, int] = {}

    def received(event: dict) -> None:
        decoded[event["requestId"]] = decoded.get(event["requestId"], 0) + event["dataLength"]

    def finished(event: dict) -> None:
        wire[event["requestId"]] = int(event["encodedDataLength"])

    failed: list[str] = []
    page.on("response", lambda r: failed.append(f"{r.status} {r.url}") if r.status >= 400 else None)
    cdp.on("Network.dataReceived", received)
    cdp.on("Network.loadingFinished", finished)
    page.goto(url, wait_until="load")
    dcl = page.evaluate("performance.getEntriesByType('navigation')[0].domContentLoadedEventEnd")
    # Let the last loadingFinished events arrive (they follow the load event).
    page.wait_for_timeout(200)
    context.close()
    if failed and not url.endswith("/no-such-page/"):
        raise SystemExit(f"{url}: failed requests would understate its weight: {failed}")
    return {"bytes": sum(decoded.values()), "wire": sum(wire.values()), "dcl_ms": dcl}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=ROOT, help="checkout to serve")
    parser.add_argument("--repeat", type=int, default=3, help="cold loads per page")
    parser.add_argument(
        "--as-run-command",
        action="store_true",
        help="serve as scripts/run does (DEBUG on, no collectstatic, STATIC_GZIP=1)",
    )
    args = parser.parse_args()
    root = args.root.resolve()
    database = os.environ.get("DATABASE_URL", DEFAULT_DB)
    var = Path(tempfile.mkdtemp(prefix="page-weight-"))
    env = {
        **os.environ,
        "DATABASE_URL": database,
        "DEBUG": "0",
        "SECRET_KEY": secrets.token_urlsafe(50),  # DEBUG off refuses a weak key
        "ENDPOINT_CREDENTIALS_KEY": base64.urlsafe_b64encode(secrets.token_bytes(32)).decode(),
        "ENDPOINT_ALLOWLIST": "127.0.0.0/8",
        "SECURE_SSL_REDIRECT": "0",
        "INFERBOARD_VAR_DIR": str(var),
        "DJANGO_SETTINGS_MODULE": "apps.settings",
        "PYTHONPATH": str(root),
    }
    if args.as_run_command:
        env.update({"DEBUG": "1", "STATIC_GZIP": "1"})
    env.pop("REDIS_URL", None)  # a local-memory page cache: every process starts cold
    python = sys.executable

    def manage(*cmd: str, **kw) -> subprocess.CompletedProcess:
        return subprocess.run(
            [python, "manage.py", *cmd], cwd=root, env=env, check=True, text=True, **kw
        )

    recreate_database(database)
    server = None
    try:
        manage("migrate", "-v0")
        if not args.as_run_command:
            manage("collectstatic", "--noinput", "-v0")
        seeded = subprocess.run(
            [python, "-c", "import django; django.setup()\n" + SEED],
            cwd=root,
            env=env,
            check=True,
            text=True,
            capture_output=True,
        )
        seed = __import__("json").loads(seeded.stdout.strip().splitlines()[-1])
        port = free_port()
        # A checkout with WhiteNoise serves its collected files itself; one without needs
        # runserver's static handler (--insecure, as DEBUG is off).
        settings_text = (root / "apps" / "settings.py").read_text()
        static = "--nostatic" if "WhiteNoiseMiddleware" in settings_text else "--insecure"
        if args.as_run_command:
            static = "--nostatic" if "STATIC_GZIP" in settings_text else "--insecure"
        server = subprocess.Popen(
            [python, "manage.py", "runserver", static, "--noreload", f"127.0.0.1:{port}"],
            cwd=root,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        base = f"http://127.0.0.1:{port}"
        for _ in range(200):
            try:
                urllib.request.urlopen(f"{base}/healthz", timeout=1)
                break
            except OSError:
                time.sleep(0.1)
        from playwright.sync_api import sync_playwright

        executable = os.environ.get("CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
        results: dict[str, dict] = {}
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=executable, args=["--no-sandbox", "--disable-gpu"]
            )
            for path in pages(seed):
                measure(browser, base + path)  # warms the server's page cache and templates
                loads = [measure(browser, base + path) for _ in range(args.repeat)]
                results[path] = {
                    "bytes": loads[0]["bytes"],
                    "wire": loads[0]["wire"],
                    "dcl_ms": statistics.median(load["dcl_ms"] for load in loads),
                }
            browser.close()
    finally:
        if server:
            server.terminate()
            server.wait()
        drop_database(database)
        shutil.rmtree(var, ignore_errors=True)

    base_dcl = results[BASELINE]["dcl_ms"] or 1
    served = "as scripts/run serves it" if args.as_run_command else "as deploy/ serves it"
    print(f"checkout: {root} ({served})")
    print(f"{'page':<34}{'bytes':>12}{'transferred':>14}{'DCL ms':>9}{'DCL ratio':>11}")
    for path, r in results.items():
        print(
            f"{path:<34}{r['bytes']:>12,}{r['wire']:>14,}{r['dcl_ms']:>9.0f}"
            f"{r['dcl_ms'] / base_dcl:>10.2f}x"
        )
    print(f"DCL ratio: against {BASELINE} (no charts) in the same run; cold cache every load.")
    print(
        f"largest page: {max(r['bytes'] for r in results.values()):,} bytes decoded, "
        f"{max(r['wire'] for r in results.values()):,} transferred"
    )


if __name__ == "__main__":
    main()
