"""Helpers the leaderboard's pages share: query values, table downloads and the embed response."""

import csv
import json
from typing import Any

from django.http import HttpRequest, HttpResponse, QueryDict
from django.shortcuts import render

from apps.costs.formulas import TokenKind, readings_text
from apps.csv_safe import safe_rows
from apps.leaderboard import selectors
from workers import figures

BASES = [kind.value for kind in TokenKind]


def query_without(query: QueryDict, *fields: str) -> str:
    """The query string less some fields (a sort link replaces the sort, keeping filters)."""
    kept = query.copy()
    for field in fields:
        kept.pop(field, None)
    return kept.urlencode()


def board_table(rows: list[selectors.Row]) -> list[dict[str, Any]]:
    return [
        {
            "deployment_id": row.deployment_id,
            "deployment": row.label,
            "level": row.level,
            "provenance": row.provenance,
            "tok_s_per_gpu": row.tput_per_gpu,
            "tok_s_kind": row.tput_kind,
            "tok_s_per_gpu_range": readings_text(row.tput_range),
            "meets_slo": row.meets_slo,
            "interactivity_tok_s_user_p50": row.interactivity,
            **{figures.figure(key).column: ms for key, ms in row.latency_figures.items()},
            "success_rate": row.success_rate,
            "success_stated": not row.success_unstated,
            "accuracy": row.accuracy["score"] if row.accuracy else None,
            "usd_per_gpu_hour": row.usd_per_gpu_hour,
            "token_basis": row.basis,
            f"usd_per_mtok_{row.basis}": row.usd_per_mtok,
            "usd_per_mtok_range": readings_text(row.usd_range),
            "run_id": row.run_id,
            "run_date": row.run_date.isoformat() if row.run_date else None,
            "origin": row.origin,
            "rules_failed": " ".join(f["rule"] for f in row.rules_failed),
            "newer_partial_run": row.partial,
        }
        for row in rows
    ]


def csv_download(filename: str, rows: list[dict[str, Any]]) -> HttpResponse:
    response = HttpResponse(content_type="text/csv")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    if rows:
        writer = csv.DictWriter(response, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(safe_rows(rows))
    return response


def json_download(filename: str, rows: list[dict[str, Any]]) -> HttpResponse:
    response = HttpResponse(json.dumps(rows, indent=2), content_type="application/json")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


def embed_response(
    request: HttpRequest, *, figure: dict, caption: str, source: str
) -> HttpResponse:
    """A chart alone, for an <iframe> on another site: framing is allowed for this view."""
    title = (figure.get("layout", {}).get("title") or {}).get("text", "chart")
    response = render(
        request,
        "embed.html",
        {"figure": figure, "title": title, "caption": caption, "source": source},
    )
    response.xframe_options_exempt = True
    return response
