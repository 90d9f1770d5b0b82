"""The bench command's progress bar: one line per load level on stderr."""

from __future__ import annotations

import sys
import time
from typing import Any

from workers.loadgen.metrics import NS_PER_S
from workers.loadgen.runner import LevelProgress


class ProgressBar:
    """One line per level on stderr: bar, requests done, live output tok/s, errors."""

    def __init__(self, stream: Any = sys.stderr, enabled: bool = True) -> None:
        self.stream = stream
        self.enabled = enabled
        self.last_draw = 0.0
        self.label: tuple[str, bool] | None = None

    def __call__(self, state: LevelProgress) -> None:
        if not self.enabled:
            return
        key = (state.label, state.warmup)
        if self.label is not None and key != self.label:
            self.stream.write("\n")
        self.label = key
        finished = state.total is not None and state.done >= state.total
        now = time.monotonic()
        if not finished and now - self.last_draw < 0.1:
            return
        self.last_draw = now
        elapsed = max(1e-9, (time.perf_counter_ns() - state.started_ns) / NS_PER_S)
        if state.total:
            fraction = min(1.0, state.done / state.total)
        elif state.duration_s:
            fraction = min(1.0, elapsed / state.duration_s)
        else:
            fraction = 0.0
        bar = "#" * int(fraction * 24) + "." * (24 - int(fraction * 24))
        total = f"/{state.total}" if state.total else ""
        phase = " warm-up" if state.warmup else ""
        self.stream.write(
            f"\r{state.label:>12}{phase} [{bar}] {state.done}{total} req "
            f"{state.output_tokens / elapsed:9.1f} tok/s  errors {state.errors}  {elapsed:6.1f}s"
        )
        self.stream.flush()

    def close(self) -> None:
        if self.enabled and self.label is not None:
            self.stream.write("\n")
            self.stream.flush()
