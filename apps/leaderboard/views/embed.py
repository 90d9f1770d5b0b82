"""Charts alone, for an <iframe> on another site: the board's Pareto chart and the compare chart."""

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.views.decorators.csp import csp_override

from apps.leaderboard import selectors
from apps.leaderboard.views.board import board_charts, board_from_query, board_query
from apps.leaderboard.views.common import embed_response, query_without
from apps.leaderboard.views.compare import compare

# Embeds are meant to be framed by other sites: the site-wide CSP forbids framing.
EMBED_CSP = {**settings.SECURE_CSP, "frame-ancestors": ["*"]}


@csp_override(EMBED_CSP)
def embed_board(request: HttpRequest) -> HttpResponse:
    """/embed/board/?<leaderboard filters>&x=interactivity|e2el_s: one Pareto chart."""
    query = board_query(request, None)  # public by nature: public runs only
    board = board_from_query(query)
    page = selectors.leaderboard_rows(board=board)
    figures = board_charts(board, page, query)
    x = "pareto_latency" if request.GET.get("x") == "e2el_s" else "pareto_interactivity"
    source = f"/?{query_without(request.GET, 'x')}"
    caption = f"{board.model or 'no model'} · {page.scenario.name if page.scenario else ''}"
    return embed_response(request, figure=figures[x], caption=caption, source=source)


@csp_override(EMBED_CSP)
def embed_compare(request: HttpRequest) -> HttpResponse:
    """/embed/compare/?d=..&d=..: the compare page's chart, lines named like its columns."""
    return compare(request, embed=True)
