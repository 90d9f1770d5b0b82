"""The one place that talks to the broker: the Celery app and the publish of a task."""

import functools
from datetime import datetime
from typing import Any

from celery import Celery
from django.conf import settings

from workers.celery import make_app


class BrokerUnavailable(Exception):
    """The broker did not take the job; the job is marked failed and can be retried."""


@functools.cache
def _celery(broker_url: str) -> Celery:
    return make_app(broker_url)


def celery_app() -> Celery:
    return _celery(settings.CELERY_BROKER_URL)


def publish(name: str, spec: dict[str, Any], *, queue: str, task_id: str, label: str) -> None:
    """Put a task on the broker. What Celery shows of the arguments (logs, monitoring) is
    `label`: the spec names the endpoint's URL, which is the organization's business."""
    app = celery_app()
    # An explicit connection: Celery would let env CELERY_BROKER_URL override settings.
    with app.connection_for_write(settings.CELERY_BROKER_URL) as connection:
        app.send_task(
            name,
            args=[spec],
            queue=queue,
            task_id=task_id,
            connection=connection,
            argsrepr=label,
            kwargsrepr="{}",
            retry=True,
            retry_policy={"max_retries": 3, "interval_start": 0.2, "interval_step": 0.5},
        )


def publish_members(
    name: str,
    spec: dict[str, Any],
    *,
    members: int,
    start_at: datetime,
    queue: str,
    task_id: str,
    label: str,
) -> None:
    """One message per member of a fanned-out load job, on the same queue: each carries the
    same job, its member index, the member count and the one start instant."""
    for member in range(members):
        publish(
            name,
            {**spec, "member": member, "members": members, "start_at": start_at.isoformat()},
            queue=queue,
            task_id=f"{task_id}:m{member}",
            label=f"{label[:-1]}, member {member} of {members})",
        )
