"""Locate, build and run llama.cpp's llama-server for tests against a real server.

The binary is built by `scripts/build-llama-server.sh` into
${XDG_CACHE_HOME:-~/.cache}/inferboard/llama-server-<version>/llama-server.
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from workers.testing.processes import REPO_ROOT, free_port, stop, wait_until_healthy

BUILD_SCRIPT = REPO_ROOT / "scripts" / "build-llama-server.sh"


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "inferboard"


def _version_key(path: Path) -> list[int]:
    return [int(part) for part in re.findall(r"\d+", path.parent.name)]


def locate() -> Path | None:
    """$INFERBOARD_LLAMA_SERVER, else the background build's binary once it is done, else the
    newest cached build, else None."""
    explicit = os.environ.get("INFERBOARD_LLAMA_SERVER")
    if explicit:
        return Path(explicit) if os.access(explicit, os.X_OK) else None
    pending = os.environ.get("INFERBOARD_LLAMA_SERVER_BUILD")
    if pending:
        return _await_build(Path(pending))
    builds = [p for p in cache_root().glob("llama-server-*/llama-server") if os.access(p, os.X_OK)]
    return max(builds, key=_version_key) if builds else None


def _await_build(folder: Path, poll_s: float = 1.0) -> Path | None:
    """Wait for the build `scripts/test` started in the background (it writes `rc`, the
    binary's path on `stdout` and its log on `stderr` into `folder`).

    On a fresh machine compiling llama.cpp is the longest single step; running it beside the
    tests that do not need it (they are ordered first) keeps it off the suite's critical path.
    """
    rc_file = folder / "rc"
    if not rc_file.exists():
        print(f"waiting for the background llama-server build (log: {folder / 'stderr'})")
        while not rc_file.exists():
            time.sleep(poll_s)
    log = (folder / "stderr").read_text(errors="replace")
    if rc_file.read_text().strip() != "0":
        raise RuntimeError(f"the background llama-server build failed:\n{log[-3000:]}")
    binary = Path((folder / "stdout").read_text().strip().splitlines()[-1])
    return binary if os.access(binary, os.X_OK) else None


def build() -> Path:
    """Run the build script (instant when cached) and return the binary's path."""
    done = subprocess.run(
        ["bash", str(BUILD_SCRIPT)], check=True, capture_output=True, text=True, cwd=REPO_ROOT
    )
    return Path(done.stdout.strip().splitlines()[-1])


def require() -> Path:
    """The binary, or a loud error saying how to build it (tests must not skip)."""
    binary = locate()
    if binary is None:
        raise RuntimeError(
            "llama-server is not built: run scripts/build-llama-server.sh "
            "(or set INFERBOARD_LLAMA_SERVER to a llama-server binary)"
        )
    return binary


@contextlib.contextmanager
def llama_server(
    model: Path,
    *,
    slots: int = 2,
    context: int = 8192,
    extra: tuple[str, ...] = (),
    binary: Path | None = None,
) -> Iterator[str]:
    """Run llama-server on a free loopback port; yield its base URL. `context` is shared
    by all slots."""
    binary = binary or require()
    port = free_port()
    command = [
        str(binary),
        "-m", str(model),
        "--host", "127.0.0.1",
        "--port", str(port),
        "-np", str(slots),
        "-c", str(context),
        "-t", "1",
        "--no-webui",
        *extra,
    ]  # fmt: skip
    with tempfile.TemporaryFile() as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        url = f"http://127.0.0.1:{port}"
        try:
            try:
                wait_until_healthy(url, process, timeout_s=120)
            except RuntimeError as exc:
                log.seek(0)
                tail = log.read()[-3000:].decode(errors="replace")
                raise RuntimeError(f"{exc}\n--- llama-server log ---\n{tail}") from None
            yield url
        finally:
            stop(process)
