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


# Where cronsim and the hand-written parser it replaced disagree, and what is kept.


def test_a_step_from_a_start_runs_to_the_end_of_the_field_as_before():
    # Both read `5/15` as 5, 20, 35, 50: kept.
    cron = parse("5/15 * * * *")
    assert cron.next_after(at("2026-03-01T10:06:00")) == at("2026-03-01T10:20:00")
    assert cron.next_after(at("2026-03-01T10:50:00")) == at("2026-03-01T11:05:00")


def test_month_and_weekday_names_are_accepted_now():
    # The old parser refused names; they are standard cron and cronsim reads them, so a
    # schedule written as in crontab(5) works rather than failing with "not a number".
    cron = parse("0 9 * JAN-MAR MON-FRI")
    assert cron.next_after(at("2026-03-06T09:00:00")) == at("2026-03-09T09:00:00")  # Mon
    assert cron.next_after(at("2026-03-31T09:00:00")) == at("2027-01-01T09:00:00")


def test_the_last_day_of_the_month_is_accepted_now():
    assert parse("0 0 L * *").next_after(at("2026-02-10T00:00:00")) == at("2026-02-28T00:00:00")


def test_a_naive_moment_is_read_as_utc():
    assert parse("0 2 * * *").next_after(datetime(2026, 3, 1, 3, 0)) == at("2026-03-02T02:00:00")
