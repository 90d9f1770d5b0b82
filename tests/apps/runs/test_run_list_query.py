"""RunListQuery: the run list's query string, its problems in the filters' words, and what
each filter is when its value is ignored."""

from datetime import date

import pytest
from django.http import QueryDict

from apps.runs.forms import RANGE_IGNORED, RunListQuery
from apps.runs.services import run_ingest
from tests.factories import document

FACETS = {"accelerator": ["B200", "H200"], "engine": ["sglang", "vllm"], "quantization": ["FP8"]}


def query(text: str) -> RunListQuery:
    return RunListQuery(QueryDict(text), facets=FACETS)


def test_it_reports_a_bad_provenance_by_its_label_and_ignores_it():
    form = query("provenance=rumour&engine=vllm")
    assert form.problems() == ["Provenance: “rumour” is not one of the choices."]
    assert form.values()["provenance"] is None
    assert form.values()["engine"] == ["vllm"]


def test_it_names_every_unknown_facet_value_in_one_problem_and_keeps_the_known_ones():
    form = query("engine=nope&engine=vllm&engine=zip&accelerator=B200&accelerator=")
    assert form.problems() == ["Engines: no run has nope, zip; ignored."]
    assert form.values()["engine"] == ["vllm"]
    assert form.values()["accelerator"] == ["B200"]


def test_it_applies_good_values():
    form = query("provenance=&accelerator=H200&quantization=FP8&since=2026-01-01&until=2026-02-01")
    assert form.problems() == []
    values = form.values()
    assert values["provenance"] is None
    assert (values["accelerator"], values["quantization"]) == (["H200"], ["FP8"])
    assert (values["since"], values["until"]) == (date(2026, 1, 1), date(2026, 2, 1))


def test_it_reads_only_iso_dates_and_says_so_with_the_label():
    form = query("since=11/30/2026&until=2026-12-01")
    assert form.problems() == ["Added from: “11/30/2026” is not a date like 2026-11-30; ignored."]
    assert (form.values()["since"], form.values()["until"]) == (None, date(2026, 12, 1))


def test_it_drops_both_ends_of_a_reversed_range_with_one_message_after_the_fields():
    form = query("provenance=x&since=2026-02-01&until=2026-01-01")
    assert form.problems() == ["Provenance: “x” is not one of the choices.", RANGE_IGNORED]
    assert (form.values()["since"], form.values()["until"]) == (None, None)


@pytest.mark.django_db
def test_the_page_says_a_reversed_range_is_ignored_and_lists_every_run(client, org):
    for acc in ("B200", "H200"):
        run_ingest(document=document(accelerator=acc), org=org)
    html = client.get("/runs/?since=2099-02-01&until=2099-01-01").content.decode()
    assert "Added from is after Added until: no run can match; the range is ignored." in html
    assert "2 runs" in html
