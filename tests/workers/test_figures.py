"""The measured point's one owner (workers/figures.py): the registry, the validity rule, the
throughput reading and a run's status from its request counts."""

from __future__ import annotations

import pytest

from workers import figures, significance, slo
from workers.figures import PointView, run_status, throughput


def test_it_gives_each_figure_one_key_and_one_comparison_name():
    names = [f.name for f in figures.FIGURES.values()]
    assert len(set(names)) == len(names)
    for key in figures.COMPARED + figures.WATCHED:
        assert key in figures.FIGURES


def test_it_is_the_table_significance_and_the_slo_labels_read():
    for key in figures.COMPARED:
        spec = figures.FIGURES[key]
        metric = significance.METRICS[spec.name]
        assert (metric.label, metric.better, metric.unit) == (spec.label, spec.better, spec.unit)
    for name, (label, better) in figures.DISTRIBUTIONS.items():
        assert slo.LABELS[name] == label
        assert (name in slo.CEILINGS) is (better == "lower")


def test_it_reads_each_distribution_figure_from_a_stored_slot():
    for spec in figures.FIGURES.values():
        if spec.slot is not None:
            distribution, percentile = spec.slot
            assert distribution in figures.DISTRIBUTIONS
            assert percentile in slo.PERCENTILES


@pytest.mark.parametrize(
    ("view", "floor", "reason"),
    [
        (PointView(client_bound=True, success_rate=1.0), None, figures.CLIENT_BOUND),
        (PointView(prompt_length_mismatch_rate=0.01), None, figures.LENGTH_MISMATCH),
        (PointView(success_rate=0.9), 0.99, figures.SUCCESS_BELOW_FLOOR),
        (PointView(success_rate=0.9), None, None),
        (PointView(simulated=True), None, figures.SIMULATED),
        (PointView(client_bound=False, prompt_length_mismatch_rate=0.0), 0.99, None),
        (PointView(), 0.99, None),  # nothing reported: nothing to refuse it on
    ],
)
def test_it_names_why_a_point_does_not_count(view, floor, reason):
    assert view.invalid_reason(min_success_rate=floor) == reason


def test_it_keeps_simulated_points_where_the_reader_asks_for_them():
    assert PointView(simulated=True).invalid_reason(exclude_simulated=False) is None


def test_it_reads_a_point_view_from_a_row_or_an_object():
    row = {"client_bound": True, "prompt_length_mismatch_rate": None, "success_rate": 1.0}
    assert PointView.of(row) == PointView(client_bound=True, success_rate=1.0)

    class Stored:
        client_bound = None
        prompt_length_mismatch_rate = 0.5
        success_rate = None

    assert PointView.of(Stored()).invalid_reason() == figures.LENGTH_MISMATCH


def test_it_reads_a_stated_throughput_as_stated():
    reading = throughput("input", input_tok_s=4000.0, output_tok_s=200.0, unlabelled_tok_s=1.0)
    assert (reading.value, reading.stated) == (4000.0, True)


def test_it_reads_an_unstated_throughput_as_a_range_of_both_readings():
    # 3,000 tok/s of unstated kind on 8k in / 1k out: as output tokens, it is 3,000 output
    # tok/s; as total tokens, 3,000 x 1/9 output tok/s.
    reading = throughput("output", unlabelled_tok_s=3000.0, input_tokens=8000, output_tokens=1000)
    assert reading.stated is False
    assert reading.low == pytest.approx(3000.0 / 9)
    assert reading.high == pytest.approx(3000.0)
    assert reading.value == reading.low


def test_it_reads_nothing_from_an_unstated_throughput_without_a_shape():
    assert throughput("total", unlabelled_tok_s=3000.0).value is None
    with pytest.raises(ValueError, match="token kind"):
        throughput("cached", output_tok_s=1.0)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("counts", "stated", "status"),
    [
        ([{"succeeded": 0, "failed": 5}], "succeeded", "failed"),
        ([{"succeeded": 3, "failed": 0}, {"succeeded": 0, "failed": 2}], "succeeded", "partial"),
        ([{"succeeded": 3, "failed": 0}], "partial", "succeeded"),
        ([{"succeeded": 3, "failed": None}], "partial", "partial"),  # successes only
        ([None], "failed", "failed"),
        ([], "succeeded", "succeeded"),
    ],
)
def test_it_derives_a_runs_status_from_its_request_counts(counts, stated, status):
    assert run_status(counts, stated) == status


@pytest.mark.parametrize(
    ("counts", "status"),
    [
        ([{"succeeded": 25, "failed": 16}], "partial"),
        ([{"succeeded": 25, "failed": 0}], "partial"),  # nothing failed, but not all ran
        ([{"succeeded": 25, "failed": None}], "partial"),  # successes only
        ([{"succeeded": 0, "failed": 32}], "failed"),
    ],
)
def test_a_run_that_stopped_early_is_partial_whatever_its_counts(counts, status):
    assert run_status(counts, stopped_early=True) == status
