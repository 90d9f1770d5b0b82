"""Bearer-token authentication for the API."""

from django.http import HttpRequest
from ninja.errors import AuthenticationError, HttpError
from ninja.security import HttpBearer

from apps.accounts.models import ApiToken, Organization
from apps.accounts.services import token_authenticate

SAFE_METHODS = {"GET", "HEAD", "OPTIONS"}


class BearerToken(HttpBearer):
    def authenticate(self, request: HttpRequest, token: str) -> ApiToken | None:
        # Stripped as optional_org strips it: "Bearer  tok" means the same everywhere.
        found = token_authenticate(token.strip())
        if found is not None and request.method not in SAFE_METHODS:
            # Every write route uses this class (and the MCP server's writes, apps/agents).
            require_write_scope(found)
        return found


def require_write_scope(token: ApiToken) -> None:
    """The one place token scopes are enforced: a read-only token may not write (403)."""
    if token.scope == ApiToken.Scope.READ:
        raise HttpError(403, "this token is read-only")


def optional_org(request: HttpRequest) -> Organization | None:
    """The caller's organization for read endpoints: None for anonymous callers.

    A token that is present but wrong or revoked is still a 401: silently treating it as
    anonymous would hide private runs from a caller who believes they are signed in.
    """
    token = optional_token(request)
    return token.org if token is not None else None


def optional_token(request: HttpRequest) -> ApiToken | None:
    """The caller's token (None without an Authorization header), read as optional_org reads
    it; the MCP server (apps/agents) reads its callers through this too."""
    header = request.headers.get("Authorization", "")
    if not header:
        return None
    scheme, _, plaintext = header.partition(" ")
    if scheme.lower() != "bearer" or not plaintext.strip():
        raise AuthenticationError(message="Authorization must be 'Bearer <token>'")
    token = token_authenticate(plaintext.strip())
    if token is None:
        raise AuthenticationError(message="unknown or revoked token")
    return token
