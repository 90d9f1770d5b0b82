"""`manage.py demo` as a newcomer runs it: no Redis, SQLite, one command, a run lands."""

import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
from pathlib import Path

import httpx

from tests.waits import wait_for
from workers.testing.processes import free_port, stop

REPO_ROOT = Path(__file__).resolve().parents[3]


def test_the_demo_lands_a_simulated_run_without_redis_and_cleans_up(tmp_path):
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL", "INFERBOARD_BROKER_URL"}
    }
    # Nothing listens on port 1, so the demo falls back to its folder broker.
    env.update(INFERBOARD_VAR_DIR=str(tmp_path), CELERY_BROKER_URL="redis://127.0.0.1:1/0")
    manage = [sys.executable, "manage.py"]
    subprocess.run([*manage, "migrate", "-v0"], cwd=REPO_ROOT, env=env, check=True, timeout=300)
    port = free_port()
    log = tmp_path / "demo.log"
    with log.open("wb") as out:
        demo = subprocess.Popen(
            [*manage, "demo", f"127.0.0.1:{port}"],
            cwd=REPO_ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        site = f"http://127.0.0.1:{port}"

        def simulated_runs() -> list:
            if demo.poll() is not None:
                raise AssertionError(log.read_text(errors="replace")[-3000:])
            with contextlib.suppress(httpx.HTTPError):
                answer = httpx.get(f"{site}/api/v1/runs?provenance=simulated", timeout=5)
                return answer.json()["items"] if answer.status_code == 200 else []
            return []

        runs = wait_for(simulated_runs, 180, "the demo's first run", interval_s=1)
        output = log.read_text(errors="replace")
        assert runs[0]["model"] == "demo-model" and runs[0]["provenance"] == "simulated"
        # The leaderboard link the demo prints shows its run.
        board = re.search(r"watch the runs land on (http://\S+)", output).group(1)
        assert f'href="/runs/{runs[0]["id"]}/"' in httpx.get(board, timeout=10).text
        assert str(tmp_path / "broker") in output
        # Anonymous visitors are sent to sign in; the printed demo person sees the endpoint.
        assert httpx.get(f"{site}/endpoints/", timeout=10).status_code == 302
        email, password = re.search(r"as (\S+@\S+) with password (\S+)", output).groups()
        with httpx.Client(base_url=site, timeout=10) as person:
            person.get("/accounts/login/")
            signed_in = person.post(
                "/accounts/login/",
                data={"login": email, "password": password},
                headers={"X-CSRFToken": person.cookies["csrftoken"], "Referer": site},
            )
            assert signed_in.status_code == 302, signed_in.text[-2000:]

            # The run lands before the worker reports the job succeeded: wait for both.
            def succeeded_page() -> str:
                page = person.get("/endpoints/").text
                return page if 'data-status="succeeded"' in page else ""

            page = wait_for(succeeded_page, 180, "the job reported succeeded", interval_s=1)
        assert "Run now" in page, output[-3000:]
        endpoint = re.search(r"Demo endpoint (http://\S+)", output).group(1)
    finally:
        demo.send_signal(signal.SIGTERM)
        try:
            demo.wait(timeout=30)
        finally:
            stop(demo)
    # The demo stopped what it started: its streaming server no longer answers.
    host, _, endpoint_port = endpoint.removeprefix("http://").partition(":")
    with socket.socket() as sock:
        assert sock.connect_ex((host, int(endpoint_port))) != 0
