"""The MCP server's resources: the methodology (the file /methodology/ renders) and the
scenario presets (as GET /api/v1/scenarios lists them)."""

from __future__ import annotations

import json

from apps.agents.registry import Caller, resource
from apps.catalog.api import ScenarioOut
from apps.catalog.selectors import scenario_list
from apps.leaderboard.methodology import SOURCE


@resource("inferboard://methodology", mime_type="text/markdown")
def methodology(caller: Caller) -> str:
    """How every figure is defined and computed: metrics, SLOs, the answer's rule, prices,
    origins and the board's rules (the methodology page's source)."""
    return SOURCE.read_text(encoding="utf-8")


@resource("inferboard://scenarios/presets", mime_type="application/json")
def scenario_presets(caller: Caller) -> str:
    """The named scenarios every installation has: lengths, prefix cache, concurrency levels
    and SLO bounds (GET /api/v1/scenarios, presets only)."""
    presets = scenario_list(org=caller.org).filter(is_preset=True).order_by("slug")
    return json.dumps([ScenarioOut.from_orm(s).model_dump(mode="json") for s in presets])
