import pytest

from apps.runs import views
from apps.runs.services import run_ingest
from tests.factories import document

pytestmark = pytest.mark.django_db


@pytest.fixture
def three_runs(org):
    return [
        run_ingest(document=document(accelerator=acc, engine=engine), org=org).run
        for acc, engine in [("MI355X", "sglang"), ("B200", "vllm"), ("H200", "vllm")]
    ]


def test_it_narrows_by_several_accelerators_at_once(client, three_runs):
    html = client.get("/runs/?accelerator=B200&accelerator=H200").content.decode()
    assert "2 runs" in html
    assert f"#{three_runs[0].pk}<" not in html


def test_an_unknown_value_or_a_bad_date_is_explained_with_the_filters_label(client, three_runs):
    response = client.get("/runs/?engine=nope&since=yesterday")
    html = response.content.decode()
    assert response.status_code == 200
    assert "Engines: no run has nope; ignored." in html
    assert "Added from: “yesterday” is not a date" in html
    assert "3 runs" in html


def test_a_count_larger_than_a_page_comes_with_a_pager(client, three_runs, monkeypatch):
    monkeypatch.setattr(views, "PAGE_SIZE", 2)
    first = client.get("/runs/?engine=vllm&engine=sglang").content.decode()
    assert "3 runs, 1–2 shown" in first and "page 1 of 2" in first
    second = client.get("/runs/?engine=vllm&engine=sglang&page=2").content.decode()
    assert "page 2 of 2" in second, second[second.find("pager") - 20 :][:600]
    assert "engine=vllm&amp;engine=sglang&page=1" in second
