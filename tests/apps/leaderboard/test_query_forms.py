"""The board's and /compare/'s query forms (apps/leaderboard/forms.py): one validation per
request, shared by the page, its downloads and the page cache."""

import pytest
from django.contrib.auth.models import AnonymousUser
from django.core.management import call_command
from django.http import QueryDict
from django.test import RequestFactory

from apps.catalog.models import Scenario
from apps.leaderboard import forms
from apps.leaderboard.forms import BoardChoices, BoardQuery, CompareQuery
from apps.leaderboard.views.board import _cacheable, board_query
from tests.factories import document
from tests.reviews import ingest_reviewed

CHOICES = BoardChoices(
    models=["GLM 5.2", "Qwen_3"],
    tiers=["owning_hyperscaler", "neocloud"],
    facets={
        "accelerator": ["MI355X"],
        "engine": ["sglang", "vllm"],
        "quantization": [],
        "serving": [],
    },
)


def board_query_of(query: str) -> BoardQuery:
    return BoardQuery(QueryDict(query), choices=CHOICES, scenarios=Scenario.objects.none())


def test_it_reports_a_bad_model_and_a_bad_page_with_their_labels_and_shows_the_defaults():
    query = board_query_of("page=x&model=nope")
    assert query.problems() == [
        {
            "field": "model",
            "label": "Model",
            "message": (
                "“nope” is not a choice here (choices: GLM 5.2, Qwen 3); showing the default."
            ),
        },
        {
            "field": "page",
            "label": "Page",
            "message": "“x” is not a whole number of at least 1; showing the default.",
        },
    ]
    assert query.value("model") is None and query.value("page") == 1


def test_it_shows_the_default_number_of_days_its_message_promises():
    query = board_query_of("days=-3&tier=nope")
    assert [p["label"] for p in query.problems()] == ["Price tier", "N days"]
    assert query.value("days") == forms.DEFAULTS.days
    assert query.value("tier") == "owning_hyperscaler"


def test_it_ignores_the_unknown_facet_values_it_names_and_keeps_the_known_ones():
    query = board_query_of("engine=sglang&engine=nope&engine=&engine=atom&since=soon")
    assert query.problems() == [
        {"field": "engine", "label": "Engines", "message": "no run has nope, atom; ignored."},
        {
            "field": "since",
            "label": "Runs from",
            "message": "“soon” is not a date like 2026-11-30; ignored.",
        },
    ]
    assert query.value("engine") == ("sglang",)
    assert query.value("since") is None


def test_a_digit_that_is_no_number_is_a_problem_not_an_error():
    assert board_query_of("page=²").problems()[0]["field"] == "page"


def test_switches_origins_and_formats_are_read_without_problems():
    query = board_query_of("simulated=1&unchecked=yes&all=true&origin=nope&format=xml")
    assert query.problems() == []
    assert query.value("simulated") is True and query.value("unchecked") is False
    assert query.value("all") is True
    assert query.value("origin") == () and query.value("format") == ""


def test_an_empty_value_is_the_default_not_a_problem():
    query = board_query_of("model=&sort=&page=&y=")
    assert query.problems() == []
    assert query.value("sort") == "throughput" and query.value("y") == "tput_per_gpu"


def test_compare_takes_the_first_four_distinct_ids_and_defaults_a_bad_tier():
    query = CompareQuery(
        QueryDict("d=3&d=x&d=3&d=4&d=5&d=6&d=7&tier=nope&basis=nope&format=csv"),
        tiers=["owning_hyperscaler"],
    )
    assert query.value("d") == [3, 4, 5, 6]
    assert query.value("tier") == "owning_hyperscaler"
    assert query.value("basis") == "output"
    assert query.value("format") == "csv" and query.value("scenario") is None


@pytest.fixture
def measured(org):
    call_command("loadreference", no_inferencex=True, verbosity=0)
    return [
        ingest_reviewed(document=document(engine=engine), org=org).run
        for engine in ("sglang", "vllm")
    ]


def anonymous(url: str):
    request = RequestFactory().get(url)
    request.user = AnonymousUser()
    return request


@pytest.mark.django_db
def test_the_cache_refuses_a_url_the_form_finds_invalid(measured):
    assert _cacheable(anonymous("/?model=GLM+5.2&scenario=seed-20k-1k-60&engine=sglang"))
    for url in ("/?model=nope", "/?scenario=nope", "/?page=0", "/?engine=atom"):
        request = anonymous(url)
        assert not _cacheable(request)
        assert not board_query(request, None).is_valid()  # the same form the page reads
    assert not _cacheable(anonymous("/?page=101"))  # accepted, but past the cache's bound
    assert not _cacheable(anonymous("/?since=2019-12-31"))


@pytest.mark.django_db
def test_the_page_checks_its_scenario_once_for_the_cache_and_itself(client, measured, monkeypatch):
    checks = []
    validate = forms.ScenarioSlug.validate

    def counted(field, value):
        checks.append(value)
        return validate(field, value)

    monkeypatch.setattr(forms.ScenarioSlug, "validate", counted)
    assert client.get("/?scenario=seed-20k-1k-60").status_code == 200
    assert checks == ["seed-20k-1k-60"]


@pytest.mark.django_db
def test_a_bad_model_and_page_are_both_refused_for_a_download_with_their_labels(client, measured):
    response = client.get("/?model=nope&page=x&format=json")
    assert response.status_code == 400
    assert [(e["field"], e["label"]) for e in response.json()["errors"]] == [
        ("model", "Model"),
        ("page", "Page"),
    ]
    html = client.get("/?model=nope&page=x").content.decode()
    assert "Model: “nope” is not a choice here (choices: GLM 5.2); showing the default." in html
    assert "Page: “x” is not a whole number of at least 1; showing the default." in html


@pytest.mark.django_db
def test_a_scenario_with_a_nul_byte_is_unknown_not_a_server_error(client, measured):
    response = client.get("/?scenario=seed%00")
    assert response.status_code == 200
    assert [p["field"] for p in response.context["problems"]] == ["scenario"]
    assert "is not a known scenario; showing the model" in response.content.decode()


@pytest.mark.django_db
def test_compare_with_one_id_and_junk_ids_is_a_400_as_before(client, measured):
    one = measured[0].deployment_id
    assert client.get(f"/compare/?d={one}&d=x&d=").status_code == 400
    both = client.get(f"/compare/?d={one}&d=x&d={measured[1].deployment_id}&tier=nope")
    assert both.status_code == 200 and both.context["tier"] == "owning_hyperscaler"


@pytest.mark.django_db
def test_compare_in_a_scenario_with_a_nul_byte_compares_in_the_common_one(client, measured):
    a, b = (run.deployment_id for run in measured)
    response = client.get(f"/compare/?d={a}&d={b}&scenario=seed%00")
    assert response.status_code == 200
    assert response.context["scenario"].slug == "seed-20k-1k-60"
