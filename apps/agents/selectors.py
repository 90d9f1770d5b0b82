"""Reads for the MCP server: where the figures of a tool's result come from, for its citation."""

from __future__ import annotations

from collections.abc import Iterable

from django.urls import reverse

from apps.accounts.models import Organization
from apps.agents.registry import Caller
from apps.agents.schemas import Citation, FigureSource
from apps.runs.models import MEASURED_AT
from apps.runs.selectors import runs_visible


def citation(
    caller: Caller, *, page: str, api: str, run_ids: Iterable[int | None] = ()
) -> Citation:
    """The page and API call showing a result, and the origin and date of each run's figures
    in it (only runs the caller may see: the ids come from results read as the caller)."""
    figures = figure_sources(org=caller.org, run_ids=[i for i in run_ids if i is not None])
    for figure in figures:
        figure.page = caller.url(figure.page)
    return Citation(
        permalink=caller.url(page),
        api=caller.url(api),
        origins=sorted({figure.origin for figure in figures}),
        as_of=max((figure.measured_at for figure in figures), default=None),
        figures=figures,
    )


def figure_sources(*, org: Organization | None, run_ids: list[int]) -> list[FigureSource]:
    order = {run_id: index for index, run_id in enumerate(dict.fromkeys(run_ids))}
    rows = (
        runs_visible(org=org)
        .filter(pk__in=order)
        .annotate(measured=MEASURED_AT)
        .values(
            "pk", "origin", "provenance", "source_tool", "source_citation", "source_url", "measured"
        )
    )
    found = [
        FigureSource(
            run_id=row["pk"],
            page=reverse("run-detail", args=[row["pk"]]),
            origin=row["origin"],
            provenance=row["provenance"],
            source=row["source_citation"] or row["source_tool"],
            source_url=row["source_url"],
            measured_at=row["measured"],
        )
        for row in rows
    ]
    return sorted(found, key=lambda figure: order[figure.run_id])
