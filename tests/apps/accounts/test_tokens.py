import io

import pytest
from django.core.management import call_command

from apps.accounts.models import ApiToken
from apps.accounts.services import token_authenticate, token_digest, token_revoke

pytestmark = pytest.mark.django_db


@pytest.mark.sqlite_smoke
def test_createtoken_prints_the_token_last_and_stores_only_its_hash():
    out = io.StringIO()
    call_command("createtoken", "New Org", stdout=out)
    plaintext = out.getvalue().strip().splitlines()[-1]
    stored = ApiToken.objects.get()
    assert stored.org.slug == "new-org"
    assert stored.digest == token_digest(plaintext)
    assert plaintext not in {stored.digest, stored.prefix, stored.name}
    assert token_authenticate(plaintext) == stored


def test_a_revoked_token_no_longer_authenticates(issued):
    token_revoke(token=issued.token)
    assert token_authenticate(issued.plaintext) is None


def test_two_tokens_are_never_the_same(org):
    from apps.accounts.services import token_create

    assert token_create(org=org).plaintext != token_create(org=org).plaintext


def test_a_token_used_again_within_a_minute_is_not_written_again(issued):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    assert token_authenticate(issued.plaintext) is not None  # first use: recorded
    with CaptureQueriesContext(connection) as queries:
        assert token_authenticate(issued.plaintext) is not None
    assert not [q for q in queries.captured_queries if q["sql"].startswith("UPDATE")]
