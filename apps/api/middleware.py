from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse


def body_too_large(size: int | None = None) -> JsonResponse:
    limit = settings.API_MAX_BODY_BYTES
    told = f"{size} bytes" if size is not None else "too large"
    return JsonResponse(
        {"detail": f"request body is {told}; the limit is {limit} bytes (API_MAX_BODY_BYTES)"},
        status=413,
    )


class BodySizeLimitMiddleware:
    """Answer 413 before reading a body whose declared length is over the limit."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        try:
            declared = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            return JsonResponse({"detail": "Content-Length is not a number"}, status=400)
        if declared > settings.API_MAX_BODY_BYTES:
            return body_too_large(declared)
        if "chunked" in request.META.get("HTTP_TRANSFER_ENCODING", "").lower() and not declared:
            # WSGI hands Django no chunked body: it would be read as empty, and an empty
            # document is not what the client sent.
            return JsonResponse(
                {"detail": "send the body with a Content-Length (chunked bodies are not read)"},
                status=411,
            )
        return self.get_response(request)
