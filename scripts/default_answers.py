"""What each page answers at its default for "MI355X or B200?", as a Markdown table.

    DATABASE_URL=... python scripts/default_answers.py [--model DeepSeek-R1-0528]

Reads the pages and the API through Django's test client on the database in DATABASE_URL
(load the shipped data first: `manage.py loadreference`): the headline link on the board, the
board, /answer/, /compare/ (the board's top MI355X and B200 rows, as its "Compare selected"
sends them), /costs/ (its best row of each accelerator and its "which is cheaper" box) and
GET /api/v1/compare/answer, each with only the model, scenario and precision given, for
8k/1k and 1k/1k in FP4 and FP8. Only what the pages and their downloads show is read, so the
same script describes the code before and after a change (issue 52's closing note).
"""

import argparse
import html
import os
import re
import sys
from pathlib import Path
from urllib.parse import parse_qsl

ROOT = Path(__file__).resolve().parents[1]
SKUS = ("MI355X", "B200")


def _setup() -> None:
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "apps.settings")
    import django

    django.setup()


def _answer_ttft() -> str:
    """The answer's TTFT key in seconds, as the figure registry spells it."""
    from workers import figures

    return figures.figure(figures.ANSWER_LATENCY).seconds_name


def _ttft_column() -> str:
    """The board's TTFT p99 column, as the figure registry spells it."""
    from workers import figures

    return figures.figure(figures.ANSWER_LATENCY).column


def _fmt(side: dict | None) -> str:
    """One side as the table shows it: run, level, tok/s/GPU, TTFT p99, $/Mtok."""
    if not side:
        return "—"
    if not side.get("run"):
        return side.get("why", "no point")
    parts = [f"run {side['run']}"]
    if side.get("level"):
        parts.append(str(side["level"]))
    if side.get("tok") is not None:
        parts.append(f"{side['tok']:.1f} tok/s/GPU")
    if side.get("ttft") is not None:
        parts.append(f"TTFT p99 {side['ttft']:.1f} s")
    if side.get("usd") is not None:
        parts.append(f"${side['usd']:.3f}/Mtok")
    return ", ".join(parts)


def _api_sides(body: dict) -> tuple[dict, dict, str, float | None]:
    sides = []
    for key in ("a", "b"):
        side = body[key]
        point = side.get("point") or {}
        sides.append(
            {
                "run": point.get("run_id"),
                "level": point.get("level"),
                "tok": side.get("tok_s_per_gpu"),
                "ttft": point.get(_answer_ttft()),
                "usd": side.get("usd_per_mtok"),
                "why": "no point meets",
            }
        )
    return sides[0], sides[1], body.get("slo", ""), body.get("usd_per_mtok_ratio")


def answer_page(client, model: str, scenario: str, precision: str) -> tuple:
    """/answer/ at its default question with the model, scenario and precision given: the
    page's own JSON link (the same question) is what it shows."""
    page = client.get("/answer/", {"model": model, "scenario": scenario, "precision": precision})
    found = re.search(r'href="(/api/v1/compare/answer\?[^"]+)"', page.content.decode())
    if not found:
        return None, None, "(no answer)", None
    return _api_sides(client.get(html.unescape(found.group(1))).json())


def api_default(client, model: str, scenario: str, precision: str) -> tuple:
    query = {"model": model, "scenario": scenario, "precision": precision}
    body = client.get("/api/v1/compare/answer", {**query, "a": "MI355X", "b": "B200"}).json()
    return _api_sides(body)


def headline(client) -> tuple[str, tuple] | None:
    """The headline link on the board's default page, followed to its answer."""
    page = client.get("/").content.decode()
    found = re.search(r'id="start-headline" href="/answer/\?([^"]+)"', page)
    if not found:
        return None
    params = dict(parse_qsl(html.unescape(found.group(1))))
    page = client.get("/answer/", params).content.decode()
    link = re.search(r'href="(/api/v1/compare/answer\?[^"]+)"', page)
    body = client.get(html.unescape(link.group(1))).json() if link else None
    asked = f"{params.get('scenario')} {params.get('precision')}"
    return asked, _api_sides(body) if body else (None, None, "(no answer)", None)


def board_rows(client, model: str, scenario: str, precision: str) -> dict[str, dict]:
    """The board's first row of each accelerator in this precision (its default view)."""
    rows = client.get("/", {"model": model, "scenario": scenario, "format": "json"}).json()
    found: dict[str, dict] = {}
    for row in rows:
        label = row["deployment"]
        sku = next((s for s in SKUS if f"×{s} " in label), None)
        if sku is None or f" {precision} " not in f" {label.replace('·', ' ')} ":
            continue
        ttft = row.get(_ttft_column())
        found.setdefault(
            sku,
            {
                "run": row["run_id"],
                "deployment_id": row.get("deployment_id"),
                "label": label,
                "tok": row["tok_s_per_gpu"],
                "ttft": ttft / 1000 if ttft is not None else None,
                "usd": row.get(f"usd_per_mtok_{row.get('token_basis', 'output')}"),
            },
        )
    return found


def compare_page(client, scenario: str, board: dict[str, dict]) -> tuple:
    """/compare/ with the board's two rows ticked (the first column is B200's, as ticked
    order leaves it; each ratio reads "this column over the first")."""
    from apps.runs.models import Run

    if set(board) != set(SKUS):
        return None, None, "(a side has no board row)", None
    ids = {sku: Run.objects.get(pk=board[sku]["run"]).deployment_id for sku in SKUS}
    body = client.get(
        "/compare/", {"d": [ids["MI355X"], ids["B200"]], "scenario": scenario, "format": "json"}
    ).json()
    sides = []
    for entry in body:
        sides.append(
            {
                "run": entry.get("answer_run_id"),
                "level": entry.get("answer_level"),
                "tok": entry.get("answer_tok_s_per_gpu"),
                "ttft": entry.get(f"answer_{_answer_ttft()}"),
                "usd": entry.get("answer_usd_per_mtok"),
                "why": "no point meets",
            }
        )
    slo = body[0].get("answer_slo") or body[1].get("answer_slo") or ""
    ratio = body[1].get("usd_per_mtok_ratio_vs_first")  # B200 (second) over MI355X (first)
    return sides[0], sides[1], slo, (1 / ratio if ratio else None)


def costs_page(client, model: str, scenario: str, precision: str) -> dict:
    """/costs/ at its defaults for the model and scenario: the first-ranked row of each
    accelerator in this precision (its table), its cards, and its "which is cheaper" box."""
    query = {"model": model, "scenario": scenario}
    export = client.get("/costs/export.json", query).json()
    table: dict[str, dict] = {}
    for row in export.get("rows", []):
        if row["accelerator"] in SKUS and row["quantization"] == precision and row["rank"]:
            table.setdefault(
                row["accelerator"],
                {
                    "run": row["run_id"],
                    "tok": row["tok_per_s_per_gpu_at_slo"],
                    "usd": row["usd_per_mtok"],
                    "level": row.get("throughput_at_slo"),
                },
            )
    page = client.get("/costs/", {**query, "a": "MI355X", "b": "B200", "precision": precision})
    text = page.content.decode()
    cards = dict(re.findall(r'class="cost-card" data-accelerator="([^"]+)" data-run="(\d+)"', text))
    link = re.search(r'id="cheaper-api" href="([^"]+)"', text)
    box = _api_sides(client.get(html.unescape(link.group(1))).json()) if link else None
    slo = re.search(r'id="slo-text"[^>]*>([^<]*)<', text)
    slo_text = html.unescape(slo.group(1)) if slo else ""
    return {"table": table, "cards": cards, "box": box, "slo": slo_text}


def line(where: str, page: str, result: tuple) -> None:
    a, b, slo, ratio = result
    shown = f"{ratio:.2f}×" if ratio else "—"
    print(f"| {where} | {page} | {slo} | {_fmt(a)} | {_fmt(b)} | {shown} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="DeepSeek-R1-0528")
    args = parser.parse_args()
    _setup()
    from django.test import Client
    from django.test.utils import setup_test_environment

    setup_test_environment()
    client = Client()
    print("| scenario · precision | page (default) | SLO | MI355X | B200 | MI355X ÷ B200 $/Mtok |")
    print("| --- | --- | --- | --- | --- | --- |")
    for scenario in ("8k-1k", "1k-1k"):
        for precision in ("FP4", "FP8"):
            where = f"{scenario} · {precision}"
            line(where, "/answer/", answer_page(client, args.model, scenario, precision))
            line(where, "API compare/answer", api_default(client, args.model, scenario, precision))
            board = board_rows(client, args.model, scenario, precision)
            slo = re.search(
                r'id="slo-text"[^>]*>([^<]*)<',
                client.get("/", {"model": args.model, "scenario": scenario}).content.decode(),
            )
            slo_text = html.unescape(slo.group(1)) if slo else ""
            line(
                where, "board (first row)", (board.get("MI355X"), board.get("B200"), slo_text, None)
            )
            line(where, "/compare/ (board's rows)", compare_page(client, scenario, board))
            costs = costs_page(client, args.model, scenario, precision)
            line(
                where,
                "/costs/ table (first row)",
                (costs["table"].get("MI355X"), costs["table"].get("B200"), costs["slo"], None),
            )
            cards = costs["cards"]
            line(
                where,
                "/costs/ cards (any precision)",
                ({"run": cards.get("MI355X")}, {"run": cards.get("B200")}, costs["slo"], None),
            )
            if costs["box"]:
                line(where, "/costs/ which is cheaper", costs["box"])
    found = headline(client)
    if found:
        asked, result = found
        line(asked, "headline link on /", result)


if __name__ == "__main__":
    main()
