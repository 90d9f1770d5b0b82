"""The reference files staff extend: every entry cites a source, and a bad edit is named."""

import json

import pytest

from apps.projections import reference
from workers import accelerator_specs


def test_every_shipped_specification_cites_its_source():
    listed = reference.sources()
    assert listed["models"] and listed["accelerators"]
    assert all(entry["source"].strip() for group in listed.values() for entry in group)


def test_every_inferencex_accelerator_has_a_datasheet_entry():
    skus = {row["hardware"].upper() for row in reference.inferencex_rows()}
    assert skus <= set(reference.accelerators())


def test_a_misspelt_field_in_a_staff_edit_is_named():
    entry = dict(accelerator_specs.entries()[0], hbm_tbs=3.35)
    with pytest.raises(
        reference.ReferenceDataError, match=r"H100: unknown field\(s\) \['hbm_tbs'\]"
    ):
        reference.parse_accelerators([entry])


def test_a_missing_or_negative_figure_is_named():
    models = json.loads((reference.REFERENCE_DIR / "models.json").read_text())["models"]
    without = {k: v for k, v in models[0].items() if k != "layers"}
    with pytest.raises(reference.ReferenceDataError, match=r"missing field\(s\) \['layers'\]"):
        reference.parse_architectures([without])
    negative = dict(models[0], params_active_b=-1)
    with pytest.raises(reference.ReferenceDataError, match="params_active_b must be a positive"):
        reference.parse_architectures([negative])
