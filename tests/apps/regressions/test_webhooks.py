"""A webhook reaches only public addresses: names are resolved (a fake resolver stands in for
DNS) at save and at delivery, the URL is parsed strictly, the delivery log keeps the status and
never the answer's body, and a receiver that never answers cannot hold a delivery past its
deadline."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from apps.accounts.services import organization_get_or_create
from apps.regressions import webhooks
from apps.regressions.models import Alert, Delivery, Subscription
from apps.regressions.services import alerts_deliver, regressions_detect
from tests.apps.regressions.series import stored_series

pytestmark = pytest.mark.django_db

FORM = {"channel": "webhook", "regressions": "on", "persist_needed": 2, "persist_window": 3}


def resolving_to(address: str) -> webhooks.Resolver:
    """A fake resolver (no DNS here): every name resolves to address."""
    return lambda host, port: [address]


@pytest.mark.parametrize("address", ["127.0.0.1", "10.1.2.3", "169.254.169.254", "::1",
                                     "::ffff:127.0.0.1", "224.0.0.1", "0.0.0.0", "fe80::1",
                                     "240.0.0.1", "100.64.0.1"])  # fmt: skip
def test_it_refuses_a_host_name_that_resolves_to_an_internal_address(address):
    with pytest.raises(webhooks.TargetRefused, match="private or loopback"):
        webhooks.check("https://hooks.example/x", resolving_to(address))


def test_it_refuses_a_name_when_any_of_its_addresses_is_internal():
    mixed = lambda host, port: ["93.184.215.14", "127.0.0.1"]  # noqa: E731
    with pytest.raises(webhooks.TargetRefused):
        webhooks.check("https://hooks.example/x", mixed)


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8412\\@example.com/",
        "http://user:pw@internal.example/",
        "http://user@hooks.example/",
        "https://hooks.example\\x/",
        "ftp://hooks.example/",
        "https:///x",
        "https://hooks.example:99999/",
    ],
)
def test_it_refuses_userinfo_backslashes_and_non_http_urls(url):
    with pytest.raises(webhooks.TargetRefused):
        webhooks.check(url, resolving_to("93.184.215.14"))


def test_it_accepts_a_name_that_resolves_to_a_public_address():
    target = webhooks.check("https://hooks.example/x", resolving_to("93.184.215.14"))
    assert target.address == "93.184.215.14" and target.host == "hooks.example"


def test_the_subscription_form_refuses_a_name_resolving_to_loopback(
    client, person, org, monkeypatch
):
    monkeypatch.setattr(webhooks, "system_resolve", resolving_to("127.0.0.1"))
    client.force_login(person(org, role="admin"))
    refused = client.post(
        "/regressions/subscriptions/", {**FORM, "target": "http://localtest.me:8412/x"}
    )
    assert refused.status_code == 400
    assert "private or loopback address" in refused.content.decode()
    for target in ("http://127.0.0.1:8412\\@example.com/", "http://user:pw@internal.example/"):
        refused = client.post("/regressions/subscriptions/", {**FORM, "target": target})
        assert refused.status_code == 400
        assert "webhook URL may not" in refused.content.decode()
    assert not Subscription.objects.exists()


class Answering(BaseHTTPRequestHandler):
    """A receiver inside the network that answers 500 with a secret in its body."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        body = b"redis_password=hunter2"
        self.send_response(500)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def internal_service() -> Iterator[int]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Answering)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def a_pending_alert(target: str) -> Alert:
    acme = organization_get_or_create(slug="acme")
    # Stored past the form, as a subscription saved while the name still resolved elsewhere.
    Subscription.objects.create(org=acme, channel="webhook", target=target, secret="s")
    stored_series([8000] * 6)
    stored_series([6000] * 3, first_day=6, engine_version="0.5.24")
    regressions_detect()
    return Alert.objects.filter(subscription__org=acme).first()


def test_a_delivery_to_a_name_now_resolving_to_loopback_is_refused(internal_service, monkeypatch):
    monkeypatch.setattr(webhooks, "system_resolve", resolving_to("127.0.0.1"))
    alert = a_pending_alert(f"http://rebinding.example:{internal_service}/hook")
    assert alert is not None
    alerts_deliver()
    delivery = Delivery.objects.get(alert=alert)
    assert not delivery.ok and delivery.status_code is None
    assert "private or loopback" in delivery.error


def test_a_delivery_log_keeps_the_status_and_never_the_body(
    internal_service, monkeypatch, settings, client, person
):
    settings.REGRESSION_WEBHOOK_PRIVATE_HOSTS = True
    monkeypatch.setattr(webhooks, "system_resolve", resolving_to("127.0.0.1"))
    alert = a_pending_alert(f"http://hooks.example:{internal_service}/hook")
    alerts_deliver()
    delivery = Delivery.objects.get(alert=alert)
    assert (delivery.ok, delivery.status_code) == (False, 500)
    assert "hunter2" not in delivery.error
    client.force_login(person(alert.subscription.org, role="admin"))
    page = client.get("/regressions/subscriptions/").content.decode()
    assert "(500)" in page and "hunter2" not in page


def test_the_delivery_connects_to_the_checked_address_with_the_name_as_host(
    internal_service, settings
):
    settings.REGRESSION_WEBHOOK_PRIVATE_HOSTS = True
    seen: list[str] = []

    class Recording(Answering):
        def do_POST(self) -> None:
            seen.append(self.headers["Host"])
            super().do_POST()

    server = ThreadingHTTPServer(("127.0.0.1", 0), Recording)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        port = server.server_address[1]
        status = webhooks.post(
            f"http://hooks.example:{port}/x", b"{}", {}, resolving_to("127.0.0.1")
        )
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
    assert status == 500 and seen == [f"hooks.example:{port}"]


def test_a_delivery_to_a_tarpit_ends_at_its_deadline(settings):
    settings.REGRESSION_WEBHOOK_PRIVATE_HOSTS = True
    settings.REGRESSION_ALERT_TIMEOUT_S = 0.5
    tarpit = socket.socket()
    tarpit.bind(("127.0.0.1", 0))
    tarpit.listen()  # accepts (the kernel completes the handshake) and never answers
    try:
        port = tarpit.getsockname()[1]
        with pytest.raises(webhooks.httpx.TimeoutException):
            webhooks.post(f"http://127.0.0.1:{port}/x", b"{}", {})
    finally:
        tarpit.close()


def test_email_alerts_go_only_to_verified_addresses_of_members(client, person, org):
    admin = person(org, role="admin", email="admin@acme.example")
    client.force_login(admin)
    form = {"channel": "email", "regressions": "on", "persist_needed": 2, "persist_window": 3}
    refused = client.post(
        "/regressions/subscriptions/", {**form, "target": "admin@acme.example, x@outside.example"}
    )
    assert refused.status_code == 400
    assert "x@outside.example” is not a verified address" in refused.content.decode()
    assert not Subscription.objects.exists()
    ok = client.post("/regressions/subscriptions/", {**form, "target": "Admin@acme.example"})
    assert ok.status_code == 200
    assert Subscription.objects.get(org=org).target == "Admin@acme.example"
