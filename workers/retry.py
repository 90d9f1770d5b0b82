"""The one backoff schedule every retry loop of the worker follows (submitting results,
reading the server, accuracy requests, the agent's long poll): the first delay, doubling after
each failure, capped. Loops differ in what they retry, not in how long they wait."""

from __future__ import annotations

from collections.abc import Iterator


def backoff_delays(first_s: float, *, cap_s: float | None = 60.0) -> Iterator[float]:
    """first_s, 2·first_s, 4·first_s … seconds, never above cap_s (None: no cap)."""
    delay = first_s
    while True:
        yield delay if cap_s is None else min(delay, cap_s)
        delay *= 2
