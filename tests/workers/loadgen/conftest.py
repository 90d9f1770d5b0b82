"""Fixtures: the in-repo fault server as a real process on a free port."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack

import pytest

from workers.testing.processes import fault_server


@pytest.fixture
def start_fault_server() -> Iterator[Callable[..., str]]:
    """start_fault_server("--mode", "reset", ...) -> base URL; stopped after the test."""
    with ExitStack() as stack:
        yield lambda *args: stack.enter_context(fault_server(*args))
