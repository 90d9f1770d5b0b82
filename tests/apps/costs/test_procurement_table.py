"""/costs/ as a buyer reads it: it opens on a model that has rows, one row per deployment (its
latest complete sweep), shows the cheapest deployment of each configuration first (the rest on
demand, by HTMX or a plain link), filters by engine and speculative decoding, and labels rows
so that an MTP row never reads like one without."""

import re

import pytest

from apps.costs.procurement_table import PAGE_ROWS
from tests.factories import document
from tests.reviews import ingest_reviewed

pytestmark = pytest.mark.django_db
ROW = re.compile(r'<tr class="row-main" data-run="(\d+)"')


def ingest(org, *, public=True, spec=None, **facts):
    doc = document(**facts)
    if spec:
        doc["deployment"]["speculative"] = {"method": spec, "draft_tokens": 3}
    return ingest_reviewed(document=doc, org=org, is_public=public).run


def shown(html: str) -> list[int]:
    return [int(pk) for pk in ROW.findall(html)]


@pytest.fixture
def runs(org):
    # No reference data: its published GLM 5.2 figures would join these rows.
    made = {
        # Two deployments of one configuration (TP8 and TP4): only the cheaper is shown at first.
        "sglang": [ingest(org, engine="sglang"), ingest(org, engine="sglang", tp=4)],
        "sglang-mtp": [ingest(org, engine="sglang", spec="mtp")],
        "vllm": [ingest(org, engine="vllm")],
        "b200": [ingest(org, accelerator="B200", quantization="FP8")],
    }
    # Another model with fewer runs: not the one the page opens on.
    ingest(org, model="Tiny", engine="vllm")
    return made


def test_it_opens_on_the_model_with_the_most_priceable_runs_not_an_empty_table(client, runs):
    html = client.get("/costs/").content.decode()
    assert "Load the reference data" not in html
    assert "of GLM 5.2" in html
    assert shown(html), "rows of the chosen model"
    assert "<option selected>GLM 5.2</option>" in html
    # "All models" stays a choice, and a permalink keeps it (model= is always carried).
    every = client.get("/costs/?model=").content.decode()
    assert "of all models" in every
    assert 'id="permalink" href="/costs/?model=&amp;' in every


def test_it_shows_the_cheapest_deployment_of_each_configuration_and_the_rest_on_demand(
    client, runs
):
    html = client.get("/costs/?model=GLM 5.2").content.decode()
    rows = shown(html)
    # sglang, sglang+MTP, vllm on MI355X and FP8 sglang on B200: four configurations.
    assert len(rows) == 4
    assert len({pk for pk in rows} & {r.pk for r in runs["sglang"]}) == 1
    link = re.search(r'<a id="show-all" href="([^"]+)" hx-get="([^"]+)"', html)
    assert link and link.group(1) == link.group(2) and "show=all" in link.group(1)
    everything = client.get(link.group(1).replace("&amp;", "&")).content.decode()
    assert sorted(shown(everything)) == sorted(r.pk for made in runs.values() for r in made)
    # Asked by HTMX, the same link answers only the results partial.
    partial = client.get(link.group(1).replace("&amp;", "&"), HTTP_HX_REQUEST="true")
    assert partial.content.decode().lstrip().startswith('<section id="results"')


def test_every_row_is_paged_when_all_are_asked(client, org):
    for version in range(PAGE_ROWS + 1):  # a deployment each: its engine version differs
        ingest(org, engine_version=f"0.5.{version}")
    first = client.get("/costs/?model=GLM 5.2&show=all").content.decode()
    second = client.get("/costs/?model=GLM 5.2&show=all&page=2").content.decode()
    assert len(shown(first)) == PAGE_ROWS and len(shown(second)) == 1
    assert "page 1 of 2" in first and 'rel="next"' in first and 'rel="prev"' in second
    assert set(shown(first)).isdisjoint(shown(second))


def test_the_engine_and_spec_filters_keep_only_their_rows(client, runs):
    mtp = shown(client.get("/costs/?model=GLM 5.2&spec=mtp&show=all").content.decode())
    assert mtp == [runs["sglang-mtp"][0].pk]
    plain = shown(client.get("/costs/?model=GLM 5.2&spec=none&show=all").content.decode())
    assert runs["sglang-mtp"][0].pk not in plain and len(plain) == 4
    vllm = shown(client.get("/costs/?model=GLM 5.2&engine=vllm&show=all").content.decode())
    assert vllm == [runs["vllm"][0].pk]
    none = client.get("/costs/?model=GLM 5.2&engine=trt&spec=mtp").content.decode()
    assert "matches the engine and speculative-decoding filters" in none
    # The filters are the page's state: the permalink carries them.
    assert "engine=trt" in none and "spec=mtp" in none.split('id="permalink"')[1][:400]


def test_a_row_names_its_engine_and_speculative_decoding(client, runs):
    html = client.get("/costs/?model=GLM 5.2&show=all").content.decode()
    labels = re.findall(r'class="deployment-name"><a href="[^"]+">([^<]+)</a>', html)
    mtp = [label for label in labels if "MTP" in label]
    assert mtp == ["GLM 5.2 · 8×MI355X · sglang 0.5.23 · MXFP4 · TP8 · spec MTP, 3 draft tokens"]
    assert all("sglang" in label or "vllm" in label for label in labels)
    assert len(set(labels)) == 5  # every deployment apart


def test_a_swap_to_another_model_refreshes_the_engine_and_spec_lists_out_of_band(client, runs):
    def options(html: str, name: str) -> list[str]:
        select = re.search(rf'<select name="{name}" id="{name}-filter"([^>]*)>(.*?)</select>', html)
        assert select, name
        return [o for o in re.findall(r"<option[^>]*>([^<]*)</option>", select.group(2))]

    page = client.get("/costs/?model=GLM 5.2").content.decode()
    assert "hx-swap-oob" not in page  # the whole page renders the lists in place
    assert options(page, "engine") == ["— any —", "sglang", "vllm"]
    swapped = client.get("/costs/?model=Tiny", HTTP_HX_REQUEST="true").content.decode()
    assert swapped.lstrip().startswith('<section id="results"')
    for name in ("engine", "spec"):
        assert f'<select name="{name}" id="{name}-filter" hx-swap-oob="true">' in swapped
    assert options(swapped, "engine") == ["— any —", "vllm"]  # Tiny's only engine
    assert options(swapped, "spec") == ["— any —", "none"]
