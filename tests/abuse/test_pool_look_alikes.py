"""A pool name cannot stand beside another that looks the same (issue 53): a zero-width
space, fullwidth letters or another script's look-alike are refused naming `name`; case and
a trailing dot are compared away, so those variants are the same name (409 for another
organization's)."""

from __future__ import annotations

import json

import pytest
from django.core.management import CommandError, call_command

from apps.accounts.services import organization_get_or_create, token_create
from apps.jobs.models import Pool
from apps.jobs.services import pool_create
from apps.jobs.specs import JobError

pytestmark = pytest.mark.django_db

REFUSED = {
    "pool.b\u200b300": "invisible character (U+200B ZERO WIDTH SPACE)",
    "pool.b300\u2060": "invisible character (U+2060 WORD JOINER)",
    "\ufeffpool.b300": "invisible character (U+FEFF ZERO WIDTH NO-BREAK SPACE)",
    "pool.b300\u00ad": "invisible character (U+00AD SOFT HYPHEN)",
    "ｐｏｏｌ.ｂ３００": "looks like “p”",
    "pool.ｂ300": "looks like “b”",
    "pool.b3\u043e\u043e": "U+043E CYRILLIC SMALL LETTER O",
    "pool.\u0392300": "U+0392 GREEK CAPITAL LETTER BETA",
    "pool.b300\u0301": "invisible character (U+0301 COMBINING ACUTE ACCENT)",
}
SAME_NAME = ["pool.b300.", "pool.b300..", "POOL.B300", "Pool.B300.", "b300", "B300."]


def post(client, name: str, token: str):
    return client.post(
        "/api/v1/pools",
        json.dumps({"name": name}),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {token}",
    )


@pytest.fixture
def held(client) -> str:
    """pool.b300 is the first organization's; the token returned is a second's."""
    first = token_create(org=organization_get_or_create(slug="first")).plaintext
    assert post(client, "pool.b300", first).status_code == 201
    return token_create(org=organization_get_or_create(slug="squatter")).plaintext


@pytest.mark.parametrize(("name", "said"), REFUSED.items())
def test_an_invisible_or_look_alike_character_is_refused_naming_the_field(client, held, name, said):
    refused = post(client, name, held)
    assert refused.status_code == 422, refused.content
    [error] = refused.json()["detail"]
    assert error["path"].endswith("name") and said in error["message"]
    assert list(Pool.objects.values_list("name", flat=True)) == ["pool.b300"]


@pytest.mark.parametrize("name", SAME_NAME)
def test_case_and_trailing_dots_are_the_same_name(client, held, name):
    taken = post(client, name, held)
    assert taken.status_code == 409
    assert taken.json()["detail"][0]["path"] == "name"
    assert list(Pool.objects.values_list("name", flat=True)) == ["pool.b300"]


def test_the_service_and_the_operators_command_refuse_them_too(held):
    org = organization_get_or_create(slug="squatter")
    for name in REFUSED:
        with pytest.raises(JobError) as refused:
            pool_create(org=org, name=name)
        assert refused.value.field == "name"
    with pytest.raises(CommandError, match="invisible"):
        call_command("addpool", "pool.b\u200b300")
    assert list(Pool.objects.values_list("name", flat=True)) == ["pool.b300"]
