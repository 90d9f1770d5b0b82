from hypothesis import given
from hypothesis import strategies as st

from apps.leaderboard.charts import pareto_figure, pareto_optimal

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
