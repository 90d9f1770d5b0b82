"""The outbound policy: endpoint URLs must point inside settings.ENDPOINT_ALLOWLIST.

Entries are networks in CIDR form (`10.20.0.0/16`, `::1/128`) or host names (`gpu-01.lab`,
`*.gpu.example.com`). IP literals are matched against networks; names only against names,
never resolved, so a DNS answer cannot move an endpoint inside the policy.
"""

import ipaddress
from collections.abc import Iterable
from urllib.parse import urlsplit

from django.conf import settings


class EndpointRefused(ValueError):
    """The URL is malformed or points outside the allowlist; nothing was sent to it."""


def _network(entry: str) -> ipaddress.IPv4Network | ipaddress.IPv6Network | None:
    try:
        return ipaddress.ip_network(entry, strict=False)
    except ValueError:
        return None


def _name_matches(host: str, entry: str) -> bool:
    entry = entry.lower().rstrip(".")
    if entry.startswith("*."):
        return host.endswith(entry[1:]) and host != entry[2:]
    return host == entry


def endpoint_check(url: str, allowlist: Iterable[str] | None = None) -> str:
    """The URL, normalised, if it may be called; else EndpointRefused saying why."""
    entries = list(settings.ENDPOINT_ALLOWLIST if allowlist is None else allowlist)
    url = url.strip()
    # Refused here, at registration, not when a job first runs: a control character or space
    # would be a second header line, and a fragment or backslash is a host to some parsers.
    if any(ord(c) < 33 or ord(c) == 127 for c in url) or "\\" in url:
        raise EndpointRefused("url must not contain spaces, control characters or backslashes")
    parts = urlsplit(url)
    if "#" in url:
        raise EndpointRefused("url must not have a fragment (#)")
    if parts.scheme not in {"http", "https"}:
        raise EndpointRefused("url must start with http:// or https://")
    if parts.username or parts.password:
        raise EndpointRefused("url must not carry credentials; use the api_key field")
    host = (parts.hostname or "").lower().rstrip(".")
    if not host:
        raise EndpointRefused("url has no host")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        raise EndpointRefused("url has an invalid port") from None
    if port in settings.ENDPOINT_DENIED_PORTS:
        raise EndpointRefused(f"port {port} is in ENDPOINT_DENIED_PORTS (not an inference server)")
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        address = None
    if address is not None:
        allowed = any((net := _network(entry)) is not None and address in net for entry in entries)
    else:
        allowed = any(_network(entry) is None and _name_matches(host, entry) for entry in entries)
    if not allowed:
        # Never the list itself: in production it names the operator's internal networks.
        raise EndpointRefused(
            f"host {host!r} is not allowed (outside ENDPOINT_ALLOWLIST); an administrator "
            "must add it before inferboard will send anything there"
        )
    return url.rstrip("/")
