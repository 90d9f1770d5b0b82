"""The one backoff schedule (workers/retry.py) the worker's retry loops follow."""

from itertools import islice

from workers.retry import backoff_delays


def test_delays_double_from_the_first_and_stop_at_the_cap():
    assert list(islice(backoff_delays(1.0), 8)) == [1, 2, 4, 8, 16, 32, 60, 60]
    assert list(islice(backoff_delays(0.5, cap_s=3), 5)) == [0.5, 1, 2, 3, 3]


def test_without_a_cap_they_keep_doubling():
    assert list(islice(backoff_delays(0.25, cap_s=None), 6)) == [0.25, 0.5, 1, 2, 4, 8]
