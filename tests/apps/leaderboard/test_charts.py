from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from apps.leaderboard.charts import cdf_figure, history_figure, pareto_figure, pareto_optimal

points = st.lists(
    st.fixed_dictionaries({"x": st.integers(0, 20), "y": st.integers(0, 20)}), max_size=25
)


def dominated(p, others, x_higher, y_higher) -> bool:
    def at_least(a, b, higher):
        return a >= b if higher else a <= b

    return any(
        at_least(q["x"], p["x"], x_higher)
        and at_least(q["y"], p["y"], y_higher)
        and (q["x"], q["y"]) != (p["x"], p["y"])
        for q in others
    )


@given(points, st.booleans(), st.booleans())
def test_the_front_is_exactly_the_undominated_points(pts, x_higher, y_higher):
    front = pareto_optimal(pts, "x", "y", x_higher, y_higher)
    expected = {(p["x"], p["y"]) for p in pts if not dominated(p, pts, x_higher, y_higher)}
    assert {(p["x"], p["y"]) for p in front} == expected
    assert [p["x"] for p in front] == sorted(p["x"] for p in front)


def test_each_accelerator_and_precision_gets_its_own_front_linking_to_its_runs():
    pts = [
        {"group": "B200 FP8", "run_id": 1, "config": "a", "interactivity": 100, "tput_per_gpu": 50},
        {"group": "B200 FP8", "run_id": 2, "config": "b", "interactivity": 50, "tput_per_gpu": 40},
        {
            "group": "MI355X MXFP4",
            "run_id": 3,
            "config": "c",
            "interactivity": 20,
            "tput_per_gpu": 90,
        },
    ]
    figure = pareto_figure(pts, x="interactivity", y="tput_per_gpu", optimal_only=True, title="t")
    traces = {t["name"]: t for t in figure["data"]}
    assert traces["B200 FP8"]["customdata"] == ["/runs/1/"]  # run 2 is dominated
    assert traces["MI355X MXFP4"]["y"] == [90]
    every = pareto_figure(pts, x="interactivity", y="tput_per_gpu", optimal_only=False, title="t")
    assert sum(len(t["x"]) for t in every["data"]) == 3


def test_a_chart_of_one_series_still_names_it_in_a_legend():
    one = [{"group": "B200 FP8", "run_id": 1, "config": "a", "interactivity": 9, "tput_per_gpu": 5}]
    figure = pareto_figure(one, x="interactivity", y="tput_per_gpu", optimal_only=True, title="t")
    assert len(figure["data"]) == 1 and figure["layout"]["showlegend"] is True
    assert figure["data"][0]["marker"]["size"] >= 8


def test_runs_seconds_apart_get_a_history_axis_of_days_not_sub_second_ticks():
    start = datetime(2026, 11, 29, 13, 49, 46, tzinfo=UTC)
    history = [
        {
            "scenario": "s",
            "when": (start + timedelta(seconds=k)).isoformat(),
            "tput_per_gpu": 100.0 + k,
            "run_id": k,
            "engine_version": "1",
            "regression": False,
        }
        for k in range(3)
    ]
    axis = history_figure(history, title="t")["layout"]["xaxis"]
    assert axis["tickformat"] == "%Y-%m-%d"
    low, high = (datetime.fromisoformat(end) for end in axis["range"])
    assert high - low == timedelta(days=7) and low < start < high


def test_a_long_history_keeps_plotlys_own_range():
    history = [
        {
            "scenario": "s",
            "when": f"2026-0{m}-01T00:00:00+00:00",
            "tput_per_gpu": 1.0,
            "run_id": m,
            "engine_version": "1",
            "regression": False,
        }
        for m in (1, 5)
    ]
    assert "range" not in history_figure(history, title="t")["layout"]["xaxis"]


def test_latency_distributions_of_different_scales_share_a_log_axis():
    figure = cdf_figure(
        {"TTFT c=1 (ms)": [300.0, 420.0], "E2EL c=1 (ms)": [7000.0, 9100.0]},
        title="t",
        x_title="ms",
    )
    assert figure["layout"]["xaxis"]["type"] == "log"
    zero = cdf_figure({"TTFT c=1 (ms)": [0.0, 3.0]}, title="t", x_title="ms")
    assert zero["layout"]["xaxis"]["type"] == "linear"  # a zero has no place on a log axis
