"""Fixtures for the abuse suite: a live server, an organization and its Bearer token."""

from __future__ import annotations

from dataclasses import dataclass

import pytest


@dataclass
class Site:
    url: str
    token: str

    @property
    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}


@pytest.fixture
def site(live_server, transactional_db) -> Site:
    from apps.accounts.services import organization_get_or_create, token_create

    org = organization_get_or_create(slug="abuse")
    return Site(url=live_server.url, token=token_create(org=org, name="abuse").plaintext)


def pytest_terminal_summary(terminalreporter) -> None:
    from tests.abuse.test_openapi_fuzz import GENERATED

    if GENERATED:
        operations = len(set(GENERATED))
        terminalreporter.write_line(
            f"schemathesis: {len(GENERATED)} generated cases over {operations} operations"
        )
