from datetime import UTC, datetime

import pytest

from apps.jobs.cron import CronError, parse


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def test_nightly_fires_at_two_the_next_day():
    assert parse("0 2 * * *").next_after(at("2026-03-01T02:00:00")) == at("2026-03-02T02:00:00")
    assert parse("@nightly").next_after(at("2026-03-01T01:59:30")) == at("2026-03-01T02:00:00")


def test_steps_ranges_and_lists():
    cron = parse("*/15 9-17 * * 1-5")
    # Friday 17:50 -> Monday 09:00.
    assert cron.next_after(at("2026-03-06T17:50:00")) == at("2026-03-09T09:00:00")
    assert parse("5,35 * * * *").next_after(at("2026-03-01T10:06:00")) == at("2026-03-01T10:35:00")


def test_either_day_field_matches_when_both_are_restricted():
    # The 1st of the month or any Sunday, at midnight.
    cron = parse("0 0 1 * 0")
    assert cron.next_after(at("2026-03-02T00:00:00")) == at("2026-03-08T00:00:00")  # a Sunday
    assert cron.next_after(at("2026-03-29T00:00:00")) == at("2026-04-01T00:00:00")


def test_sunday_is_zero_or_seven():
    assert parse("0 0 * * 7").next_after(at("2026-03-02T00:00:00")) == at("2026-03-08T00:00:00")


@pytest.mark.parametrize("text", ["", "* * * *", "61 * * * *", "a * * * *", "0 0 31 2 *"])
def test_bad_expressions_are_refused(text):
    with pytest.raises(CronError):
        parse(text).next_after(at("2026-01-01T00:00:00"))
