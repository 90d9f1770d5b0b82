"""Alerts reach subscribers: a real webhook receiver on loopback (signature checked, a 500
retried after its backoff), an email in the outbox, and nothing for the unsubscribed."""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import threading
from collections.abc import Iterator
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.core import mail
from django.utils import timezone

from apps.accounts.services import organization_get_or_create
from apps.regressions.models import Alert, ChangePoint, Delivery, Subscription
from apps.regressions.services import alerts_deliver, change_point_acknowledge, regressions_detect
from tests.apps.regressions.series import stored_series

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def loopback_receivers_allowed(settings) -> None:
    # These receivers run on loopback, which only an operator's setting lets a webhook reach.
    settings.REGRESSION_WEBHOOK_PRIVATE_HOSTS = True


class Receiver:
    """An HTTP server on loopback that answers with the statuses it is given, in turn (then
    200), and keeps what it received."""

    def __init__(self, statuses: list[int]) -> None:
        self.statuses = list(statuses)
        self.received: list[tuple[dict[str, str], bytes]] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (the stdlib's name)
                body = self.rfile.read(int(self.headers["Content-Length"]))
                receiver.received.append((dict(self.headers), body))
                status = receiver.statuses.pop(0) if receiver.statuses else 200
                self.send_response(status)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"


@contextlib.contextmanager
def receiving(statuses: list[int] = ()) -> Iterator[Receiver]:
    receiver = Receiver(list(statuses))
    thread = threading.Thread(target=receiver.server.serve_forever, daemon=True)
    thread.start()
    try:
        yield receiver
    finally:
        receiver.server.shutdown()
        receiver.server.server_close()
        thread.join()


def verified(secret: str, headers: dict[str, str], body: bytes) -> bool:
    """What a receiver does: recompute the HMAC over '<timestamp>.<body>'."""
    signed = headers["X-Inferboard-Timestamp"].encode() + b"." + body
    expected = "sha256=" + hmac.new(secret.encode(), signed, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, headers["X-Inferboard-Signature"])


def regression_in_glm_on_mi355x() -> None:
    stored_series([8000] * 6)
    stored_series([6000] * 3, first_day=6, engine_version="0.5.24")


def test_a_subscribed_webhook_gets_a_signed_post_retried_after_a_500_and_email_lands(person):
    acme = organization_get_or_create(slug="acme")
    bystander = organization_get_or_create(slug="bystander")
    # Mail goes only to members' verified addresses (checked again at delivery).
    person(acme, email="oncall@acme.example")
    person(bystander, email="ops@bystander.example")
    with receiving([500]) as ours, receiving() as theirs:
        hook = Subscription.objects.create(
            org=acme, channel="webhook", target=ours.url, secret="s3cret", model_name="glm 5.2"
        )
        Subscription.objects.create(
            org=acme, channel="email", target="oncall@acme.example", accelerator="MI355X"
        )
        # The bystander subscribes to other series only: H200, and another model.
        Subscription.objects.create(
            org=bystander, channel="webhook", target=theirs.url, secret="x", accelerator="H200"
        )
        Subscription.objects.create(
            org=bystander, channel="email", target="ops@bystander.example", model_name="Kimi"
        )
        regression_in_glm_on_mi355x()
        now = timezone.now()
        outcome = regressions_detect(now=now)
        assert outcome.alerts >= 2

        assert alerts_deliver(now=now) >= 1
        first = Alert.objects.get(subscription=hook, change_point__metric="tput_per_gpu")
        assert first.status == Alert.Status.PENDING and first.attempts == 1
        assert len(ours.received) >= 1
        # Not yet due again: the backoff holds it.
        sent_before = len(ours.received)
        alerts_deliver(now=now + timedelta(seconds=30))
        first.refresh_from_db()
        assert first.attempts == 1
        alerts_deliver(now=now + timedelta(seconds=61))
        first.refresh_from_db()
        assert first.status == Alert.Status.SENT and first.attempts == 2
        assert len(ours.received) > sent_before

        log = list(Delivery.objects.filter(alert=first).order_by("attempt"))
        assert [(d.ok, d.status_code) for d in log] == [(False, 500), (True, 200)]
        for headers, body in ours.received:
            assert verified("s3cret", headers, body)
            assert not verified("wrong", headers, body)
        payloads = [json.loads(body) for _, body in ours.received]
        drop = next(p for p in payloads if p["metric"] == "tput_per_gpu")
        assert drop["type"] == "inferboard.regression" and drop["accelerator"] == "MI355X"
        assert drop["relative"] == pytest.approx(-0.25, abs=0.01)
        assert {"key": "engine_version", "label": "Engine version", "before": "0.5.23",
                "after": "0.5.24", "known": True} in drop["changed"]  # fmt: skip
        assert theirs.received == []
    to_acme = [m for m in mail.outbox if m.to == ["oncall@acme.example"]]
    assert to_acme and "regression" in to_acme[0].subject.lower()
    assert "0.5.23 → 0.5.24" in to_acme[0].body
    assert not [m for m in mail.outbox if "ops@bystander.example" in m.to]
    assert not Alert.objects.filter(subscription__org=bystander).exists()


def test_a_slack_compatible_webhook_gets_text():
    acme = organization_get_or_create(slug="acme")
    with receiving() as slack:
        Subscription.objects.create(org=acme, channel="slack", target=slack.url)
        regression_in_glm_on_mi355x()
        regressions_detect()
        alerts_deliver()
        texts = [json.loads(body)["text"] for _, body in slack.received]
    assert any("Regression: GLM 5.2 on 8×MI355X" in t and "-25." in t for t in texts)


def test_the_persistence_rule_holds_an_alert_until_the_change_has_lasted():
    acme = organization_get_or_create(slug="acme")
    strict = Subscription.objects.create(
        org=acme, channel="email", target="a@acme.example", persist_needed=3, persist_window=3
    )
    stored_series([8000] * 6)
    stored_series([6000] * 2, first_day=6)
    regressions_detect()
    assert ChangePoint.objects.filter(metric="tput_per_gpu").exists()
    assert not strict.alerts.exists()
    # A third run at the new level: now 3 of the last 3 hold.
    stored_series([6000], first_day=8)
    regressions_detect()
    assert strict.alerts.filter(change_point__metric="tput_per_gpu").exists()


def test_an_acknowledged_change_point_is_not_sent(person):
    acme = organization_get_or_create(slug="acme")
    Subscription.objects.create(org=acme, channel="email", target="a@acme.example")
    regression_in_glm_on_mi355x()
    regressions_detect()
    for cp in ChangePoint.objects.all():
        change_point_acknowledge(change_point=cp, org=acme, user=person(acme))
    assert alerts_deliver() == 0
    assert mail.outbox == []
    assert set(Alert.objects.values_list("status", flat=True)) == {Alert.Status.ACKNOWLEDGED}
