"""How long `scripts/run` takes a newcomer: to its first page, and to the demo's first run.

    .venv/bin/python bench/run_start.py [--port 8791] [--var /tmp/ib-run-start] [--warm]

Cold: the var folder is emptied first (no database, no static files), as on a fresh clone
with its .venv already made. Warm: the same folder again, as the second start of the day.
It starts `scripts/run` in its own process group, polls `/` until it answers 200, then the
SQLite database until a simulated run (the demo's queued job) is stored, and stops the whole
group it started. Prints both figures in seconds; the README quotes them.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIMIT_S = 1800  # a start this slow is a failure to report, not to wait out


def _page_answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:  # noqa: S310 (loopback)
            return response.status == 200
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return False


def _demo_runs(database: Path) -> int:
    if not database.exists():
        return 0
    try:
        with sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=1) as db:
            row = db.execute("select count(*) from runs_run where provenance='simulated'")
            return int(row.fetchone()[0])
    except sqlite3.Error:  # not migrated yet, or locked by a write
        return 0


def measure(port: int, var: Path, *, cold: bool) -> tuple[float, float]:
    if cold:
        shutil.rmtree(var, ignore_errors=True)
    var.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "INFERBOARD_VAR_DIR": str(var)}
    env.pop("DATABASE_URL", None)  # scripts/run's own SQLite in var/, as a newcomer gets
    log = (var / "run.log").open("w")
    start = time.monotonic()
    process = subprocess.Popen(
        [str(ROOT / "scripts" / "run"), str(port)],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    first_page = demo_run = None
    database = var / "inferboard.sqlite3"
    before = None
    try:
        while time.monotonic() - start < LIMIT_S:
            if process.poll() is not None:
                raise SystemExit(f"scripts/run stopped ({process.returncode}); see {var}/run.log")
            if first_page is None and _page_answers(f"http://127.0.0.1:{port}/"):
                first_page = time.monotonic() - start
                before = _demo_runs(database)  # a warm start keeps earlier demo runs
            if first_page is not None and _demo_runs(database) > (before or 0):
                demo_run = time.monotonic() - start
                break
            time.sleep(0.5)
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        log.close()
    if first_page is None or demo_run is None:
        raise SystemExit(f"no first page or no demo run within {LIMIT_S} s; see {var}/run.log")
    return first_page, demo_run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8791)
    parser.add_argument("--var", type=Path, default=Path("/tmp/ib-run-start"))
    parser.add_argument("--warm", action="store_true", help="keep the var folder's database")
    args = parser.parse_args()
    first_page, demo_run = measure(args.port, args.var, cold=not args.warm)
    kind = "warm" if args.warm else "cold"
    print(f"{kind}: first page {first_page:.1f} s, first demo run {demo_run:.1f} s")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
