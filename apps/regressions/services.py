"""Writes for regressions: keep change points in step with the runs, and tell subscribers.

Both run from the scheduler's loop (`manage.py runscheduler`, after the InferenceX sync)
or `manage.py detectregressions`, never inside a request: detection reads every series.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Protocol

import httpx
from django.conf import settings
from django.core.mail import send_mail
from django.db import transaction
from django.db.models import QuerySet
from django.db.models.functions import Coalesce
from django.utils import timezone

from apps.accounts.models import Organization
from apps.accounts.scoping import member_addresses
from apps.accounts.services import audit_record
from apps.catalog.fairness import deployment_facts, differences
from apps.catalog.models import Deployment
from apps.regressions import detection, webhooks
from apps.regressions.models import (
    CHANGE_POINT_KEY,
    METRICS,
    Acknowledgement,
    Alert,
    ChangePoint,
    Delivery,
    Detection,
    Subscription,
)
from apps.runs.models import Point, Run
from workers import figures
from workers import slo as slo_rule

log = logging.getLogger(__name__)

# Deployment facts that make a series: all but what a change point reports as changed.
_CHANGEABLE = {"id", "fingerprint", "engine_version", "image_digest", "engine_flags", "notes"}
_CONFIG_FIELDS = [
    f.attname
    for f in Deployment._meta.concrete_fields
    if f.attname not in _CHANGEABLE and f.name != "created_at"
]
_POINT_COLUMNS = (
    "id",
    "ordinal",
    "label",
    "concurrency",
    "request_rate",
    "output_tok_s",
    "interactivity_p50",
    "latency_ms",
    "interactivity",
    "success_rate",
    "prompt_length_mismatch_rate",
    "client_bound",
    "run_id",
    "run__deployment_id",
    "run__deployment__gpus",
    "run__scenario_id",
    "run__scenario__slo_min_success_rate",
    "run__is_public",
    "run__org_id",
    "measured_at",
)


def config_key(deployment: dict[str, Any]) -> str:
    facts = json.dumps({k: deployment[k] for k in _CONFIG_FIELDS}, sort_keys=True, default=str)
    return hashlib.sha256(facts.encode()).hexdigest()


def _level(row: dict[str, Any]) -> str:
    if row["concurrency"] is not None:
        return f"c{row['concurrency']}"
    if row["request_rate"] is not None:
        return f"r{row['request_rate']:g}"
    return (row["label"] or f"point {row['ordinal']}")[:50]


def _metric_values(row: dict[str, Any]) -> dict[str, float]:
    """Each watched figure (workers/figures.py) of a point: its column where the query read
    one, else its slot of the stored distributions; per GPU where the figure says."""
    stored = slo_rule.point_figures(row["latency_ms"] or {}, row["interactivity"] or {})
    values: dict[str, float] = {}
    for key in figures.WATCHED:
        spec = figures.FIGURES[key]
        value = row.get(spec.column)
        if value is None and spec.slot is not None:
            value = stored[spec.slot[0]].get(spec.slot[1])
        if value is not None and spec.per_gpu:
            value = value / row["run__deployment__gpus"]
        if value is not None:
            values[key] = float(value)
    return values


def point_invalid(row: dict[str, Any]) -> str | None:
    """Why a point may neither form nor hide a change point, or None when it may: the one
    validity rule (workers.figures.PointView), with the scenario's success floor.

    Simulated runs and failed runs never reach here (the query leaves them out)."""
    return figures.PointView.of(row).invalid_reason(
        min_success_rate=row["run__scenario__slo_min_success_rate"]
    )


@dataclass
class Series:
    key: tuple[str, int, str, str]  # config key, scenario id, level, metric
    points: list[tuple[datetime, int, float, bool, int | None]] = field(default_factory=list)
    # (measured at, run id, value, run is public, run's org)


def _candidate_runs() -> Any:
    return (
        Run.objects.exclude(provenance=Run.Provenance.SIMULATED)
        .exclude(status=Run.Status.FAILED)
        .filter(scenario__isnull=False)
    )


def series_all() -> dict[tuple, Series]:
    """Every series over valid points of every run that could be seen by someone."""
    runs = _candidate_runs()
    deployments = {d["id"]: config_key(d) for d in Deployment.objects.values("id", *_CONFIG_FIELDS)}
    rows = (
        Point.objects.filter(run__in=runs)
        .annotate(measured_at=Coalesce("run__started_at", "run__created_at"))
        .order_by("measured_at", "run_id", "ordinal")
        .values(*_POINT_COLUMNS)
    )
    series: dict[tuple, Series] = {}
    seen: set[tuple] = set()
    for row in rows.iterator(chunk_size=2000):
        if point_invalid(row):
            continue
        config = deployments[row["run__deployment_id"]]
        level = _level(row)
        for metric, value in _metric_values(row).items():
            key = (config, row["run__scenario_id"], level, metric)
            if (key, row["run_id"]) in seen:
                continue  # one value per run and level
            seen.add((key, row["run_id"]))
            series.setdefault(key, Series(key)).points.append(
                (
                    row["measured_at"],
                    row["run_id"],
                    value,
                    row["run__is_public"],
                    row["run__org_id"],
                )
            )
    return series


_SPEC = {key: (higher, log) for key, _, higher, log in METRICS}


UNSTATED = "unstated"


def _run_facts(run: Run) -> dict[str, str]:
    facts = deployment_facts(run.deployment)
    extra = (run.environment or {}).get("extra") or {}
    image = (extra.get("inferencex") or {}).get("image") or extra.get("image")
    if isinstance(image, list):
        image = ", ".join(image)
    facts["image"] = str(image or run.deployment.image_digest or UNSTATED)
    facts["flags"] = " ".join(run.deployment.engine_flags or []) or "none"
    return facts


def run_differences(before: Run, after: Run) -> list[dict[str, Any]]:
    """What changed between two runs of a series, by the fairness comparison's facts plus
    the run's image and the engine flags (which the comparison does not list). A fact one
    run leaves unstated is listed as such: it may or may not have changed."""
    a, b = _run_facts(before), _run_facts(after)
    found: list[dict[str, Any]] = [
        {"key": d.key, "label": d.label, "before": d.values[0], "after": d.values[1]}
        for d in differences([a, b])
    ]
    for key, label in (("image", "Image"), ("flags", "Engine flags")):
        if a[key] != b[key]:
            found.append({"key": key, "label": label, "before": a[key], "after": b[key]})
    for entry in found:
        entry["known"] = UNSTATED not in (entry["before"], entry["after"])
    return found


@dataclass(frozen=True)
class DetectOutcome:
    series: int
    change_points: int
    new: int
    alerts: int


def _scope_points(series: Series, org_id: int | None) -> list[tuple]:
    if org_id is None:
        return [p for p in series.points if p[3]]
    return [p for p in series.points if p[3] or p[4] == org_id]


def _change_fields(
    change: detection.Change, points: list[tuple], values: list[float], *, higher: bool
) -> dict[str, Any]:
    """A change point's stored fields, from the series' points (at, run id, value ...)."""
    worse = (change.relative < 0) == higher
    return {
        "direction": ChangePoint.Direction.REGRESSION
        if worse
        else ChangePoint.Direction.IMPROVEMENT,
        "before_run_id": points[change.index - 1][1],
        "before_runs": [p[1] for p in points[change.start : change.index]],
        "after_runs": [p[1] for p in points[change.index : change.end]],
        "last_before_at": points[change.index - 1][0],
        "first_after_at": points[change.index][0],
        "before_value": change.before,
        "after_value": change.after,
        "relative": change.relative,
        "relative_low": change.low,
        "relative_high": change.high,
        "p_value": change.p_value,
        "noise": change.noise,
        "series_tail": values[change.index :],
        "_change": change,
        "_values": values,
    }


def regressions_detect(*, now: datetime | None = None) -> DetectOutcome:
    """Find the change points of every series and store them; queue alerts for new ones.

    Public change points are found over public runs alone, so a private run never shows
    through them; an organization with private runs in a series gets that series' change
    points over its runs and the public ones, visible to it alone."""
    now = now or timezone.now()
    all_series = series_all()
    found: dict[tuple, dict[str, Any]] = {}
    for series in all_series.values():
        orgs = {p[4] for p in series.points if not p[3] and p[4] is not None}
        for org_id in (None, *sorted(orgs)):
            points = _scope_points(series, org_id)
            higher, log_scale = _SPEC[series.key[3]]
            values = [p[2] for p in points]
            for change in detection.find_changes(values, log_scale=log_scale):
                config, scenario_id, level, metric = series.key
                found[(org_id, config, scenario_id, level, metric, points[change.index][1])] = (
                    _change_fields(change, points, values, higher=higher)
                )
    runs = Run.objects.select_related("deployment__model", "deployment__accelerator")
    runs = runs.select_related("deployment__engine").in_bulk(
        {r for k, v in found.items() for r in (k[5], v["before_run_id"])}
    )
    new = 0
    kept: list[int] = []
    with transaction.atomic():
        for key, fields in found.items():
            after_id = key[-1]
            fields = dict(fields)
            fields.pop("_change"), fields.pop("_values")
            before, after = runs[fields["before_run_id"]], runs[after_id]
            fields["differences"] = run_differences(before, after)
            fields["deployment_id"] = after.deployment_id
            fields["current"] = True
            # The key holds CHANGE_POINT_KEY's values in its order, foreign keys as ids.
            names = (ChangePoint._meta.get_field(f).attname for f in CHANGE_POINT_KEY)
            identity = dict(zip(names, key, strict=True))
            cp, created = ChangePoint.objects.update_or_create(**identity, defaults=fields)
            new += created
            kept.append(cp.pk)
        ChangePoint.objects.exclude(pk__in=kept).filter(current=True).update(current=False)
        queued = alerts_queue(now=now)
        Detection.objects.create(
            at=now, series=len(all_series), change_points=len(kept), new=new, alerts=queued
        )
    return DetectOutcome(series=len(all_series), change_points=len(kept), new=new, alerts=queued)


# --- alerts -------------------------------------------------------------------------------


def subscription_matches(subscription: Subscription, cp: ChangePoint) -> bool:
    if cp.org_id is not None and cp.org_id != subscription.org_id:
        return False  # an organization's private series tells that organization only
    if cp.direction == ChangePoint.Direction.REGRESSION and not subscription.regressions:
        return False
    if cp.direction == ChangePoint.Direction.IMPROVEMENT and not subscription.improvements:
        return False
    d = cp.deployment
    if subscription.model_name and subscription.model_name.lower() != d.model.name.lower():
        return False
    if subscription.accelerator and subscription.accelerator.lower() != d.accelerator.sku.lower():
        return False
    if subscription.deployment_id and subscription.deployment_id not in {
        cp.deployment_id,
        cp.before_run.deployment_id,
    }:
        return False
    return not (subscription.scenario_id and subscription.scenario_id != cp.scenario_id)


def _persists(cp: ChangePoint, subscription: Subscription) -> bool:
    """The persistence rule on the series as it stands: the tail after the change."""
    tail = list(cp.series_tail or [])
    window = subscription.persist_window
    # The points before the change count against it when the tail is shorter than the window.
    values = [cp.before_value] * max(window - len(tail), 0) + tail
    change = detection.Change(
        index=max(window - len(tail), 0),
        start=0,
        end=len(values),
        before=cp.before_value,
        after=cp.after_value,
        relative=cp.relative,
        low=cp.relative_low,
        high=cp.relative_high,
        p_value=cp.p_value,
        noise=cp.noise,
    )
    return detection.persists(values, change, needed=subscription.persist_needed, window=window)


def alerts_queue(*, now: datetime | None = None) -> int:
    """An alert for each current, unacknowledged change point that a subscription matches
    and whose change has persisted by the subscription's rule; one per pair, ever."""
    now = now or timezone.now()
    points = list(
        ChangePoint.objects.filter(current=True)
        .select_related("deployment__model", "deployment__accelerator", "before_run")
        .prefetch_related("acknowledgements")
    )
    queued = 0
    for subscription in Subscription.objects.filter(active=True):
        done = set(subscription.alerts.values_list("change_point_id", flat=True))
        for cp in points:
            if cp.pk in done or not subscription_matches(subscription, cp):
                continue
            if any(a.org_id == subscription.org_id for a in cp.acknowledgements.all()):
                continue
            if not _persists(cp, subscription):
                continue
            Alert.objects.create(subscription=subscription, change_point=cp, next_attempt_at=now)
            queued += 1
    return queued


def alert_payload(cp: ChangePoint) -> dict[str, Any]:
    d = cp.deployment
    site = settings.SITE_URL.rstrip("/")
    return {
        "type": f"inferboard.{cp.direction}",
        "change_point": cp.pk,
        "url": f"{site}/regressions/{cp.pk}/",
        "metric": cp.metric,
        "metric_label": cp.metric_label,
        "model": d.model.name,
        "accelerator": d.accelerator.sku,
        "deployment": d.pk,
        "scenario": cp.scenario.slug,
        "level": cp.level,
        "relative": cp.relative,
        "interval": [cp.relative_low, cp.relative_high],
        "p_value": cp.p_value,
        "before": {"value": cp.before_value, "run": cp.before_run_id},
        "after": {"value": cp.after_value, "run": cp.after_run_id},
        "last_before": cp.last_before_at.isoformat(),
        "first_after": cp.first_after_at.isoformat(),
        "changed": cp.differences,
    }


def alert_text(cp: ChangePoint) -> str:
    d = cp.deployment
    changed = "; ".join(f"{x['label']}: {x['before']} → {x['after']}" for x in cp.differences)
    return (
        f"{cp.direction.capitalize()}: {d.model.name} on {d.gpus}×{d.accelerator.sku} "
        f"({d.engine.name}), {cp.scenario.name} at {cp.level}: {cp.metric_label} "
        f"{cp.relative:+.1%} [{cp.relative_low:+.1%}, {cp.relative_high:+.1%}], p = "
        f"{cp.p_value:.2g}, between {cp.last_before_at:%Y-%m-%d} and "
        f"{cp.first_after_at:%Y-%m-%d} (runs {cp.before_run_id} → {cp.after_run_id}). "
        f"Changed: {changed or 'nothing stated'}."
    )


def signature(secret: str, body: bytes, timestamp: str) -> str:
    """HMAC-SHA256 over "<timestamp>.<body>", hex: the receiver recomputes it with the
    shared secret (and refuses old timestamps, so a captured POST cannot be replayed)."""
    mac = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256)
    return "sha256=" + mac.hexdigest()


def recipients_forget(recipients: QuerySet[Any], *, membership: Any, origin: Any = None) -> int:
    """A person leaving an organization takes their addresses out of its email subscriptions
    (`recipients`: regressions' Subscription, the claims ledger's ClaimSubscription; one left
    with none is switched off), audit-logged; the number changed. Run from Membership's
    pre_delete (each app's apps.py), whatever ended the membership, unless the organization
    itself is going (`origin`), its subscriptions with it."""
    from allauth.account.models import EmailAddress

    if isinstance(origin, Organization) or getattr(origin, "model", None) is Organization:
        return 0
    org, user = membership.org, membership.user

    theirs = {
        e.lower() for e in EmailAddress.objects.filter(user=user).values_list("email", flat=True)
    }
    if getattr(user, "email", ""):
        theirs.add(user.email.lower())
    changed = 0
    for recipient in recipients.filter(org=org, channel=Subscription.Channel.EMAIL):
        before = recipient.addresses
        kept = [a for a in before if a.lower() not in theirs]
        if len(kept) == len(before):
            continue
        recipient.target = ", ".join(kept)
        recipient.active = recipient.active and bool(kept)
        recipient.save(update_fields=["target", "active"])
        audit_record(
            org=org,
            actor="inferboard",
            action="subscription.recipient_removed",
            target=recipient.name or f"{recipient._meta.verbose_name} {recipient.pk}",
            removed=[a for a in before if a not in kept],
            active=recipient.active,
        )
        changed += 1
    return changed


# Attempts and the wait before each retry: 1, 2, 4, 8 ... minutes (REGRESSION_ALERT_* settings).
def backoff(attempt: int) -> timedelta:
    """The wait before retry `attempt` + 1 of any alert (regressions', the claims ledger's)."""
    base = settings.REGRESSION_ALERT_BACKOFF_S
    return timedelta(seconds=base * 2 ** (attempt - 1))


class Recipient(Protocol):
    """Where an alert goes: a subscription's organization, channel, target (addresses, for
    email) and signing secret."""

    org: Organization
    channel: str
    target: str
    secret: str

    @property
    def addresses(self) -> list[str]: ...


def send(
    to: Recipient, *, subject: str, text: str, payload: dict[str, Any], delivery: str
) -> tuple[bool, int | None, str]:
    """One attempt to deliver an alert: email, a Slack-compatible {"text"} or a signed JSON
    webhook (webhooks.post: checked address, one deadline). The one delivery every
    subscription uses (regressions and the claims ledger); returns (ok, status, error), a
    failure never raised."""
    try:
        return _deliver(to, subject=subject, text=text, payload=payload, delivery=delivery)
    except webhooks.TargetRefused as exc:
        return False, None, str(exc)[:1000]
    except (httpx.HTTPError, OSError) as exc:
        # The kind of failure only: an exception's text can quote what the receiver sent.
        return False, None, type(exc).__name__


def _deliver(
    to: Recipient, *, subject: str, text: str, payload: dict[str, Any], delivery: str
) -> tuple[bool, int | None, str]:
    if to.channel == Subscription.Channel.EMAIL:
        # Checked again at delivery, as a webhook's address is: only addresses that are
        # still a member's (verified) get mail, so no alert reaches someone removed since.
        members = member_addresses(to.org)
        recipients = [a for a in to.addresses if a.lower() in members]
        if not recipients:
            return False, None, "no address of this subscription is a member's any longer"
        send_mail(subject=subject, message=text, from_email=None, recipient_list=recipients)
        return True, None, ""
    if to.channel == Subscription.Channel.SLACK:
        body = json.dumps({"text": text}).encode()
        headers = {"Content-Type": "application/json"}
    else:
        body = json.dumps(payload, sort_keys=True).encode()
        timestamp = str(int(timezone.now().timestamp()))
        headers = {
            "Content-Type": "application/json",
            "X-Inferboard-Timestamp": timestamp,
            "X-Inferboard-Signature": signature(to.secret, body, timestamp),
            "X-Inferboard-Delivery": delivery,
        }
    # The answer's body is never kept: a receiver inside a network could echo its secrets.
    status = webhooks.post(to.target, body, headers)
    return 200 <= status < 300, status, ""


def _send(alert: Alert) -> tuple[bool, int | None, str]:
    cp = alert.change_point
    return send(
        alert.subscription,
        subject=f"[inferboard] {cp.direction}: {cp.metric_label} {cp.relative:+.1%}",
        text=alert_text(cp),
        payload=alert_payload(cp),
        delivery=f"{alert.pk}-{alert.attempts + 1}",
    )


def alerts_deliver(*, now: datetime | None = None) -> int:
    """Try every pending alert that is due; each try is logged, a failure is retried after
    a doubling wait until REGRESSION_ALERT_ATTEMPTS tries. Returns the alerts sent."""
    now = now or timezone.now()
    most = settings.REGRESSION_ALERT_ATTEMPTS
    sent = 0
    due = Alert.objects.filter(status=Alert.Status.PENDING, next_attempt_at__lte=now)
    due = due.select_related(
        "subscription",
        "change_point__deployment__model",
        "change_point__deployment__accelerator",
        "change_point__deployment__engine",
        "change_point__scenario",
    )
    for alert in due:
        cp = alert.change_point
        if Acknowledgement.objects.filter(change_point=cp, org=alert.subscription.org).exists():
            alert.status = Alert.Status.ACKNOWLEDGED
            alert.save(update_fields=["status"])
            continue
        ok, code, error = _send(alert)
        alert.attempts += 1
        Delivery.objects.create(
            alert=alert, attempt=alert.attempts, ok=ok, status_code=code, error=error
        )
        if ok:
            alert.status, alert.sent_at = Alert.Status.SENT, now
            sent += 1
        elif alert.attempts >= most:
            alert.status = Alert.Status.FAILED
        else:
            alert.next_attempt_at = now + backoff(alert.attempts)
        alert.save(update_fields=["status", "sent_at", "attempts", "next_attempt_at"])
    return sent


def change_point_acknowledge(*, change_point: ChangePoint, org: Organization, user: Any) -> bool:
    """Mark a change point seen by an organization; its pending alerts to it are dropped."""
    _, created = Acknowledgement.objects.get_or_create(
        change_point=change_point, org=org, defaults={"by": user}
    )
    Alert.objects.filter(
        change_point=change_point, subscription__org=org, status=Alert.Status.PENDING
    ).update(status=Alert.Status.ACKNOWLEDGED)
    return created


def deliveries_prune(*, now: datetime | None = None) -> int:
    """Delete delivery log rows older than REGRESSION_DELIVERY_RETAIN_DAYS (0: keep them all);
    the number deleted. An alert keeps its own count of tries, so its retries are unchanged."""
    days = settings.REGRESSION_DELIVERY_RETAIN_DAYS
    if days <= 0:
        return 0
    cutoff = (now or timezone.now()) - timedelta(days=days)
    deleted, _ = Delivery.objects.filter(at__lt=cutoff).delete()
    return deleted


def regressions_tick(*, now: datetime | None = None) -> tuple[DetectOutcome | None, int]:
    """The scheduler's tick: detect when a run was stored since the last detection, or
    REGRESSION_DETECT_EVERY_S after it, then deliver what is due and prune the delivery log."""
    now = now or timezone.now()
    deliveries_prune(now=now)
    last = Detection.objects.first()
    every = timedelta(seconds=settings.REGRESSION_DETECT_EVERY_S)
    outcome = None
    if last is None or now - last.at > every or Run.objects.filter(created_at__gt=last.at).exists():
        outcome = regressions_detect(now=now)
    return outcome, alerts_deliver(now=now)
