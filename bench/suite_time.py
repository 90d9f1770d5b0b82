"""Where the test suite's time goes, per file: setup, call and teardown, with the slowest tests
and the slowest setups (a setup's time is where a session or module fixture was built).

    python bench/suite_time.py [--top 15] [-- PYTEST ARGS]     run pytest and report
    python bench/suite_time.py --log FILE [--top 15]            report a saved pytest output

Runs `python -m pytest --durations=0 -vv` (the services from DATABASE_URL and REDIS_URL, as the
README's Tests section says) and reads pytest's durations table; the end of the output,
tests/timing.py's "where the time went" (fixture setups by name, `loadreference` calls), is
printed as it came. The suite's budget is in docs/scaling.md; nothing here is a threshold.
"""

import argparse
import os
import re
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# pytest's durations lines: "12.34s call     tests/e2e/test_x.py::test_y[390]"
DURATION = re.compile(r"^\s*([\d.]+)s (setup|call|teardown)\s+(\S+)")


def read(lines: list[str]) -> list[tuple[float, str, str]]:
    """(seconds, phase, node id) for every line of pytest's durations table."""
    found = []
    for line in lines:
        match = DURATION.match(line)
        if match:
            found.append((float(match[1]), match[2], match[3]))
    return found


def report(durations: list[tuple[float, str, str]], top: int) -> None:
    by_file: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for seconds, phase, node in durations:
        by_file[node.split("::", 1)[0]][phase] += seconds
    total = sum(seconds for seconds, _, _ in durations)
    print(f"\n{total:,.0f} s in {len(by_file)} files (setup + call + teardown)")
    print(f"files, top {top}:      total    setup     call  teardown")
    ranked = sorted(by_file.items(), key=lambda item: -sum(item[1].values()))
    for path, phases in ranked[:top]:
        print(
            f"  {sum(phases.values()):7.1f} s {phases['setup']:7.1f} {phases['call']:8.1f}"
            f" {phases['teardown']:8.1f}  {path}"
        )
    for phase, title in (("call", "tests"), ("setup", "setups (fixtures built for a test)")):
        print(f"slowest {title}, top {top}:")
        slowest = sorted((d for d in durations if d[1] == phase), key=lambda d: -d[0])
        for seconds, _, node in slowest[:top]:
            print(f"  {seconds:7.1f} s  {node}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument("--log", type=Path, help="a saved pytest output (with --durations)")
    parser.add_argument("pytest_args", nargs="*", help="after --: passed on to pytest")
    args = parser.parse_args()
    if args.log:
        report(read(args.log.read_text(errors="replace").splitlines()), args.top)
        return
    if not os.environ.get("DATABASE_URL"):
        sys.exit("set DATABASE_URL and REDIS_URL as the README's Tests section says")
    command = [sys.executable, "-m", "pytest", "--durations=0", "-vv", *args.pytest_args]
    started = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    lines = done.stdout.splitlines()
    # tests/timing.py's section as it came (it ends where pytest's durations table starts),
    # and pytest's last line.
    timing = next((i for i, line in enumerate(lines) if "where the time went" in line), None)
    table = next((i for i, line in enumerate(lines) if "slowest durations" in line), None)
    if timing is not None:
        print("\n".join(lines[timing : table if table and table > timing else None]))
    print(lines[-1] if lines else done.stderr[-2000:])
    report(read(lines), args.top)
    print(f"pytest ran {wall:,.0f} s end to end (exit status {done.returncode})")
    sys.exit(done.returncode)


if __name__ == "__main__":
    main()
