"""The one way a test waits: on an event it can observe, with a deadline that only bounds a
failure. A passing test returns as soon as the event happens, however fast or slow the machine;
a test that sleeps for "long enough" instead passes or fails with the machine's load."""

from __future__ import annotations

import time
from collections.abc import Callable


def wait_for[T](
    check: Callable[[], T], timeout_s: float, what: str, *, interval_s: float = 0.2
) -> T:
    """Returns the first truthy value of `check()`; fails naming `what` after `timeout_s`.

    `check` may raise to end the wait early (a process that exited will never get there)."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"gave up waiting for {what} after {timeout_s:g} s")
        time.sleep(interval_s)
