"""`scripts/run` and `manage.py demo` stop every process they started.

Each test starts the local site, notes every descendant process by PID (and start time, so
a reused PID is not mistaken for a survivor), stops it the way a person or a supervisor
does, and then looks for survivors.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.waits import wait_for
from workers.testing.processes import REPO_ROOT, free_port, stop

Process = tuple[int, str]  # (pid, start time in clock ticks since boot)


def _stat(pid: int) -> list[str] | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    # Fields after the command name, which is in parentheses and may hold spaces.
    return text[text.rindex(")") + 2 :].split()


def descendants(root: int) -> set[Process]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (fields := _stat(int(entry.name))):
            children.setdefault(int(fields[1]), []).append(int(entry.name))
    found: set[Process] = set()
    pending = list(children.get(root, []))
    while pending:
        pid = pending.pop()
        if fields := _stat(pid):
            found.add((pid, fields[19]))
            pending.extend(children.get(pid, []))
    return found


def running(process: Process) -> bool:
    fields = _stat(process[0])
    return fields is not None and fields[19] == process[1] and fields[0] != "Z"


def command_line(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def local_env(var_dir: Path) -> dict[str, str]:
    """What a newcomer has: no database or broker configured, a var/ folder of its own."""
    drop = {"DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL", "INFERBOARD_BROKER_URL"}
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env["INFERBOARD_VAR_DIR"] = str(var_dir)
    return env


def start_and_wait(command: list[str], env: dict[str, str], log: Path, port: int):
    with log.open("wb") as out:
        process = subprocess.Popen(
            command,
            cwd=REPO_ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            # Its own process group, as a terminal gives a foreground job.
            start_new_session=True,
        )

    def up() -> bool:
        # The demo prints "Demo endpoint" once both children have been started.
        if process.poll() is not None:
            raise AssertionError(f"it exited with code {process.returncode}")
        if "Demo endpoint" not in log.read_text(errors="replace"):
            return False
        with contextlib.suppress(httpx.HTTPError):
            return httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=5).status_code == 200
        return False

    try:
        wait_for(up, 300, "the site and both children", interval_s=0.5)
    except AssertionError as exc:
        stop(process, group=True)
        pytest.fail(f"the site did not start ({exc}):\n{log.read_text(errors='replace')[-3000:]}")
    return process


def assert_nothing_survives(process: subprocess.Popen, started: set[Process], log: Path) -> None:
    try:
        code = process.wait(timeout=120)
    finally:
        stop(process, group=True)
    output = log.read_text(errors="replace")[-3000:]
    survivors = [(pid, command_line(pid)) for pid, ticks in started if running((pid, ticks))]
    for pid, _ in survivors:  # ours: leave nothing running after a failure either
        os.kill(pid, signal.SIGKILL)
    assert survivors == [], output
    assert code is not None


def children_named(started: set[Process]) -> str:
    return " | ".join(command_line(pid) for pid, _ in started)


def test_scripts_run_stopped_with_ctrl_c_leaves_no_process_behind(tmp_path):
    port = free_port()
    log = tmp_path / "run.log"
    process = start_and_wait(
        ["bash", "scripts/run", str(port)], local_env(tmp_path / "var"), log, port
    )
    started = descendants(process.pid)
    names = children_named(started)
    assert "workers.testing.fault_server" in names and "celery" in names, names
    # Ctrl-C in a terminal: SIGINT to every process of the foreground group.
    os.killpg(process.pid, signal.SIGINT)
    assert_nothing_survives(process, started, log)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_the_demo_stopped_by_a_signal_to_its_pid_leaves_no_process_behind(tmp_path, signum):
    var = tmp_path / "var"
    var.mkdir()
    env = local_env(var)
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "-v0"], cwd=REPO_ROOT, env=env, check=True
    )
    port = free_port()
    log = tmp_path / "demo.log"
    command = [sys.executable, "manage.py", "demo", f"127.0.0.1:{port}", "--no-initial-run"]
    process = start_and_wait(command, env, log, port)
    started = descendants(process.pid)
    assert len(started) >= 2, children_named(started)
    # A supervisor signals the demo's PID alone; the demo must take its children with it.
    os.kill(process.pid, signum)
    assert_nothing_survives(process, started, log)
    # Its broker folder went with it: nothing left for another demo to pick up.
    assert list((var / "broker").glob("demo-*")) == []


def test_the_demos_children_die_with_it_when_it_is_killed_outright(tmp_path):
    # SIGKILL runs no clean-up at all: the kernel's parent-death signal must stop them.
    var = tmp_path / "var"
    var.mkdir()
    env = local_env(var)
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "-v0"], cwd=REPO_ROOT, env=env, check=True
    )
    port = free_port()
    log = tmp_path / "demo.log"
    command = [sys.executable, "manage.py", "demo", f"127.0.0.1:{port}", "--no-initial-run"]
    process = start_and_wait(command, env, log, port)
    started = descendants(process.pid)
    assert len(started) >= 2, children_named(started)
    os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=30)
    # Waits for the children to act on the parent-death signal.
    with contextlib.suppress(AssertionError):  # the survivors are named below
        wait_for(lambda: not any(running(c) for c in started), 60, "the children to exit")
    survivors = [(pid, command_line(pid)) for pid, ticks in started if running((pid, ticks))]
    for pid, _ in survivors:
        os.kill(pid, signal.SIGKILL)
    assert survivors == []
