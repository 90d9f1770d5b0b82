"""`inferboard-worker agent`: run an organization's jobs on its own host, without the broker.

The host holds only its organization's API token. It long-polls the server over HTTP(S)
for the next job of its pool (`POST /api/v1/agent/claim`), as CI runners do, and runs it
with the same code a Celery worker uses (`workers.tasks.execute`): report `started`,
heartbeat, submit the result document, report the outcome. The server offers a pool's jobs
only to tokens of the organization that owns the pool, so this host can neither see nor
take anyone else's jobs. No Django here.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import socket
import sys
import time

import httpx
from pydantic import ValidationError

from workers.retry import backoff_delays
from workers.submit import ServerClient
from workers.tasks import TOKEN_ENV, JobSpec, execute

log = logging.getLogger(__name__)
# After a network error: wait, doubling up to this, so a restarting server is not hammered.
MAX_BACKOFF_S = 60.0


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "agent",
        help="long-poll the server for your organization's jobs and run them",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--server", required=True, help="e.g. https://inferboard.example.com")
    parser.add_argument(
        "--token", default=os.environ.get(TOKEN_ENV, ""), help=f"API token (or ${TOKEN_ENV})"
    )
    parser.add_argument("--pool", required=True, help="your organization's pool, e.g. pool.acme")
    parser.add_argument("--wait", type=float, default=25.0, help="seconds per long poll")
    parser.add_argument("--once", action="store_true", help="exit after one job")
    parser.add_argument("--name", default="", help="worker name shown on jobs")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if not args.token:
        print(f"agent: give --token or set {TOKEN_ENV}", file=sys.stderr)
        return 2
    server = args.server.rstrip("/")
    worker = args.name or f"agent:{socket.gethostname()}:{os.getpid()}"
    client = ServerClient(server, args.token)
    headers = {"Authorization": f"Bearer {args.token}"}
    delays = backoff_delays(1.0, cap_s=MAX_BACKOFF_S)
    print(f"agent {worker}: polling {server} for jobs on {args.pool}", flush=True)
    while True:
        try:
            response = httpx.post(
                f"{server}/api/v1/agent/claim",
                params={"pool": args.pool, "wait": args.wait, "worker": worker},
                headers=headers,
                timeout=args.wait + 30,
            )
        except httpx.HTTPError as exc:
            delay = next(delays)
            log.warning("agent: server unreachable (%s); retrying in %.0f s", exc, delay)
            time.sleep(delay)
            continue
        delays = backoff_delays(1.0, cap_s=MAX_BACKOFF_S)  # reachable again: start over
        if response.status_code == 204:
            continue
        if response.status_code in (401, 403, 404):
            print(f"agent: refused ({response.status_code}): {response.text}", file=sys.stderr)
            return 2
        if response.status_code != 200:
            log.warning("agent: server answered %s; retrying", response.status_code)
            time.sleep(1)
            continue
        body = response.json()
        try:
            spec = JobSpec.model_validate(body["spec"])
        except (KeyError, ValidationError) as exc:
            # Report nothing that would echo the spec (an older server put the key in it).
            print(f"agent: unreadable job {body.get('job_id')}: {type(exc).__name__}")
            if args.once:
                return 1
            continue
        outcome = execute(spec, worker=worker, client=client)
        print(json.dumps(outcome), flush=True)
        if args.once:
            return 0
