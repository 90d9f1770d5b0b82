"""gunicorn settings for the production web process (deploy/ runs exactly this).

    gunicorn --config python:apps.serving apps.asgi:application

gunicorn manages uvicorn (ASGI) worker processes. With sync workers, each connection that
trickles its body in (one byte every few seconds) holds a whole worker, and three of them
stopped the old setup from answering at all; an async worker holds only a coroutine for it.
The reverse proxy in deploy/ also bounds body size and body read time (Caddyfile, nginx.conf).
"""

import os

from apps.heap import freeze_heap
from workers.env import env_int, env_str

# The compose file and container bind every interface; systemd keeps to loopback behind a proxy.
bind = env_str("INFERBOARD_BIND", "127.0.0.1:8000")
worker_class = "uvicorn_worker.UvicornWorker"
workers = env_int("WEB_CONCURRENCY", 3, minimum=1)
# Seconds a worker may go without a heartbeat before it is restarted: a blocked event loop.
timeout = 120
graceful_timeout = 30
# Seconds an idle keep-alive connection stays open.
keepalive = 5
accesslog = "-"
# Under ASGI each request runs its sync view in its own thread, so persistent connections would
# be left per thread (Django's docs: no CONN_MAX_AGE with ASGI), and a new connection per
# request costs a PostgreSQL backend start each time. A pool per worker serves both: a request
# borrows a connection and gives it back when it ends. 3 workers × 10 stays well inside
# PostgreSQL's default max_connections of 100, beside the scheduler and Celery.
os.environ.setdefault("DB_POOL_SIZE", "10")


def post_worker_init(worker) -> None:
    """gunicorn's hook, once the worker has loaded the application."""
    freeze_heap()
