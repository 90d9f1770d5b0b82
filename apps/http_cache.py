"""Cache headers for browsers and CDNs, decided here for every response rather than per view.

Public pages and API reads, asked for anonymously, carry validators derived from the runs
version (apps.runs.services.runs_version: it changes whenever a run lands, is published or
removed), so a CDN or browser can revalidate them for the price of a 304:

- `ETag: W/"..."` over the version, the URL, the htmx headers (page or partial) and the
  release; weak, because equal versions render equal content, not equal bytes;
- `Last-Modified`: when this site first answered with that version;
- `Cache-Control: public, max-age=0 (browsers revalidate each visit), s-maxage,
  stale-while-revalidate`.

Both validators also turn over every HTTP_CACHE_REFRESH_S seconds (a setting): what a page
shows besides runs (prices, the catalog, a new deploy) then reaches revalidating caches as
late as it reaches the page cache (its lifetime is the same ten minutes), never later.

Anything personal is never stored by a cache: a signed-in visitor, an API token, a response
that sets a cookie or carries a CSRF token answers `Cache-Control: private, no-store`.
Other answers (errors, redirects, forms) are `no-cache` unless the view said otherwise.

While Redis is down the version is unknown (apps.cache answers a default), so no validators
are sent: revalidations are answered with the page, never with a stale 304.

Django's own pieces do the HTTP work (django.utils.cache.get_conditional_response evaluates
If-None-Match / If-Modified-Since by RFC 9110, patch_cache_control and patch_vary_headers
write the headers); ConditionalGetMiddleware alone would not do: it hashes the body after
rendering, so a revalidation would still render the page, and it has no idea what is public.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as package_version

from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest, HttpResponseBase
from django.middleware.gzip import GZipMiddleware
from django.urls import Resolver404, resolve
from django.utils.cache import get_conditional_response, patch_cache_control, patch_vary_headers
from django.utils.http import http_date

from apps.runs.services import runs_version, runs_version_pinned

# Pages anyone may see (by view name); what they show depends on the runs and the catalog.
PUBLIC_VIEWS = frozenset(
    {
        "home",
        "run-index",
        "run-detail",
        "deployment-detail",
        "compare",
        "embed-board",
        "embed-compare",
        "methodology",
        "story-glm",
        "accuracy-index",
        "accuracy-compare",
        "costs:procurement",
        "costs:export-csv",
        "costs:export-json",
        "costs:claim",
        "costs:claim-image",
    }
)
# Every API read is public without a token (with one it is the organization's: private).
API_PREFIX = "/api/v1/"

# A browser asks again on every visit (a 304 costs no rendering): someone who has just
# published or approved a run must see it on the next page they open, not a minute later.
MAX_AGE = 0
S_MAXAGE = 60  # a CDN too; after that it revalidates (a 304 while no run has landed)
STALE_WHILE_REVALIDATE = 300  # a CDN may answer from its copy while it revalidates
# Validators turn over at least this often (the page cache's lifetime); a setting for tests.

# A page and its htmx partial share a URL; the ETag tells them apart and caches key on these.
PAGE_VARY = ("Cookie", "HX-Request")
# A cached anonymous answer must never reach a token holder: theirs includes private runs.
API_VARY = ("Authorization", "Cookie")

_SAFE_METHODS = frozenset({"GET", "HEAD"})
_HTMX_HEADERS = ("HX-Request", "HX-History-Restore-Request")


def _release() -> str:
    """settings.INFERBOARD_RELEASE, else the installed package's version."""
    try:
        return settings.INFERBOARD_RELEASE or package_version("inferboard")
    except PackageNotFoundError:
        return "dev"


RELEASE = _release()


@dataclass(frozen=True)
class Validators:
    etag: str
    last_modified: int | None  # None within the second it changed (see _validators)


def _version_seen_at(version: int, now: float) -> float | None:
    """When this site first answered with `version` (shared by every process through Redis).
    Recorded on first sight rather than when the run landed, so runs.services needs no change;
    the first sight is never earlier than the change, which is all Last-Modified needs."""
    key = f"runs:version:{version}:seen"
    seen = cache.get(key)
    if seen is None:
        # A day is enough: once forgotten, the next sight records a later time (a 200, not a
        # stale 304), and keys for old versions do not pile up.
        cache.add(key, now, 24 * 3600)
        seen = cache.get(key)
    return float(seen) if seen is not None else None


def _cache_is_down() -> bool:
    is_down: Callable[[], bool] | None = getattr(cache, "is_down", None)
    return bool(is_down and is_down())


def _validators(request: HttpRequest) -> Validators | None:
    """Read before the view runs: the page it renders is then at least as new as the version
    (the version is bumped after the run's transaction commits)."""
    now = time.time()
    version = runs_version()
    seen = _version_seen_at(version, now)
    if seen is None or _cache_is_down():
        return None
    every = settings.HTTP_CACHE_REFRESH_S
    refreshed = int(now // every) * every
    changed = max(int(seen), refreshed)
    htmx = "|".join(request.headers.get(name, "") for name in _HTMX_HEADERS)
    identity = f"{RELEASE}|{version}|{seen}|{refreshed}|{htmx}|{request.get_full_path()}"
    etag = f'W/"{hashlib.sha256(identity.encode()).hexdigest()[:32]}"'
    # HTTP dates count whole seconds: a Last-Modified handed out in the second the version
    # changed could equal the next version's, and If-Modified-Since would then answer 304 for
    # a changed page. Handed out only from the next second on, it cannot (the ETag still is).
    return Validators(etag=etag, last_modified=changed if changed < int(now) else None)


def _public_candidate(request: HttpRequest) -> bool:
    if request.method not in _SAFE_METHODS or "Authorization" in request.headers:
        return False
    if request.path_info.startswith(API_PREFIX):
        return True
    try:
        return resolve(request.path_info).view_name in PUBLIC_VIEWS
    except Resolver404:
        return False


def _may_skip_the_view(request: HttpRequest) -> bool:
    """A 304 before rendering only for a visitor who cannot be signed in and has nothing
    waiting for them (no session, no pending messages cookie): anyone else goes through
    the view, so a signed-in person is told apart and a message is shown, not swallowed."""
    return set(request.COOKIES) <= {settings.CSRF_COOKIE_NAME}


def _is_personal(request: HttpRequest, response: HttpResponseBase) -> bool:
    if (
        "Authorization" in request.headers
        or response.cookies
        # get_token() was called: the body holds this visitor's CSRF token.
        or request.META.get("CSRF_COOKIE_NEEDS_UPDATE")
    ):
        return True
    # Without a session cookie nobody is signed in; asking would load a session for nothing.
    if settings.SESSION_COOKIE_NAME not in request.COOKIES:
        return False
    user = getattr(request, "user", None)
    return bool(user is not None and user.is_authenticated)


def _vary(request: HttpRequest) -> tuple[str, ...]:
    return API_VARY if request.path_info.startswith(API_PREFIX) else PAGE_VARY


def _make_public(
    request: HttpRequest, response: HttpResponseBase, validators: Validators | None
) -> None:
    del response["Cache-Control"]
    patch_cache_control(
        response,
        public=True,
        max_age=MAX_AGE,
        s_maxage=S_MAXAGE,
        stale_while_revalidate=STALE_WHILE_REVALIDATE,
    )
    patch_vary_headers(response, _vary(request))
    if validators is not None:
        response["ETag"] = validators.etag
        if validators.last_modified is not None:
            response["Last-Modified"] = http_date(validators.last_modified)


def _make_private(response: HttpResponseBase) -> None:
    del response["Cache-Control"]
    patch_cache_control(response, private=True, no_store=True)
    for name in ("ETag", "Last-Modified"):
        del response[name]


def _revalidate(
    request: HttpRequest, validators: Validators | None, response: HttpResponseBase | None
) -> HttpResponseBase | None:
    """Django's evaluation of the conditional headers: a 304 (or 412), or None to answer."""
    if validators is None:
        return None
    return get_conditional_response(
        request,
        etag=validators.etag,
        last_modified=validators.last_modified,
        response=response,
    )


class HttpCacheMiddleware:
    """Sits after WhiteNoise (static files keep their own year-long headers) and before the
    session and CSRF layers, so it sees every cookie they set on the way out."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        if not _public_candidate(request):
            return self._answer(request, public=False)
        with runs_version_pinned():
            return self._answer(request, public=True)

    def _answer(self, request: HttpRequest, *, public: bool) -> HttpResponseBase:
        validators = None
        if public:
            validators = _validators(request)
            if _may_skip_the_view(request):
                early = _revalidate(request, validators, None)
                if early is not None:  # 304, or 412 for a failed If-Match
                    if early.status_code == 304:
                        _make_public(request, early, validators)
                    return early
        response = self.get_response(request)
        if _is_personal(request, response):
            _make_private(response)
        elif public and response.status_code == 200:
            _make_public(request, response, validators)
            answered = _revalidate(request, validators, response)
            if answered is not None:
                return answered
        elif not response.has_header("Cache-Control"):
            patch_cache_control(response, no_cache=True)
        return response


class StaticGzipMiddleware(GZipMiddleware):
    """gzip for static files only, for the run command (settings.STATIC_GZIP): pages are left
    alone, since compressing a page that carries a CSRF token beside what a visitor typed is
    what the BREACH attack reads (Django's GZipMiddleware documentation)."""

    def process_response(self, request: HttpRequest, response: HttpResponseBase):
        if not request.path.startswith("/" + settings.STATIC_URL.lstrip("/")):
            return response
        return super().process_response(request, response)
