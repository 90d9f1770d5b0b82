from __future__ import annotations

# The jobs fixtures (an endpoint on a broker pool), the live-server and broker fixtures of
# the Celery tests, for the faults that need a worker. The production command's fixture is
# tests/production.py's (a plugin of tests/conftest.py).
from tests.apps.jobs.conftest import broker, deployment, endpoint, scenario  # noqa: F401
from tests.workers.test_celery_tasks import broker_url, pools, site  # noqa: F401
from workers.testing.processes import free_port


def dead_url(scheme: str, path: str = "") -> str:
    """A URL on a loopback port where nothing listens: the part is "down"."""
    return f"{scheme}://127.0.0.1:{free_port()}{path}"
