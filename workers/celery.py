"""The Celery app shared by the server (which only sends) and the GPU-host workers (which run).

Start a worker for one hardware pool:  celery -A workers.celery worker -Q pool.mi355x

No Django here: a GPU host needs the broker URL, the server URL and a token, never database
credentials. Tasks are sent by name (`TASK_LOAD`, `TASK_ACCURACY`) on the queue of the
endpoint's pool, so the server never imports the load generator either.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

from celery import Celery

from workers.env import env_int, env_str

DEFAULT_BROKER_URL = "redis://127.0.0.1:6379/0"
TASK_LOAD = "inferboard.run_load"
TASK_ACCURACY = "inferboard.run_accuracy"
# Tasks sent without a queue land here instead of on some GPU pool.
SERVER_QUEUE = "server"

# A benchmark sweep can take hours; a hard limit stops a wedged one from holding a pool forever.
TIME_LIMIT_S = env_int("INFERBOARD_TASK_TIME_LIMIT_S", 6 * 3600, minimum=1)


# What a pool name may hold (the API's schema says the same): ASCII letters, digits, '.', '_'
# and '-', starting with a letter or digit. Anything else could look like another pool's name.
POOL_NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]*$"


def pool_queue(sku_or_pool: str) -> str:
    """'MI355X' -> 'pool.mi355x'; an existing 'pool.x' name passes through. One form for
    storing and comparing: NFKC (a fullwidth 'ｂ' is 'b'), case-folded, without trailing dots
    (DNS's 'pool.b300.' is 'pool.b300')."""
    name = unicodedata.normalize("NFKC", sku_or_pool).strip().casefold().rstrip(".")
    return name if name.startswith("pool.") else f"pool.{name}"


# Unicode categories a reader does not see: format characters (zero-width space, joiners, the
# byte-order mark, direction marks), controls, separators, combining marks, unassigned.
_UNSEEN = {"Cf", "Cc", "Cs", "Co", "Cn", "Zs", "Zl", "Zp", "Mn", "Me"}


def pool_name_refusal(name: str) -> str:
    """Why `name` may not name a pool, or "" when it may: an invisible character, a
    look-alike of a letter or digit (fullwidth, another script's), or anything outside
    POOL_NAME_PATTERN, each said with the character's code point and name."""
    for char in name:
        label = f"U+{ord(char):04X} {unicodedata.name(char, 'unnamed')}"
        if char != " " and unicodedata.category(char) in _UNSEEN:
            return f"holds an invisible character ({label}); type the name again"
        if not char.isascii():
            plain = unicodedata.normalize("NFKC", char)
            like = f" that looks like “{plain}”" if plain.isascii() and plain != char else ""
            return (
                f"holds “{char}” ({label}){like}: a pool name is ASCII letters, digits, "
                "'.', '_' and '-'"
            )
    if not re.fullmatch(POOL_NAME_PATTERN, name):
        return "is ASCII letters, digits, '.', '_' and '-', starting with a letter or digit"
    return ""


def broker_url_from_env() -> str:
    # Celery itself lets CELERY_BROKER_URL override any configured broker, so it comes first.
    return env_str("CELERY_BROKER_URL") or env_str("INFERBOARD_BROKER_URL", DEFAULT_BROKER_URL)


def transport_options(broker_url: str) -> dict[str, object]:
    options: dict[str, object] = {
        # Unacked messages come back after this; it must outlast the longest job.
        "visibility_timeout": env_int(
            "INFERBOARD_VISIBILITY_TIMEOUT_S", TIME_LIMIT_S + 600, minimum=1
        ),
    }
    if broker_url.startswith(("redis://", "rediss://")):
        options["socket_connect_timeout"] = 5
    if broker_url.startswith("filesystem://"):
        # The local demo without Redis: messages are files in a folder both processes share.
        folder = Path(env_str("INFERBOARD_BROKER_FOLDER", "var/broker")).resolve()
        (folder / "queue").mkdir(parents=True, exist_ok=True)
        (folder / "control").mkdir(parents=True, exist_ok=True)
        options.update(
            data_folder_in=str(folder / "queue"),
            data_folder_out=str(folder / "queue"),
            control_folder=str(folder / "control"),
            store_processed=False,
        )
    return options


def make_app(broker_url: str | None = None) -> Celery:
    url = broker_url or broker_url_from_env()
    # fixups=[]: Celery would otherwise set Django up whenever DJANGO_SETTINGS_MODULE is set.
    app = Celery("inferboard", broker=url, include=[], fixups=[])
    app.conf.update(
        # JSON only: a pickle payload from the broker would be code execution on a GPU host.
        task_serializer="json",
        accept_content=["json"],
        result_serializer="json",
        event_serializer="json",
        # Job status travels over the REST API, not a result backend.
        task_ignore_result=True,
        result_backend=None,
        task_default_queue=SERVER_QUEUE,
        # Ack after the task ends, and put the message back when the worker dies mid-task:
        # a lost host means redelivery, and the job's idempotency key stops a second run.
        task_acks_late=True,
        task_reject_on_worker_lost=True,
        worker_cancel_long_running_tasks_on_connection_loss=True,
        worker_prefetch_multiplier=1,
        task_time_limit=TIME_LIMIT_S,
        # The soft limit raises inside the task, which then reports the job failed; the hard
        # limit kills the pool process. Both need the prefork pool (see deploy/README.md).
        task_soft_time_limit=TIME_LIMIT_S - min(300, max(1, TIME_LIMIT_S // 10)),
        broker_connection_retry_on_startup=True,
        broker_transport_options=transport_options(url),
        # Heartbeats and cancel checks already go over HTTP; these add broker chatter only.
        worker_send_task_events=False,
        timezone="UTC",
    )
    return app


app = make_app()
# Only the worker side loads the task bodies (and with them the load generator).
app.conf.include = ["workers.tasks"]
