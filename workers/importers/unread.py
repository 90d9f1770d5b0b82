"""Files we recognise but do not read (MLPerf LoadGen 5.x summaries), refused by their name.

"cannot tell the format ... give --format" is wrong for these: no --format value reads them.
The refusal says which tool wrote the file, so the user knows it was seen and why it stops.
"""

from __future__ import annotations

import re

# LoadGen opens mlperf_log_summary.txt with this banner (a row of '=' then the title).
_MLPERF_SUMMARY = re.compile(r"\A\s*=+\s*\nMLPerf Results Summary\s*\n")
_SCENARIO = re.compile(r"^Scenario\s*:\s*(.+?)\s*$", re.MULTILINE)


def unread_format(text: str) -> str | None:
    """What the file is, when it is a format we recognise and do not read; else None."""
    if _MLPERF_SUMMARY.match(text):
        scenario = _SCENARIO.search(text)
        which = f", scenario {scenario.group(1)}" if scenario else ""
        return f"an MLPerf LoadGen mlperf_log_summary.txt{which}"
    return None
