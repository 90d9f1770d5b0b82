"""The accuracy pages' query forms: ids, the margin and the A/A pair read once, an
unreadable value taken as none (or the default margin), a negative margin refused."""

import pytest
from django.http import QueryDict

from apps.accuracy.forms import (
    MARGIN_NEGATIVE,
    PICK_TWO,
    AccuracyCompareQuery,
    AccuracyIndexQuery,
)
from apps.accuracy.selectors import DEFAULT_MARGIN_POINTS


def compare(text: str) -> AccuracyCompareQuery:
    return AccuracyCompareQuery(QueryDict(text))


def test_it_applies_good_ids_a_margin_and_the_first_two_aa_ids():
    form = compare("a=3&b=4&margin=0.5&aa=x&aa=7&aa=8&aa=9")
    assert form.refusal() is None
    assert form.values() == {"a": 3, "b": 4, "margin": 0.5, "aa": [7, 8]}


@pytest.mark.parametrize("margin", ["", "abc", "nan", "inf"])
def test_an_unreadable_or_non_finite_margin_is_the_default(margin):
    form = compare(f"a=3&b=4&margin={margin}")
    assert form.refusal() is None
    assert form.values()["margin"] == DEFAULT_MARGIN_POINTS


def test_a_negative_margin_is_refused_in_the_pages_words():
    assert compare("a=3&b=4&margin=-1").refusal() == MARGIN_NEGATIVE


def test_an_id_that_is_not_ascii_digits_names_no_result():
    assert compare("a=x&b=²").values()["a"] is None
    assert compare("a=x&b=²").values()["b"] is None


def test_the_index_query_leaves_an_empty_value_to_the_newest_result():
    assert AccuracyIndexQuery(QueryDict("model=GLM 5.2&task=")).values() == {
        "model": "GLM 5.2",
        "accelerator": "",
        "task": "",
    }


@pytest.mark.django_db
def test_the_compare_page_answers_400_not_500_for_a_superscript_id(client):
    # "²".isdigit() is true but int("²") fails: the hand parsing answered 500 here.
    response = client.get("/accuracy/compare/?a=²&b=1")
    assert response.status_code == 400
    assert "Pick a baseline (A) and a candidate (B)" in response.content.decode()
    assert PICK_TWO.startswith("Pick a baseline (A)")


@pytest.mark.django_db
def test_the_compare_page_refuses_a_negative_margin_before_looking_for_results(client):
    response = client.get("/accuracy/compare/?a=1&b=2&margin=-0.5")
    assert response.status_code == 400
    assert MARGIN_NEGATIVE in response.content.decode()
