"""MLPerf LoadGen's `mlperf_log_summary.txt`, parsed: its "key : value" lines and which of
them we can read as a load run.

Pure and shared: `unread.py` refuses by name the summaries we do not read, and `mlperf.py`
reads the rest, so the two always agree on which is which.
"""

from __future__ import annotations

import re

# LoadGen opens mlperf_log_summary.txt with this banner (a row of '=' then the title).
BANNER = re.compile(r"\A\s*=+\s*\nMLPerf Results Summary\s*\n")
_LINE = re.compile(r"^\s*([^:*\n][^:\n]*?)\s*:\s*(\S[^\n]*?)\s*$", re.MULTILINE)

# The scenarios whose queries arrive on a schedule and are each timed: a rate, per-request
# TTFT and TPOT, and LoadGen's TTFT/TPOT constraints, which is a load run at an SLO.
READ_SCENARIOS = ("Server", "Interactive")
TOKENS = "Completed tokens per second"


def is_summary(text: str) -> bool:
    return bool(BANNER.match(text))


def fields(text: str) -> dict[str, str]:
    """Every "key : value" line, keyed as written. LoadGen repeats some (the token rate is
    printed twice); a repeat with another value keeps both, under 'key#2'."""
    found: dict[str, str] = {}
    for key, value in _LINE.findall(text):
        if key in found and found[key] != value:
            found[f"{key}#2"] = value
        found.setdefault(key, value)
    return found


def why_unread(text: str) -> str | None:
    """Why we do not read this summary as a load run, or None when we do."""
    stated = fields(text)
    scenario = stated.get("Scenario", "")
    which = f", scenario {scenario}" if scenario else ""
    if scenario not in READ_SCENARIOS:
        return (
            f"an MLPerf LoadGen mlperf_log_summary.txt{which}; only the Server and Interactive "
            "scenarios (queries on a schedule, each timed to its first and next tokens) are "
            "read as a load run"
        )
    if TOKENS not in stated:
        return (
            f"an MLPerf LoadGen mlperf_log_summary.txt{which} with no token figures (not a "
            "language model's run)"
        )
    return None
