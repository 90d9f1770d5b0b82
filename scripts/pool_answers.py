"""The answer to "MI355X or B200?" for DeepSeek-R1-0528 8k/1k, FP4 and FP8, any engine, any
speculation, any serving, at 30 and 50 tok/s/user, output basis (issue 51's closing note).

    DATABASE_URL=... python scripts/pool_answers.py

Reads GET /api/v1/compare/answer through Django's test client on the database in DATABASE_URL
(load the shipped data first: `manage.py loadreference`), so the same script describes the code
before and after a change.
"""

import json
import os
import sys
from itertools import product
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "apps.settings")
    import django

    django.setup()
    from django.test import Client

    client = Client()
    print(
        "| SLO tier | precision | interactivity ≥ | MI355X | B200 "
        "| tok/s/GPU ratio A/B | $/Mtok ratio A/B |"
    )
    print("|---|---|---|---|---|---|---|")
    for slo, precision, floor in product(("", "throughput"), ("fp4", "fp8"), (30, 50)):
        # The default tier also bounds TTFT p99; the throughput tier bounds nothing but
        # the interactivity floor asked (the question as issue 51 asked it).
        query = (
            "/api/v1/compare/answer?model=DeepSeek-R1-0528&scenario=8k-1k"
            f"&precision={precision}&a=MI355X&b=B200&engine=any&spec=any"
            f"&interactivity_min={floor}&basis=output" + (f"&slo={slo}" if slo else "")
        )
        response = client.get(query, HTTP_HOST="localhost")
        body = response.json()
        if response.status_code != 200:
            print(f"| {precision} | {floor} | {response.status_code} {json.dumps(body)[:200]} |")
            continue
        cells = [_side(body.get(k) or {}) for k in ("a", "b")]
        ratio, usd = body.get("tok_s_ratio"), body.get("usd_per_mtok_ratio")
        print(
            f"| {slo or 'default'} | {precision.upper()} | {floor} | {cells[0]} | {cells[1]} "
            f"| {_num(ratio, 3)} | {_num(usd, 3)} |"
        )


def _num(value: float | None, places: int) -> str:
    return "—" if value is None else f"{value:,.{places}f}"


def _side(side: dict) -> str:
    """tok/s/GPU, $/Mtok, the point (run, level) and its deployment."""
    point = side.get("point") or {}
    if not point:
        return side.get("reason") or "no point"
    return (
        f"{_num(side.get('tok_s_per_gpu'), 1)} tok/s/GPU, ${_num(side.get('usd_per_mtok'), 3)}"
        f"/Mtok (run {point.get('run_id')} {point.get('level')}: {point.get('deployment')}, "
        f"{(point.get('facts') or {}).get('serving')})"
    )


if __name__ == "__main__":
    main()
