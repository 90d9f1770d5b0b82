"""Where the suite's time goes, printed at the end of every run (issue: the suite's budget).

pytest's --durations lists tests; a budget needs the costs behind them, which are fixtures
(the test database and its migrations, Chromium, the production command, llama-server) and
the shipped reference data. This plugin sums fixture setups by fixture name, `loadreference`
calls, and tests by file, and prints the largest of each. It only reads clocks: nothing here
fails a test, and no figure it prints is a threshold.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterator

import pytest

FIXTURE_SETUP: Counter[str] = Counter()
FIXTURE_COUNT: Counter[str] = Counter()
BY_FILE: Counter[str] = Counter()
REFERENCE = {"calls": 0, "seconds": 0.0}
SHOWN = 12


@pytest.hookimpl(hookwrapper=True)
def pytest_fixture_setup(fixturedef: pytest.FixtureDef) -> Iterator[None]:
    started = time.perf_counter()
    yield
    # A fixture's time includes the fixtures it asks for that were not set up yet; the
    # report says so rather than subtracting (the nesting is what a reader acts on).
    FIXTURE_SETUP[fixturedef.argname] += time.perf_counter() - started
    FIXTURE_COUNT[fixturedef.argname] += 1


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    BY_FILE[report.nodeid.split("::", 1)[0]] += report.duration


def pytest_sessionstart(session: pytest.Session) -> None:
    """Times `loadreference` wherever a test calls it (call_command or the command's class)."""
    from apps.jobs.management.commands.loadreference import Command

    handle = Command.handle

    def timed(self, *args, **options):
        started = time.perf_counter()
        try:
            return handle(self, *args, **options)
        finally:
            REFERENCE["calls"] += 1
            REFERENCE["seconds"] += time.perf_counter() - started

    Command.handle = timed


def pytest_terminal_summary(terminalreporter) -> None:
    total = sum(BY_FILE.values())
    if not total:
        return
    write = terminalreporter.write_line
    terminalreporter.section("where the time went (tests/timing.py)")
    write(f"tests, setup and teardown included: {total:.0f} s in {len(BY_FILE)} files")
    write(
        f"loadreference: {REFERENCE['calls']} calls, {REFERENCE['seconds']:.0f} s "
        f"({REFERENCE['seconds'] / total:.0%} of the tests' time)"
    )
    write(f"fixture setups (each includes the fixtures it set up first), top {SHOWN}:")
    for name, seconds in FIXTURE_SETUP.most_common(SHOWN):
        write(f"  {seconds:7.1f} s  {FIXTURE_COUNT[name]:5d}x  {name}")
    write(f"files, top {SHOWN}:")
    for path, seconds in BY_FILE.most_common(SHOWN):
        write(f"  {seconds:7.1f} s  {seconds / total:4.0%}  {path}")
