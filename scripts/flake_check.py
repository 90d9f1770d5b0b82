"""Runs the test command N times, each in a fresh clone, and reports every test that ever failed.

CI runs the test command once on a clean clone and never reruns a failure, so a test that fails
one run in ten costs one landing in ten. Run this before a release (or after touching a test
that waits on processes) to find such tests:

    .venv/bin/python scripts/flake_check.py --runs 5 --parallel 2
    .venv/bin/python scripts/flake_check.py --runs 3 --busy 1 -- tests/workers

Each clone gets its own PostgreSQL database and Redis database, so runs can go side by side
(each is then the other's CPU-heavy neighbour); `--busy N` adds N spinning processes on top.
Extra arguments after `--` go to pytest. Exit code: 0 when every run passed, 1 otherwise.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Redis databases the suite itself uses whatever the base URL says (the jobs broker).
RESERVED_REDIS_DBS = {7}


@dataclass
class Outcome:
    number: int
    code: int
    seconds: float
    summary: str
    failed: list[str] = field(default_factory=list)
    log: Path | None = None


def redis_db(number: int) -> int:
    free = [db for db in range(1, 16) if db not in RESERVED_REDIS_DBS]
    return free[number % len(free)]


def failed_tests(junit: Path) -> list[str]:
    if not junit.exists():
        return []
    failed = []
    for case in ET.parse(junit).getroot().iter("testcase"):
        if case.find("failure") is not None or case.find("error") is not None:
            failed.append(f"{case.get('classname')}::{case.get('name')}")
    return failed


def last_summary(log: Path) -> str:
    """Every pytest closing line of the run (the suite's, then the SQLite smoke pass's)."""
    lines = [ln.strip() for ln in log.read_text(errors="replace").splitlines() if ln.strip()]
    closing = [
        ln.strip("= ")
        for ln in lines
        if (" passed" in ln or " failed" in ln) and " in " in ln and "warning" in ln
    ]
    return " | ".join(closing) if closing else (lines[-1] if lines else "(no output)")


def one_run(number: int, *, revision: str, work: Path, pytest_args: list[str]) -> Outcome:
    clone = work / f"clone-{number}"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    subprocess.run(["git", "-C", str(clone), "checkout", "-q", revision], check=True)
    log = work / f"run-{number}.log"
    junit = work / f"run-{number}.xml"
    env = {
        **os.environ,
        "CI": "true",
        "TEST_DATABASE_URL": f"postgres://postgres@127.0.0.1:5432/flake{number}",
        "TEST_REDIS_URL": f"redis://127.0.0.1:6379/{redis_db(number)}",
    }
    started = time.monotonic()
    with log.open("wb") as out:
        code = subprocess.run(
            ["bash", "scripts/test", f"--junitxml={junit}", *pytest_args],
            cwd=clone,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        ).returncode
    seconds = time.monotonic() - started
    return Outcome(number, code, seconds, last_summary(log), failed_tests(junit), log)


def main() -> int:
    parser = argparse.ArgumentParser(
        description="Run the test command in N fresh clones and report which tests failed.",
        epilog="Arguments after -- go to pytest (e.g. -- tests/workers -p no:randomly).",
    )
    parser.add_argument("--runs", type=int, default=5, help="how many clones (default 5)")
    parser.add_argument("--parallel", type=int, default=1, help="clones at once (default 1)")
    parser.add_argument(
        "--busy", type=int, default=0, help="spinning CPU-bound processes alongside (default 0)"
    )
    parser.add_argument("--revision", default="HEAD", help="commit to test (default HEAD)")
    parser.add_argument("--keep", action="store_true", help="keep the clones and logs")
    parser.add_argument(
        "--first",
        type=int,
        default=1,
        help="number of the first clone, which names its database (flakeN) and Redis database:"
        " two checks running at once need ranges that do not overlap (default 1)",
    )
    args, rest = parser.parse_known_args()
    pytest_args = rest[1:] if rest[:1] == ["--"] else rest
    if args.runs < 1 or args.parallel < 1 or args.busy < 0 or args.first < 1:
        parser.error("--runs, --parallel and --first take 1 or more, --busy 0 or more")
    revision = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", args.revision],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    work = Path(tempfile.mkdtemp(prefix="flake-check-"))
    print(f"{args.runs} runs of {revision[:10]} in {work}, {args.parallel} at a time", flush=True)
    spinners = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.busy)
    ]
    outcomes: list[Outcome] = []
    try:
        with ThreadPoolExecutor(args.parallel) as pool:
            futures = [
                pool.submit(one_run, n, revision=revision, work=work, pytest_args=pytest_args)
                for n in range(args.first, args.first + args.runs)
            ]
            for future in futures:
                outcome = future.result()
                outcomes.append(outcome)
                verdict = "passed" if outcome.code == 0 else f"FAILED (exit {outcome.code})"
                print(
                    f"run {outcome.number}: {verdict} in {outcome.seconds:.0f} s: "
                    f"{outcome.summary}  [{outcome.log}]",
                    flush=True,
                )
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()
    ever_failed: dict[str, int] = {}
    for outcome in outcomes:
        for test in outcome.failed:
            ever_failed[test] = ever_failed.get(test, 0) + 1
    passed = sum(outcome.code == 0 for outcome in outcomes)
    print(f"\n{passed} of {len(outcomes)} runs passed")
    for test, times in sorted(ever_failed.items(), key=lambda item: -item[1]):
        print(f"  failed {times} of {len(outcomes)}: {test}")
    if not args.keep and passed == len(outcomes):
        subprocess.run(["rm", "-rf", str(work)], check=False)
    return 0 if passed == len(outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
