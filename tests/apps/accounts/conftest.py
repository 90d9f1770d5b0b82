# The jobs suite's broker fixture (a per-test queue on the suite's Redis).
from tests.apps.costs.conftest import costs_site  # noqa: F401
from tests.apps.jobs.conftest import broker  # noqa: F401
