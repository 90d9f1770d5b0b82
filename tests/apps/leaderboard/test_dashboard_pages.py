import pytest
from django.core.management import call_command
from django.test import override_settings

from apps.charts import series_style
from apps.leaderboard.charts import SERIES, pareto_figure
from tests.factories import document
from tests.reviews import ingest_reviewed

pytestmark = pytest.mark.django_db


@pytest.fixture
def two(org):
    call_command("loadreference", no_inferencex=True, verbosity=0)
    return [
        ingest_reviewed(document=document(engine=engine), org=org).run
        for engine in ("sglang", "vllm")
    ]


def test_an_unknown_filter_value_is_named_on_the_page_and_refused_for_downloads(client, two):
    html = client.get("/?tier=nope&days=-3").content.decode()
    assert "Price tier: “nope” is not a choice here" in html
    assert "N days: “-3” is not a whole number" in html
    response = client.get("/?tier=nope&format=csv")
    assert response.status_code == 400
    assert response.json()["errors"][0] == {
        "field": "tier",
        "label": "Price tier",
        "message": response.json()["errors"][0]["message"],
    }


def test_series_follow_the_chosen_dimension_and_keep_their_colour(client, two):
    response = client.get("/?scenario=seed-20k-1k-60&series=engine")
    figure = response.context["pareto_interactivity"]
    names = [trace["name"] for trace in figure["data"]]
    assert names == ["sglang", "vllm"]
    assert figure["data"][0]["marker"]["color"] == series_style("sglang")["marker"]["color"]
    assert "Interactivity (tok/s/user, p50)" in figure["data"][0]["hovertemplate"]
    assert set(SERIES) >= {"engine", "accelerator", "precision", "parallelism"}


def test_a_chart_with_nothing_to_draw_says_why_in_words():
    figure = pareto_figure(
        [{"group": "B200 FP8", "run_id": 1, "config": "a", "tput_per_gpu": 50}],
        x="interactivity",
        y="tput_per_gpu",
        optimal_only=True,
        title="t",
    )
    assert figure["data"] == []
    assert "no run here reports interactivity" in figure["empty"]


def test_the_compare_page_adds_and_names_lines_like_its_columns(client, two):
    a, b = (run.deployment_id for run in two)
    response = client.get(f"/compare/?d={a}&d={b}")
    html = response.content.decode()
    names = [trace["name"] for trace in response.context["chart"]["data"]]
    assert names and all(f">{name}</a>" in html for name in names)
    assert all(trace["mode"] == "lines+markers" for trace in response.context["chart"]["data"])
    assert f'aria-label="Remove {names[0]}' in html or f'aria-label="Remove {names[1]}' in html


def test_one_deployment_is_a_400_with_a_picker_to_add_another(client, two):
    response = client.get(f"/compare/?d={two[0].deployment_id}")
    assert response.status_code == 400
    html = response.content.decode()
    assert 'id="add-deployment"' in html and "edit" not in html.lower().split("<main")[1][:400]


def test_the_embed_views_draw_one_chart_without_the_site_navigation(client, two):
    a, b = (run.deployment_id for run in two)
    for url in ("/embed/board/?scenario=seed-20k-1k-60", f"/embed/compare/?d={a}&d={b}"):
        response = client.get(url)
        html = response.content.decode()
        assert response.status_code == 200
        assert 'aria-label="Site"' not in html and "chart-embed" in html
        assert "X-Frame-Options" not in response.headers


@override_settings(DEBUG=False)
def test_a_missing_page_keeps_the_site_navigation(client):
    response = client.get("/no-such-page/")
    assert response.status_code == 404
    html = response.content.decode()
    assert "Page not found" in html and 'aria-label="Site"' in html


def test_the_board_takes_several_engines_and_a_date_range(client, org, two):
    ingest_reviewed(document=document(engine="atom", accelerator="B200"), org=org)
    both = client.get("/?scenario=seed-20k-1k-60&engine=sglang&engine=vllm").context["page"]
    assert sorted(row.label.split()[1] for row in both.rows if row.provenance == "measured")
    assert {r.run_id for r in both.rows} >= {run.pk for run in two}
    assert all("atom" not in row.label for row in both.rows)
    later = client.get("/?scenario=seed-20k-1k-60&since=2999-01-01").context["page"]
    assert later.rows == []
    html = client.get("/?engine=nope&since=soon").content.decode()
    assert "Engines: no run has nope; ignored." in html and "Runs from: “soon”" in html
