"""The delivery log holds no receiver's words, old rows included: a data migration clears the
bodies and exception texts rows written before that rule kept, and the scheduler's tick
deletes rows past REGRESSION_DELIVERY_RETAIN_DAYS."""

from __future__ import annotations

import importlib
from datetime import timedelta

import pytest
from django.apps import apps as installed_apps
from django.utils import timezone

from apps.regressions.models import Alert, Delivery
from apps.regressions.services import regressions_tick
from tests.apps.regressions.test_webhooks import a_pending_alert

pytestmark = pytest.mark.django_db

SECRET = "redis_password=hunter2"
REFUSED = (
    "a webhook may not point at a private or loopback address "
    "(REGRESSION_WEBHOOK_PRIVATE_HOSTS allows it)"
)


@pytest.fixture
def alert() -> Alert:
    found = a_pending_alert("https://hooks.example/hook")
    assert found is not None
    return found


def logged(alert: Alert, attempt: int, *, ok: bool, code: int | None, error: str) -> Delivery:
    return Delivery.objects.create(
        alert=alert, attempt=attempt, ok=ok, status_code=code, error=error
    )


def test_the_migration_clears_answer_bodies_and_keeps_only_the_failure_kind(alert):
    # As the code before the delivery-log rule wrote them.
    answered = logged(alert, 1, ok=False, code=500, error=f"<pre>{SECRET}</pre>")
    raised = logged(alert, 2, ok=False, code=None, error=f"ReadTimeout: echoed {SECRET}")
    dotted = logged(alert, 3, ok=False, code=None, error=f"httpx.ConnectError: {SECRET}")
    refused = logged(alert, 4, ok=False, code=None, error=REFUSED)
    sent = logged(alert, 5, ok=True, code=204, error="")
    migration = importlib.import_module(
        "apps.regressions.migrations.0002_delivery_log_bodies_cleared"
    )
    migration.clear_bodies(installed_apps, None)
    errors = {
        row.pk: row.error
        for row in Delivery.objects.filter(
            pk__in=[answered.pk, raised.pk, dotted.pk, refused.pk, sent.pk]
        )
    }
    assert errors == {
        answered.pk: "",
        raised.pk: "ReadTimeout",
        dotted.pk: "httpx.ConnectError",
        refused.pk: REFUSED,  # the service's own words, naming no receiver's
        sent.pk: "",
    }
    assert not Delivery.objects.filter(error__contains="hunter2").exists()
    assert list(Delivery.objects.values_list("status_code", flat=True).order_by("attempt")) == [
        500, None, None, None, 204,
    ]  # fmt: skip


def _aged(delivery: Delivery, days: int, now) -> None:
    Delivery.objects.filter(pk=delivery.pk).update(at=now - timedelta(days=days))


def test_the_tick_deletes_delivery_rows_past_their_retention(alert, settings):
    settings.REGRESSION_DELIVERY_RETAIN_DAYS = 30
    now = timezone.now()
    old = logged(alert, 1, ok=False, code=500, error="")
    recent = logged(alert, 2, ok=False, code=None, error="ReadTimeout")
    _aged(old, 31, now)
    _aged(recent, 29, now)
    alert.attempts = 2
    alert.next_attempt_at = now + timedelta(days=1)  # not due: the tick sends nothing new
    alert.save(update_fields=["attempts", "next_attempt_at"])
    regressions_tick(now=now)
    assert list(Delivery.objects.values_list("pk", flat=True)) == [recent.pk]
    alert.refresh_from_db()
    assert (alert.status, alert.attempts) == ("pending", 2)  # its tries are its own count


def test_a_retention_of_zero_keeps_every_row(alert, settings):
    settings.REGRESSION_DELIVERY_RETAIN_DAYS = 0
    now = timezone.now()
    ancient = logged(alert, 1, ok=False, code=500, error="")
    _aged(ancient, 3650, now)
    alert.next_attempt_at = now + timedelta(days=1)
    alert.save(update_fields=["next_attempt_at"])
    regressions_tick(now=now)
    assert Delivery.objects.filter(pk=ancient.pk).exists()
