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


def _token_reads(plaintext: str) -> tuple[ApiToken | None, int]:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as queries:
        found = token_authenticate(plaintext)
    reads = [q for q in queries.captured_queries if "accounts_apitoken" in q["sql"]]
    return found, len(reads)


def test_a_token_used_again_is_read_from_memory_while_redis_answers(issued):
    from apps.cache import shared_cache_up

    assert shared_cache_up(), "the PostgreSQL suite runs with REDIS_URL set"
    assert _token_reads(issued.plaintext) == (issued.token, 2)  # the read, and last_used_at
    assert _token_reads(issued.plaintext) == (issued.token, 0)


def test_a_remembered_token_is_refused_once_revoked(issued):
    assert token_authenticate(issued.plaintext) == issued.token
    token_revoke(token=issued.token)
    assert _token_reads(issued.plaintext) == (None, 1)


def test_a_change_another_process_announces_is_seen_at_the_next_request(issued):
    from django.core.cache import cache
    from django.utils import timezone

    from apps.accounts.services import TOKENS_VERSION_KEY

    assert token_authenticate(issued.plaintext) == issued.token
    # Another web process revokes it: the row changes, and that process bumps the shared
    # version (nothing in this process hears of it otherwise).
    ApiToken.objects.filter(pk=issued.token.pk).update(revoked_at=timezone.now())
    cache.incr(TOKENS_VERSION_KEY)
    assert token_authenticate(issued.plaintext) is None


def test_a_deleted_organization_takes_its_remembered_tokens_with_it(issued):
    assert token_authenticate(issued.plaintext) == issued.token
    issued.token.org.delete()
    assert token_authenticate(issued.plaintext) is None


def test_without_a_shared_cache_every_request_reads_the_database(issued, settings):
    from tests.faults.conftest import dead_url

    settings.CACHES = {
        "default": {
            "BACKEND": "apps.cache.FailSoftRedisCache",
            "LOCATION": dead_url("redis", "/0"),
            "OPTIONS": {"TIMEOUT_S": 1, "RETRY_S": 5},
        }
    }
    assert _token_reads(issued.plaintext)[1] >= 1
    assert _token_reads(issued.plaintext) == (issued.token, 1)
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    assert _token_reads(issued.plaintext) == (issued.token, 1)  # a per-process cache
