import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

EXAMPLES = Path(__file__).parent / "examples"

# production_server: the documented production command on the test database; timing: where
# the suite's time went, printed at the end of every run.
pytest_plugins = ["tests.production", "tests.timing"]

# No time limit per example: hypothesis's default (200 ms) is a timing threshold, and on a
# shared, busy machine a pure function's example can take longer (a property test of the
# Pareto front failed that way), and so can generating one (the too_slow health check).
# What the properties check does not depend on speed.
settings.register_profile("inferboard", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("inferboard")


def example(name: str = "measured-run.json") -> dict[str, Any]:
    return json.loads((EXAMPLES / name).read_text())


def pytest_configure(config: pytest.Config) -> None:
    """Refuse to run the PostgreSQL suite on the embedded SQLite default by accident.

    Two code paths are PostgreSQL's own (COPY ingestion, the board's window queries): a plain
    `pytest` without DATABASE_URL would test only their SQLite branch and still pass.
    """
    import os

    if os.environ.get("DATABASE_URL") or os.environ.get("INFERBOARD_TESTS_ON_SQLITE") == "1":
        return
    if config.getoption("markexpr", "") == "sqlite_smoke":
        return
    raise pytest.UsageError(
        "DATABASE_URL is not set, so these tests would run on SQLite and skip the "
        "PostgreSQL code paths. Run scripts/test (it sets it), "
        "or set DATABASE_URL=postgres://postgres@127.0.0.1:5432/inferboard and REDIS_URL; "
        "the SQLite smoke pass is `pytest -m sqlite_smoke`; INFERBOARD_TESTS_ON_SQLITE=1 "
        "runs anything on SQLite on purpose."
    )


E2E = Path(__file__).parent / "e2e"


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The browser tests side by side, where the shuffled order (pytest-randomly, then
    pytest-django's grouping) put the first of them: one Chromium then serves them all
    (tests/e2e/conftest.py) instead of one per module, 13 starts a run."""
    browser = [item for item in items if E2E in item.path.parents]
    if browser:
        first = items.index(browser[0])
        others = [item for item in items if E2E not in item.path.parents]
        items[:] = others[:first] + browser + others[first:]
    _llama_server_modules_last(items)


def _llama_server_modules_last(items: list[pytest.Item]) -> None:
    """Modules that run llama-server go last, whole (so module fixtures start once).

    On a fresh machine `scripts/test` compiles llama-server in the background while the
    rest of the suite runs (workers/testing/llama_server.py waits for it), so the build is
    off the critical path only if nothing needs the binary early. A module is known by its
    import of the helper, so a new test cannot forget a marker.
    """
    uses: dict[Path, bool] = {}

    def needs(item: pytest.Item) -> bool:
        if item.path not in uses:
            uses[item.path] = LLAMA_HELPER in item.path.read_text()
        return uses[item.path]

    late = [item for item in items if needs(item)]
    items[:] = [item for item in items if not needs(item)] + late


LLAMA_HELPER = "workers.testing.llama_server"


@pytest.fixture
def document() -> dict[str, Any]:
    """A fresh, valid measured-run document (tests may mutate it)."""
    return copy.deepcopy(example())


@pytest.fixture
def org(db):
    from apps.accounts.services import organization_get_or_create

    return organization_get_or_create(slug="acme")


@pytest.fixture
def issued(org):
    from apps.accounts.services import token_create

    return token_create(org=org, name="test")


@pytest.fixture
def auth(issued) -> dict[str, str]:
    return {"HTTP_AUTHORIZATION": f"Bearer {issued.plaintext}"}


@pytest.fixture(autouse=True)
def empty_cache():
    """Cached pages must not leak from one test's database into the next."""
    from django.core.cache import cache

    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def person(db):
    """Makes a person (a verified email) with a role in an organization: person(org, role)."""
    from allauth.account.models import EmailAddress
    from django.contrib.auth import get_user_model

    from apps.accounts.services import member_add

    made = 0

    def make(org=None, role: str = "member", email: str = ""):
        nonlocal made
        made += 1
        email = email or f"person{made}@example.com"
        user = get_user_model().objects.create_user(username=email, email=email, password="pw")
        EmailAddress.objects.create(user=user, email=email, verified=True, primary=True)
        if org is not None:
            member_add(org=org, user=user, role=role)
        return user

    return make
