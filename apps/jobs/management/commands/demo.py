"""`manage.py demo [ADDR:PORT]`: the whole loop on one machine, no GPU needed.

Starts the in-repo streaming server (workers/testing/fault_server.py) as a `simulated`
endpoint, a Celery worker for its pool, queues one run so the Runs page gets a fresh one, and
serves the site. Jobs go through a folder broker of its own (var/broker/demo-<pid>/, removed
when it stops), never a Redis on the host: two demos on one machine do not share a queue,
and none leaves keys behind. Ctrl-C or SIGTERM stops every process it started; its children
also get SIGTERM if the demo itself is killed outright.
"""

import os
import re
import select
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError
from django.db import close_old_connections

from apps.accounts.services import (
    demo_user_ensure,
    organization_get_or_create,
    token_create,
    token_revoke,
)
from apps.catalog.models import Scenario
from apps.jobs.allowlist import endpoint_check
from apps.jobs.models import Endpoint, Job
from apps.jobs.schedules import schedules_tick
from apps.jobs.services import (
    deployment_from_facts,
    endpoint_create,
    job_enqueue,
    jobs_reap_stale,
    pools_first_party_ensure,
)
from workers.testing.processes import dies_with_parent, stop

DEMO_POOL = "pool.demo"
DEMO_BROKER = "filesystem://"
DEMO_NAME = "Demo: simulated streaming server"
DEMO_FACTS: dict[str, Any] = {
    "model": {"name": "demo-model", "family": "simulated"},
    "deployment": {
        "accelerator": "CPU",
        "gpus": 1,
        "engine": {"name": "inferboard-fault-server", "version": "demo"},
        "quantization": {"weights": "none"},
        "parallelism": {"tp": 1},
        "notes": "The in-repo test server: one word is one token. Not a real model.",
    },
}
DEMO_TOKEN_NAME = "demo-worker"
REPO_ROOT = Path(__file__).resolve().parents[4]


# Children get their own process group, so a terminal's Ctrl-C reaches only the demo, which
# then stops each child's whole group in order; and they die with the demo if it is killed.
CHILD: dict = {"start_new_session": True, "preexec_fn": dies_with_parent()}


def _demo_environment(folder: Path) -> dict[str, str]:
    """The environment of the demo and every process it starts: jobs go through a folder
    broker of its own (never a Redis on the host), and a worker beats every 2 s so the page
    shows progress while the short demo run measures."""
    return {
        **os.environ,
        "PYTHONPATH": str(REPO_ROOT),
        "CELERY_BROKER_URL": DEMO_BROKER,
        "INFERBOARD_BROKER_URL": DEMO_BROKER,
        "INFERBOARD_BROKER_FOLDER": str(folder),
        "JOB_HEARTBEAT_INTERVAL_S": "2",
    }


def _exit_on_signal(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)


def _scheduler(every_s: float = 15.0) -> None:
    """What `runscheduler` does, in a thread, so schedules made in the demo fire too."""
    while True:
        time.sleep(every_s)
        try:
            schedules_tick()
            jobs_reap_stale()
        except Exception as exc:  # noqa: BLE001 - keep ticking; the demo must not die of it
            sys.stderr.write(f"demo scheduler: {exc}\n")
        finally:
            close_old_connections()


# The demo's runs are simulated runs of its own model in the single-stream scenario, and a
# demo endpoint states none of the facts the board's rules ask for (image digest, flags): the
# leaderboard shows them only with all three chosen and not-checked runs listed.
DEMO_BOARD = "/?model=demo-model&scenario=single-stream&simulated=1&unchecked=1"


class Command(BaseCommand):
    help = "Run the site with a simulated endpoint and a local worker, and queue a demo run."

    def add_arguments(self, parser) -> None:
        parser.add_argument("addrport", nargs="?", default="127.0.0.1:8000")
        parser.add_argument("--no-initial-run", action="store_true", help="queue nothing")

    def handle(self, *args, addrport: str, no_initial_run: bool, **options) -> None:
        host, _, port = addrport.rpartition(":")
        host = host or "127.0.0.1"
        server_url = f"http://{host}:{port}"
        folder = Path(settings.VAR_DIR) / "broker" / f"demo-{os.getpid()}"
        env = _demo_environment(folder)
        if any(os.environ.get(name) != value for name, value in env.items()):
            # Settings are read from the environment once, when a process starts, and never
            # changed after: the demo starts itself again (the same process, so the same
            # folder) with its own broker and heartbeat in its environment, as its children
            # get them.
            sys.stdout.flush()
            os.execve(sys.executable, [sys.executable, *sys.orig_argv[1:]], env)
        # SIGTERM (from a supervisor) ends like Ctrl-C: SystemExit unwinds to `finally`, which
        # stops the children. Installed before the first child starts, so no signal can come
        # between a child's start and the code that stops it.
        signal.signal(signal.SIGTERM, _exit_on_signal)
        signal.signal(signal.SIGINT, _exit_on_signal)
        self.stdout.write(f"The demo queues jobs in its own folder broker {folder}")
        children: list[subprocess.Popen] = []
        try:
            endpoint_url = self._start_fault_server(children, env)
            endpoint = self._endpoint(endpoint_url)
            token = self._worker_token(endpoint)
            # Endpoints and "Run now" need a member of the organization, DEBUG or not.
            email, password = demo_user_ensure(org=endpoint.org)
            self.stdout.write(
                f"Sign in at {server_url}/accounts/login/ as {email} with password {password}"
            )
            worker_env = {
                **env,
                "INFERBOARD_SERVER_URL": server_url,
                "INFERBOARD_TOKEN": token,
            }
            children.append(
                subprocess.Popen(
                    [
                        sys.executable,
                        "-m",
                        "celery",
                        "-A",
                        "workers.celery",
                        "worker",
                        "-Q",
                        DEMO_POOL,
                        "--pool",
                        "solo",
                        "-n",
                        "demo@%h",
                        "--loglevel",
                        "WARNING",
                        "--without-mingle",
                        "--without-gossip",
                    ],
                    cwd=REPO_ROOT,
                    env=worker_env,
                    **CHILD,
                )
            )
            if not no_initial_run:
                scenario = Scenario.objects.filter(slug="single-stream").first()
                if scenario is not None:
                    job = job_enqueue(
                        endpoint=endpoint,
                        scenario=scenario,
                        options={"concurrency": [1, 4], "requests": 16},
                        requested_by="demo",
                    )
                    # Measured by bench/run_start.py: 31-60 s after the first page on a
                    # 2-core machine (the worker's start, then 2 levels of 16 requests).
                    self.stdout.write(f"Queued demo job {job.pk}; its run lands in about a minute.")
            self.stdout.write(
                f"Demo endpoint {endpoint_url} on {DEMO_POOL}. Press 'Run now' at "
                f"{server_url}/endpoints/ and watch the runs land on "
                f"{server_url}{DEMO_BOARD}"
            )
            threading.Thread(target=_scheduler, name="demo-scheduler", daemon=True).start()
            call_command("runserver", addrport, use_reloader=False)
        finally:
            # A second Ctrl-C or SIGTERM must not cut the clean-up short.
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            for child in reversed(children):
                stop(child, group=True)
            shutil.rmtree(folder, ignore_errors=True)

    def _start_fault_server(self, children: list[subprocess.Popen], env: dict) -> str:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "workers.testing.fault_server",
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--ttft-ms",
                "30",
                "--itl-ms",
                "1",
                "--prefix-block",
                "16",
            ],
            stdout=subprocess.PIPE,
            cwd=REPO_ROOT,
            env=env,
            **CHILD,
        )
        children.append(process)
        assert process.stdout is not None
        ready, _, _ = select.select([process.stdout], [], [], 30)
        line = process.stdout.readline().decode() if ready else ""
        match = re.search(r"http://\S+", line)
        if not match:
            raise CommandError(f"the demo server did not start: {line!r}")
        return match.group(0)

    def _endpoint(self, url: str) -> Endpoint:
        org = organization_get_or_create(slug="demo", name="Demo")
        deployment = deployment_from_facts(**DEMO_FACTS)
        endpoint = Endpoint.objects.filter(org=org, name=DEMO_NAME).first()
        if endpoint is not None:
            # Jobs left from an earlier session point at its server, which is gone.
            endpoint.jobs.filter(status__in=Job.ACTIVE).update(
                status=Job.Status.CANCELLED, error="the demo was restarted"
            )
            # A fresh port every start: point the endpoint at it.
            endpoint.url = endpoint_check(url)
            endpoint.save(update_fields=["url"])
            return endpoint
        pools_first_party_ensure([DEMO_POOL])  # the demo's own worker serves it
        return endpoint_create(
            org=org,
            name=DEMO_NAME,
            url=url,
            deployment=deployment,
            facts=DEMO_FACTS,
            served_model="demo-model",
            pool=DEMO_POOL,
            simulated=True,
        )

    def _worker_token(self, endpoint: Endpoint) -> str:
        for old in endpoint.org.tokens.filter(name=DEMO_TOKEN_NAME, revoked_at__isnull=True):
            token_revoke(token=old)
        return token_create(org=endpoint.org, name=DEMO_TOKEN_NAME).plaintext
