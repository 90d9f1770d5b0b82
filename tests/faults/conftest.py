# The live-server and broker fixtures of the Celery tests, for the faults that need a worker.
from tests.workers.test_celery_tasks import broker_url, pools, site  # noqa: F401
