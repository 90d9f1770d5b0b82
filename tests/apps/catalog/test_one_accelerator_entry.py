"""An accelerator is one entry of data (issue 57): added to a copy of the one accelerators file
(workers/accelerator_specs.py) and nothing else, it is in the catalog, on the board's filter,
in the price book, on /costs/, in the projections' datasheets, in the ceiling check, in the
importers' SKU names and on the charts in its own colour."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from apps.catalog.models import Accelerator
from apps.catalog.services import reference_accelerators_load
from apps.charts import accelerator_colour
from apps.costs.selectors import price_book
from apps.projections import reference as projections
from tests.factories import document, point
from tests.reviews import ingest_reviewed
from workers import accelerator_specs, ceiling
from workers.importers.accelerators import accelerator_sku

pytestmark = pytest.mark.django_db

SKU = "ZX1"


def with_one_more(copy: Path) -> dict[str, Any]:
    """The shipped file with one accelerator added, written to `copy`; the new entry."""
    data = json.loads(accelerator_specs.SHIPPED_FILE.read_text())
    newest = max(data["price_sets"], key=lambda s: s["in_force_from"])["name"]
    spare = "#E73F74"  # a palette colour no shipped accelerator has
    assert spare not in {e.get("colour") for e in data["accelerators"]}
    entry = {
        "sku": SKU,
        "vendor": "Acme",
        "family": "acme-one",
        "hbm_gb": 96,
        "hbm_tb_s": 4.0,
        "tflops": {"bf16": 1000, "fp8": 2000},
        "interconnect_gb_s": 800,
        "board_power_w": 900,
        "colour": spare,
        "source": "Acme ZX1 data sheet (a test's accelerator)",
        "prices": {newest: {"owning_hyperscaler": 1.11, "rental_3yr": 2.22, "all_in_kw": 1.5}},
    }
    data["accelerators"].append(entry)
    copy.write_text(json.dumps(data))
    return entry


def test_an_accelerator_added_to_the_file_is_everywhere_with_no_other_edit(
    tmp_path, monkeypatch, client
):
    # The shipped file does not know it: nothing below can come from elsewhere.
    assert SKU not in price_book() and SKU not in projections.accelerators()
    assert accelerator_sku(f"NVIDIA {SKU} 96GB") == f"NVIDIA {SKU} 96GB"

    entry = with_one_more(tmp_path / "accelerators.json")
    monkeypatch.setenv(accelerator_specs.FILE_VARIABLE, str(tmp_path / "accelerators.json"))

    # The catalog: loadreference's upsert makes its row from the entry.
    reference_accelerators_load()
    row = Accelerator.objects.get(sku=SKU)
    assert (row.vendor, row.hbm_gb, row.board_power_w) == ("Acme", 96, 900)
    assert row.peak_tflops == {"bf16": 1000, "fp8": 2000} and "Acme ZX1" in row.source

    # The price book, and so /costs/ and every money page.
    book = price_book()
    assert book[SKU].usd_per_gpu_hour == {"owning_hyperscaler": 1.11, "rental_3yr": 2.22}
    assert book[SKU].all_in_kw == 1.5
    assert book.price_set.name in book[SKU].citations["owning_hyperscaler"]
    costs = client.get("/costs/")
    assert SKU in costs.context["all_accelerators"]
    assert f"<option>{SKU}</option>" in costs.content.decode()
    listed = {a["sku"]: a for a in client.get("/api/v1/accelerators").json()}
    assert listed[SKU]["vendor"] == "Acme"
    assert {p["tier"]: p["usd_per_gpu_hour"] for p in listed[SKU]["prices"]} == {
        "owning_hyperscaler": 1.11,
        "rental_3yr": 2.22,
    }

    # The projections' datasheets and the physical ceiling read the same entry.
    sheet = projections.accelerators()[SKU]
    assert (sheet.hbm_gb, sheet.hbm_tb_s, sheet.dense_flops("fp8")) == (96, 4.0, 2000e12)
    assert ceiling.shipped_specs().chips[SKU].hbm_gb == 96

    # The importers store it under its SKU, and charts draw it in its colour.
    assert accelerator_sku(f"NVIDIA {SKU} 96GB") == SKU
    assert accelerator_colour(SKU) == entry["colour"]

    # The board's filter lists the accelerators of the runs a visitor may see: a run measured
    # on it puts it there, priced at its entry's price.
    points = [point(16, output_tok_s=2400, ttft_p99_ms=2000, interactivity=40)]
    run = ingest_reviewed(
        document=document(accelerator=SKU, preset="8k-1k", points=points), org=None
    ).run
    assert run.deployment.accelerator_id == row.pk
    board = client.get("/", {"scenario": "8k-1k"})
    assert SKU in board.context["facets"]["accelerator"]
    assert f'value="{SKU}"' in board.content.decode()
    rows = client.get("/", {"scenario": "8k-1k", "format": "json"}).json()
    assert [(r["run_id"], r["usd_per_gpu_hour"]) for r in rows] == [(run.pk, 1.11)]
