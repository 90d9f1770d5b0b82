"""A delivery has one total deadline (REGRESSION_ALERT_TIMEOUT_S), not one per step: a
receiver that trickles its answer a byte at a time, each byte well inside any per-read
timeout, or a name server that never answers, still cannot hold a delivery past it. The
tests assert only that the delivery ended (within a generous wait of their own) and was
logged as a timeout: no speed claim."""

from __future__ import annotations

import itertools
import socket
import threading
from collections.abc import Iterator

import pytest
from django.db import connection

from apps.regressions import webhooks
from apps.regressions.models import Delivery
from apps.regressions.services import alerts_deliver
from tests.apps.regressions.test_webhooks import a_pending_alert, resolving_to

# Committed rows: the delivery runs in a thread of its own, on its own connection.
pytestmark = pytest.mark.django_db(transaction=True)

OUTER_WAIT_S = 120  # how long the test waits for the delivery to end at all


@pytest.fixture
def trickler() -> Iterator[int]:
    """A receiver on loopback that reads the request, then sends a status line and endless
    header lines one byte every 50 ms, until the client hangs up or the test ends."""
    stop = threading.Event()
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.settimeout(0.2)

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(5)
                try:
                    conn.recv(65536)
                    head = itertools.chain(b"HTTP/1.1 200 OK\r\n", itertools.cycle(b"X-A: b\r\n"))
                    for byte in head:
                        if stop.wait(0.05):
                            return
                        conn.sendall(bytes([byte]))
                except OSError:  # the client hung up: this one is done
                    continue

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1]
    finally:
        stop.set()
        thread.join()
        server.close()


def deliver_within_the_outer_wait(holder: str) -> None:
    """Deliver the pending alerts on a thread, and fail if `holder` keeps it past the wait."""

    def deliver() -> None:
        try:
            alerts_deliver()
        finally:
            connection.close()

    delivering = threading.Thread(target=deliver, daemon=True)
    delivering.start()
    delivering.join(OUTER_WAIT_S)
    assert not delivering.is_alive(), f"the delivery is still held by {holder}"


def test_a_receiver_that_trickles_its_answer_is_cut_at_the_total_deadline(
    trickler, settings, monkeypatch
):
    settings.REGRESSION_WEBHOOK_PRIVATE_HOSTS = True
    settings.REGRESSION_ALERT_TIMEOUT_S = 1
    monkeypatch.setattr(webhooks, "system_resolve", resolving_to("127.0.0.1"))
    alert = a_pending_alert(f"http://hooks.example:{trickler}/hook")
    assert alert is not None

    deliver_within_the_outer_wait("the trickling receiver")
    delivery = Delivery.objects.get(alert=alert)
    assert not delivery.ok and delivery.status_code is None
    assert "Timeout" in delivery.error


def test_a_direct_post_to_a_trickler_raises_httpx_timeout(trickler, settings):
    settings.REGRESSION_WEBHOOK_PRIVATE_HOSTS = True
    settings.REGRESSION_ALERT_TIMEOUT_S = 1
    outcome: list[BaseException] = []

    def send() -> None:
        try:
            webhooks.post(f"http://127.0.0.1:{trickler}/x", b"{}", {})
        except BaseException as exc:  # noqa: BLE001 -- handed to the test's thread
            outcome.append(exc)

    sending = threading.Thread(target=send, daemon=True)
    sending.start()
    sending.join(OUTER_WAIT_S)
    assert not sending.is_alive()
    assert len(outcome) == 1 and isinstance(outcome[0], webhooks.httpx.TimeoutException)


@pytest.fixture
def silent_dns() -> Iterator[webhooks.Resolver]:
    """A resolver that answers only when the test ends: a name server that never replies."""
    released = threading.Event()
    asked: list[str] = []

    def resolve(host: str, port: int) -> list[str]:
        asked.append(host)
        released.wait()
        return ["127.0.0.1"]

    try:
        yield resolve
    finally:
        released.set()
    assert asked, "the delivery never asked the resolver"


def test_a_name_server_that_never_answers_cannot_hold_a_delivery_past_its_deadline(
    silent_dns, settings, monkeypatch
):
    settings.REGRESSION_ALERT_TIMEOUT_S = 1
    monkeypatch.setattr(webhooks, "system_resolve", silent_dns)
    alert = a_pending_alert("http://hooks.example/hook")
    assert alert is not None

    deliver_within_the_outer_wait("the silent name server")
    delivery = Delivery.objects.get(alert=alert)
    assert not delivery.ok and delivery.status_code is None
    assert delivery.error == "ConnectTimeout"
    alert.refresh_from_db()
    assert (alert.status, alert.attempts) == ("pending", 1)  # retried later, as any timeout


def test_a_direct_post_through_a_silent_resolver_raises_httpx_timeout(silent_dns, settings):
    settings.REGRESSION_ALERT_TIMEOUT_S = 1
    outcome: list[BaseException] = []

    def send() -> None:
        try:
            webhooks.post("http://hooks.example/x", b"{}", {}, silent_dns)
        except BaseException as exc:  # noqa: BLE001 -- handed to the test's thread
            outcome.append(exc)

    sending = threading.Thread(target=send, daemon=True)
    sending.start()
    sending.join(OUTER_WAIT_S)
    assert not sending.is_alive()
    assert len(outcome) == 1 and isinstance(outcome[0], webhooks.httpx.ConnectTimeout)
