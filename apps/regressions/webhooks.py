"""Where a webhook may point, and the one way a delivery reaches it.

A target is parsed by one strict parser (http/https, a host, no userinfo, no backslashes, no
whitespace), its host resolved, and every address it resolves to checked: a name whose DNS answer
is loopback, private, link-local, multicast, reserved or unspecified (an IPv4-mapped IPv6 address
is judged by the IPv4 address inside) is refused, at save and again at delivery, because a DNS
answer can change in between. The delivery then connects to the address that was checked (the
Host header and TLS SNI carry the name), follows no redirect, and ends within one deadline."""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import SplitResult, urlsplit

import httpx
from django.conf import settings

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
# host, port -> the addresses a connection to them could reach; tests inject a fake resolver.
Resolver = Callable[[str, int], list[str]]


class TargetRefused(ValueError):
    """A webhook target that may not be used; the message says why, for the form's field."""


def system_resolve(host: str, port: int) -> list[str]:
    """Every address the system resolver gives for host (A and AAAA)."""
    try:
        answers = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise TargetRefused(f"the host “{host}” does not resolve") from exc
    return [str(info[4][0]) for info in answers]


@dataclass(frozen=True)
class Target:
    url: SplitResult
    host: str
    port: int
    address: str  # the checked address the delivery connects to


def parse(url: str) -> SplitResult:
    """The target's parts, or TargetRefused: the only parser a webhook URL goes through."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise TargetRefused("a webhook needs an http(s) URL")
    if any(c == "\\" or c.isspace() or ord(c) < 32 or ord(c) == 127 for c in url):
        raise TargetRefused("a webhook URL may not hold backslashes, spaces or control characters")
    if "@" in parts.netloc or parts.username is not None or parts.password is not None:
        raise TargetRefused("a webhook URL may not carry a user name or password")
    if not parts.hostname:
        raise TargetRefused("a webhook needs an http(s) URL")
    try:
        parts.port  # noqa: B018 -- raises on a port that is not a number in range
    except ValueError as exc:
        raise TargetRefused("a webhook URL's port is not a number from 0 to 65535") from exc
    return parts


def _private(address: Address) -> bool:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return (
        address.is_loopback
        or address.is_private
        or address.is_link_local
        or address.is_multicast
        or address.is_reserved
        or address.is_unspecified
        or not address.is_global
    )


def check(url: str, resolve: Resolver | None = None) -> Target:
    """The target to connect to, every resolved address checked, or TargetRefused.
    REGRESSION_WEBHOOK_PRIVATE_HOSTS lets an operator allow private addresses on purpose."""
    parts = parse(url)
    host = parts.hostname or ""
    port = parts.port or (443 if parts.scheme == "https" else 80)
    allow_private = settings.REGRESSION_WEBHOOK_PRIVATE_HOSTS
    if not allow_private and (host == "localhost" or host.endswith(".localhost")):
        raise TargetRefused(_PRIVATE)
    try:
        ipaddress.ip_address(host)
        answers = [host]
    except ValueError:
        answers = (resolve or system_resolve)(host, port)
    addresses = []
    for answer in answers:
        try:
            addresses.append(ipaddress.ip_address(answer.split("%", 1)[0]))
        except ValueError as exc:
            raise TargetRefused(f"the host “{host}” does not resolve to an address") from exc
    if not addresses:
        raise TargetRefused(f"the host “{host}” does not resolve")
    if not allow_private and any(_private(a) for a in addresses):
        raise TargetRefused(_PRIVATE)
    return Target(url=parts, host=host, port=port, address=str(addresses[0]))


_PRIVATE = (
    "a webhook may not point at a private or loopback address "
    "(REGRESSION_WEBHOOK_PRIVATE_HOSTS allows it)"
)


def post(url: str, body: bytes, headers: dict[str, str], resolve: Resolver | None = None) -> int:
    """POST body to the checked address of url; the response's status code. The body of the
    answer is never read: a delivery log shows the status only. One deadline
    (REGRESSION_ALERT_TIMEOUT_S) bounds connecting, sending and waiting for the answer."""
    target = check(url, resolve)
    ip = ipaddress.ip_address(target.address)
    netloc = f"[{ip}]" if ip.version == 6 else str(ip)
    pinned = target.url._replace(netloc=f"{netloc}:{target.port}").geturl()
    default_port = 443 if target.url.scheme == "https" else 80
    host_header = target.host if target.port == default_port else f"{target.host}:{target.port}"
    deadline = settings.REGRESSION_ALERT_TIMEOUT_S
    timeout = httpx.Timeout(deadline, pool=deadline)
    with httpx.Client(timeout=timeout, follow_redirects=False, trust_env=False) as client:
        request = client.build_request(
            "POST",
            pinned,
            content=body,
            headers={**headers, "Host": host_header},
            extensions={"sni_hostname": target.host},
        )
        response = client.send(request, stream=True)
        response.close()
        return response.status_code
