"""An IPv6 webhook target that carries an IPv4 address is judged by the IPv4 address inside,
by each family's rule (issue 53): IPv4-mapped, -compatible and -translated, NAT64 (well-known
and local-use), 6to4, Teredo and ISATAP, literal or resolved from a name. The rule does not
rest on which special ranges the running Python's `ipaddress` happens to list: 3.12.4 added
2002::/16 to them, so on an older Python a 6to4 address of 127.0.0.1 looked global."""

from __future__ import annotations

import ipaddress

import pytest

from apps.regressions import webhooks

INSIDE = ["127.0.0.1", "10.1.2.3", "192.168.0.1", "169.254.169.254", "100.64.0.1", "0.0.0.0"]


def v4(address: str) -> int:
    return int(ipaddress.IPv4Address(address))


def v6(number: int) -> str:
    return str(ipaddress.IPv6Address(number))


# Each family builds its IPv6 address from the IPv4 one by its RFC's layout.
FAMILIES = {
    "IPv4-mapped": lambda a: v6(0xFFFF << 32 | v4(a)),
    "IPv4-compatible": lambda a: v6(v4(a)),
    "IPv4-translated": lambda a: v6(0xFFFF << 48 | v4(a)),
    "NAT64 64:ff9b::/96": lambda a: v6(0x64FF9B << 96 | v4(a)),
    "NAT64 local 64:ff9b:1::/48": lambda a: v6((0x64FF9B << 16 | 1) << 80 | v4(a)),
    "6to4 2002::/16": lambda a: v6(0x2002 << 112 | v4(a) << 80),
    # Teredo: a public server (192.0.2.45 is documentation space, so use 65.54.227.120) and
    # the client's address with every bit flipped, as RFC 4380 obfuscates it.
    "Teredo 2001::/32": lambda a: v6(
        0x20010000 << 96 | v4("65.54.227.120") << 64 | (v4(a) ^ 0xFFFFFFFF)
    ),
    # ISATAP under a global /64: the interface id ::5efe:a.b.c.d.
    "ISATAP": lambda a: v6(0x26064700 << 96 | 0x5EFE << 32 | v4(a)),
}
CASES = [(family, inside) for family in FAMILIES for inside in INSIDE]


def resolving_to(address: str) -> webhooks.Resolver:
    """A fake resolver (no DNS here): every name resolves to address."""
    return lambda host, port: [address]


@pytest.fixture
def no_private_hosts(settings) -> None:
    settings.REGRESSION_WEBHOOK_PRIVATE_HOSTS = False


@pytest.mark.parametrize(("family", "inside"), CASES)
def test_a_literal_ipv6_target_carrying_an_internal_ipv4_is_refused(
    no_private_hosts, family, inside
):
    address = FAMILIES[family](inside)
    with pytest.raises(webhooks.TargetRefused, match="private or loopback"):
        webhooks.check(f"http://[{address}]:8412/hook")


@pytest.mark.parametrize(("family", "inside"), CASES)
def test_a_name_resolving_to_an_ipv6_address_carrying_an_internal_ipv4_is_refused(
    no_private_hosts, family, inside
):
    with pytest.raises(webhooks.TargetRefused, match="private or loopback"):
        webhooks.check("https://hooks.example/x", resolving_to(FAMILIES[family](inside)))


@pytest.mark.parametrize("family", list(FAMILIES))
def test_each_family_gives_back_the_ipv4_address_it_carries(family):
    for inside in INSIDE + ["93.184.215.14"]:
        address = ipaddress.IPv6Address(FAMILIES[family](inside))
        assert ipaddress.IPv4Address(inside) in webhooks.embedded_ipv4(address)


@pytest.fixture
def ipaddress_knowing_no_ipv6_ranges(monkeypatch) -> None:
    """The IPv6 side of `ipaddress` as a Python that lists none of these special ranges sees
    it: every IPv6 address global, none private or reserved (its IPv4 side untouched)."""
    for name, value in (("is_global", True), ("is_private", False), ("is_reserved", False)):
        monkeypatch.setattr(ipaddress.IPv6Address, name, property(lambda self, v=value: v))


@pytest.mark.parametrize("family", list(FAMILIES))
def test_the_rule_holds_whatever_ranges_the_running_python_lists(
    no_private_hosts, ipaddress_knowing_no_ipv6_ranges, family
):
    for inside in ("127.0.0.1", "10.1.2.3", "169.254.169.254"):
        with pytest.raises(webhooks.TargetRefused):
            webhooks.check(f"http://[{FAMILIES[family](inside)}]/hook")


def test_6to4_and_teredo_are_refused_even_carrying_a_public_address(no_private_hosts):
    for family in ("6to4 2002::/16", "Teredo 2001::/32", "NAT64 local 64:ff9b:1::/48"):
        with pytest.raises(webhooks.TargetRefused):
            webhooks.check(f"http://[{FAMILIES[family]('93.184.215.14')}]/hook")


def test_a_global_ipv6_target_is_accepted(no_private_hosts):
    target = webhooks.check("https://hooks.example/x", resolving_to("2606:4700:4700::1111"))
    assert target.address == "2606:4700:4700::1111"
    isatap_public = FAMILIES["ISATAP"]("93.184.215.14")
    assert webhooks.check(f"https://[{isatap_public}]/x").address == isatap_public
