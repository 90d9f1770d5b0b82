"""CSV exports never hand a spreadsheet a formula from submitted text."""

from __future__ import annotations

import csv
import io
import json

import pytest

from apps.csv_safe import safe_cell

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("text", ["=1+1", "+1", "-2+3", "@SUM(A1)", "\t=1", "\r=1"])
def test_text_that_a_spreadsheet_would_run_is_quoted(text):
    assert safe_cell(text) == "'" + text


def test_numbers_and_plain_text_are_left_alone():
    assert safe_cell(-5.0) == -5.0
    assert safe_cell("c=16") == "c=16"


def test_a_runs_csv_export_quotes_a_formula_in_a_point_label(client, auth, document):
    formula = '=HYPERLINK("http://evil.example","x")'
    document["points"][0]["label"] = formula
    answer = client.post(
        "/api/v1/runs", data=json.dumps(document), content_type="application/json", **auth
    )
    run_id = answer.json()["id"]
    body = client.get(f"/runs/{run_id}/?format=csv").content.decode()
    cells = [cell for row in csv.reader(io.StringIO(body)) for cell in row]
    assert "'" + formula in cells
    assert formula not in cells
