"""Where a webhook may point, and the one way a delivery reaches it.

A target is parsed by one strict parser (http/https, a host, no userinfo, no backslashes, no
whitespace), its host resolved, and every address it resolves to checked: a name whose DNS answer
is loopback, private, link-local, multicast, reserved or unspecified is refused, at save and again
at delivery, because a DNS answer can change in between. An IPv6 address that carries an IPv4
one (mapped, compatible, translated, NAT64, 6to4, Teredo, ISATAP) is judged by the IPv4 address
inside too, and 6to4, Teredo and local-use NAT64 are refused whole (embedded_ipv4, _RELAYED).
The delivery then connects to the address that was checked (the Host header and TLS SNI carry
the name), follows no redirect, and ends within one total deadline."""

from __future__ import annotations

import ipaddress
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import SplitResult, urlsplit

import httpcore
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


# IPv6 ranges whose last 32 bits are an IPv4 address the packet ends up at: IPv4-mapped,
# IPv4-compatible (RFC 4291), IPv4-translated (RFC 2765) and NAT64's well-known and local-use
# prefixes (RFC 6052, RFC 8215). 6to4 (RFC 3056), Teredo (RFC 4380) and ISATAP (RFC 5214)
# carry theirs elsewhere; embedded_ipv4 reads each.
_LAST_32_BITS = tuple(
    ipaddress.IPv6Network(n)
    for n in ("::ffff:0:0/96", "::/96", "::ffff:0:0:0/96", "64:ff9b::/96", "64:ff9b:1::/48")
)
# Relayed or translated inside someone's own network whatever IPv4 address they carry: 6to4
# and Teredo go through relays nobody here chooses (both deprecated), and the local-use NAT64
# prefix translates inside its operator's network, where its IPv4 address may sit at any of
# RFC 6052's positions. Refused whole, whichever Python's own list of them is in use.
_RELAYED = tuple(ipaddress.IPv6Network(n) for n in ("2002::/16", "2001::/32", "64:ff9b:1::/48"))
_ISATAP_IDS = (0x00005EFE, 0x02005EFE)


def embedded_ipv4(address: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    """The IPv4 addresses an IPv6 address carries by its family's rule (none for most)."""
    low32 = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    found = [low32] if any(address in network for network in _LAST_32_BITS) else []
    if address.sixtofour is not None:
        found.append(address.sixtofour)
    if address.teredo is not None:
        found.extend(address.teredo)  # the server's and the (de-obfuscated) client's
    if (int(address) >> 32) & 0xFFFFFFFF in _ISATAP_IDS:
        found.append(low32)
    return found


def _private(address: Address) -> bool:
    """Loopback, private, link-local, multicast, reserved, unspecified or otherwise not
    global; an IPv6 address also when the IPv4 address it carries is, or when it is relayed."""
    if isinstance(address, ipaddress.IPv6Address):
        if any(_private(inside) for inside in embedded_ipv4(address)):
            return True
        if any(address in network for network in _RELAYED):
            return True
        if address.ipv4_mapped is not None:
            return False  # the IPv4 address itself, judged above
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


class _Deadline:
    """One moment every step of a delivery must end by: connecting, TLS, each write and each
    read get what is left of it, so a receiver that trickles a byte at a time cannot stretch
    the whole past it (per-step timeouts alone would restart with every byte)."""

    def __init__(self, seconds: float) -> None:
        self.ends_at = time.monotonic() + seconds

    def left(self, timeout: float | None, late: type[Exception]) -> float:
        remaining = self.ends_at - time.monotonic()
        if remaining <= 0:
            raise late("the delivery's deadline passed")
        return remaining if timeout is None else min(timeout, remaining)


class _DeadlineStream(httpcore.NetworkStream):
    def __init__(self, stream: httpcore.NetworkStream, deadline: _Deadline) -> None:
        self._stream, self._deadline = stream, deadline

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        left = self._deadline.left(timeout, httpcore.ReadTimeout)
        return self._stream.read(max_bytes, left)

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._stream.write(buffer, self._deadline.left(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._stream.close()

    def start_tls(
        self, ssl_context: Any, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore.NetworkStream:
        left = self._deadline.left(timeout, httpcore.ConnectTimeout)
        return _DeadlineStream(
            self._stream.start_tls(ssl_context, server_hostname, left), self._deadline
        )

    def get_extra_info(self, info: str) -> Any:
        return self._stream.get_extra_info(info)


class _DeadlineBackend(httpcore.NetworkBackend):
    def __init__(self, deadline: _Deadline) -> None:
        self._inner, self._deadline = httpcore.SyncBackend(), deadline

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Any = None,
    ) -> httpcore.NetworkStream:
        left = self._deadline.left(timeout, httpcore.ConnectTimeout)
        stream = self._inner.connect_tcp(host, port, left, local_address, socket_options)
        return _DeadlineStream(stream, self._deadline)

    def connect_unix_socket(self, *args: Any, **kwargs: Any) -> httpcore.NetworkStream:
        raise httpcore.ConnectError("a webhook never connects to a local socket")

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


def _resolve_within(resolve: Resolver, deadline: _Deadline) -> Resolver:
    """`resolve`, given what is left of the deadline: a name server that never answers cannot
    hold the delivery past it. The lookup runs in a thread of its own, as a blocking
    getaddrinfo cannot be interrupted; one left behind ends when the system resolver gives up
    (its own timeouts, resolv.conf), and its answer is dropped."""

    def bounded(host: str, port: int) -> list[str]:
        outcome: list[list[str] | BaseException] = []

        def lookup() -> None:
            try:
                outcome.append(resolve(host, port))
            except BaseException as exc:  # noqa: BLE001 -- raised again in the delivery's thread
                outcome.append(exc)

        thread = threading.Thread(target=lookup, name=f"webhook-resolve {host}", daemon=True)
        thread.start()
        thread.join(deadline.left(None, httpcore.ConnectTimeout))
        if not outcome:
            raise httpcore.ConnectTimeout("the name did not resolve before the deadline")
        if isinstance(outcome[0], BaseException):
            raise outcome[0]
        return outcome[0]

    return bounded


def post(url: str, body: bytes, headers: dict[str, str], resolve: Resolver | None = None) -> int:
    """POST body to the checked address of url; the response's status code. The body of the
    answer is never read: a delivery log shows the status only. One total deadline
    (REGRESSION_ALERT_TIMEOUT_S) bounds the whole delivery: resolving the name, connecting,
    TLS, sending and every read of the answer's head. Failures raise httpx's exception of the
    same name (httpx.ReadTimeout ...), as callers catch those; TargetRefused for a target that
    may not be used."""
    deadline = _Deadline(settings.REGRESSION_ALERT_TIMEOUT_S)
    try:
        target = check(url, _resolve_within(resolve or system_resolve, deadline))
        ip = ipaddress.ip_address(target.address)
        netloc = f"[{ip}]" if ip.version == 6 else str(ip)
        pinned = target.url._replace(netloc=f"{netloc}:{target.port}").geturl()
        default_port = 443 if target.url.scheme == "https" else 80
        port = target.port
        host_header = target.host if port == default_port else f"{target.host}:{port}"
        sent = {**headers, "Host": host_header, "Content-Length": str(len(body))}
        step = deadline.left(None, httpcore.ConnectTimeout)
        # httpcore, not httpx: the connection pool takes the deadline's network backend, and
        # follows no redirect and reads no proxy settings from the environment.
        pool = httpcore.ConnectionPool(
            ssl_context=httpx.create_ssl_context(),
            network_backend=_DeadlineBackend(deadline),
            max_connections=1,
        )
        with (
            pool,
            pool.stream(
                "POST",
                pinned,
                headers=list(sent.items()),
                content=body,
                extensions={
                    "sni_hostname": target.host,
                    "timeout": {"connect": step, "read": step, "write": step, "pool": step},
                },
            ) as response,
        ):
            return response.status
    except httpcore.TimeoutException as exc:
        raise getattr(httpx, type(exc).__name__, httpx.TimeoutException)(
            "the delivery's deadline passed"
        ) from None
    except (httpcore.NetworkError, httpcore.ProtocolError, httpcore.UnsupportedProtocol) as exc:
        # The kind only: an exception's text could quote what the receiver sent.
        raise getattr(httpx, type(exc).__name__, httpx.TransportError)(type(exc).__name__) from None
