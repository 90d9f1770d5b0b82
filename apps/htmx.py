"""One view renders the page or its partial (django-htmx's pattern); this is how every such view
answers, so no cache (the browser's, a CDN's or ours) hands one out for the other."""

from typing import Any

from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse, QueryDict
from django.shortcuts import render
from django.utils.cache import patch_vary_headers


def wants_partial(request: HttpRequest) -> bool:
    """An htmx swap wants the partial; htmx restoring history after a cache miss wants the
    whole page, though it sends HX-Request too."""
    htmx = getattr(request, "htmx", None)
    return htmx is not None and bool(htmx) and not htmx.history_restore_request


def vary_on_htmx(response: HttpResponse) -> HttpResponse:
    # Without it, Back after a swap can show the bare fragment: the browser's cache holds
    # the partial under the page's URL (hx-push-url put it there).
    patch_vary_headers(response, ("HX-Request",))
    return response


def page_or_partial(
    request: HttpRequest, template: str, partial: str, context: dict[str, Any]
) -> HttpResponse:
    name = f"{template}#{partial}" if wants_partial(request) else template
    return vary_on_htmx(render(request, name, context))


def paged(items: Any, query: QueryDict, per_page: int) -> dict[str, Any]:
    """One page of a list page's items (`?page=`), its total, and the query string without
    `page` that the pager's links carry, so a filter survives turning pages."""
    paginator = Paginator(items, per_page)
    page = paginator.get_page(query.get("page"))
    rest = query.copy()
    rest.pop("page", None)
    return {
        "items": page.object_list,
        "page": page,
        "total": paginator.count,
        "query": rest.urlencode(),
    }
