"""RegressionListQuery: the change-point list's filters, a value the page cannot mean
reported by its label and ignored, the others applied as sent."""

from django.http import QueryDict

from apps.regressions import selectors
from apps.regressions.forms import RegressionListQuery


def query(text: str) -> RegressionListQuery:
    return RegressionListQuery(QueryDict(text))


def test_it_reports_each_bad_value_by_its_label_in_the_filters_order_and_ignores_it():
    form = query("deployment=seven&metric=speed&direction=sideways&model=GLM 5.2")
    assert form.problems() == [
        "Direction: “sideways” is not one of the choices; ignored.",
        "Metric: “speed” is not one of the choices; ignored.",
        "Deployment: “seven” is not a number; ignored.",
    ]
    assert selectors.Filters(**form.values()) == selectors.Filters(model="GLM 5.2")


def test_it_applies_good_values_as_sent():
    form = query("direction=regression&metric=ttft_p99&deployment=12&scenario=chat &engine=vllm")
    assert form.problems() == []
    assert selectors.Filters(**form.values()) == selectors.Filters(
        direction="regression", metric="ttft_p99", deployment=12, scenario="chat ", engine="vllm"
    )


def test_a_deployment_is_a_whole_number_as_int_reads_it():
    # Django's IntegerField would take "5.0" as 5; the page never did.
    assert query("deployment=5.0").problems() == ["Deployment: “5.0” is not a number; ignored."]
    assert query("deployment=5.0").values()["deployment"] is None
    assert query("deployment=").problems() == []
