"""One colour per accelerator on every chart: two accelerators in one chart differ, and an
accelerator keeps its colour from one page to the next."""

import pytest
from django.core.management import call_command

from apps.charts import PALETTE, accelerator_colour, accelerator_colours
from tests.factories import document
from tests.reviews import ingest_reviewed

pytestmark = pytest.mark.django_db
VIEW = "model=GLM 5.2&scenario=seed-20k-1k-60&tier=owning_hyperscaler"


def colours_by_accelerator(figure: dict, skus: tuple[str, ...]) -> dict[str, set[str]]:
    """The marker colours of the traces naming each accelerator."""
    found: dict[str, set[str]] = {sku: set() for sku in skus}
    for trace in figure["data"]:
        for sku in skus:
            if sku in trace["name"]:
                found[sku].add(trace["marker"]["color"])
    return found


def test_two_accelerators_differ_and_keep_their_colour_across_pages(client, org):
    call_command("loadreference", no_inferencex=True, verbosity=0)
    # MI355X and B200 hashed to one colour before the map (issue 42).
    ingest_reviewed(document=document(accelerator="MI355X", gpus=4, tp=4), org=org)
    ingest_reviewed(document=document(accelerator="B200", quantization="FP8"), org=org)
    skus = ("MI355X", "B200")
    board = client.get(f"/?{VIEW}").context["pareto_interactivity"]
    costs = client.get(f"/costs/?{VIEW}&ttft_s_max=60").context["chart"]
    on_board, on_costs = colours_by_accelerator(board, skus), colours_by_accelerator(costs, skus)
    for sku in skus:
        assert on_board[sku] == on_costs[sku] == {accelerator_colour(sku)}, (sku, board, costs)
    assert on_board["MI355X"] != on_board["B200"]


def test_every_listed_accelerator_has_a_colour_of_its_own():
    colours = list(accelerator_colours().values())
    assert len(set(colours)) == len(colours) and set(colours) <= set(PALETTE)
    # An accelerator outside the map never takes a listed one's colour, on any page.
    assert accelerator_colour("CPU") not in colours
    assert accelerator_colour("cpu") == accelerator_colour("CPU")
