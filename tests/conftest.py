import copy
import json
from pathlib import Path
from typing import Any

import pytest

EXAMPLES = Path(__file__).parent / "examples"


def example(name: str = "measured-run.json") -> dict[str, Any]:
    return json.loads((EXAMPLES / name).read_text())


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
