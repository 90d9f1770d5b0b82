"""The procurement table as flat records, for its CSV and JSON downloads."""

from __future__ import annotations

from collections.abc import Sequence

from apps.costs.formulas import readings_text
from apps.costs.procurement import Row
from apps.costs.procurement_inputs import ProcurementInputs
from workers.slo import SUCCESS_NOT_STATED

EXPORT_COLUMNS = (
    "rank",
    "run_id",
    "deployment",
    "accelerator",
    "gpus",
    "engine",
    "quantization",
    "scenario",
    "provenance",
    "token_kind",
    "usd_per_gpu_hour",
    "price_source",
    "price_citation",
    "tok_per_s_per_gpu_at_slo",
    "tok_s_kind",
    "tok_s_per_gpu_range",
    "throughput_at_slo",
    "point_run_id",
    "point_level",
    "success",
    "newer_partial_run",
    "usd_per_mtok",
    "usd_per_mtok_range",
    "gpus_needed",
    "nodes_needed",
    "usd_per_month",
    "usd_per_request",
    # What the page shows as "$/Mtok served": each kind carrying the whole bill, blended 3:1.
    "usd_per_mtok_input_served",
    "usd_per_mtok_output_served",
    "usd_per_mtok_blended_served",
    "best_for_accelerator",
    "revenue_per_month",
    "margin_per_month",
    "joules_per_token",
    "slo_miss",
    "nearest_slo_met",
    "usd_per_month_at_nearest_slo",
    "notes",
)


def _price_columns(row: Row) -> dict[str, object]:
    return {
        "usd_per_gpu_hour": row.price.usd_per_gpu_hour if row.price else None,
        "price_source": f"{row.price.tier}: {row.price.source}" if row.price else "no price",
        "price_citation": row.price.citation if row.price else "",
    }


def _miss_columns(row: Row) -> dict[str, object]:
    """The SLO a row misses, and the nearest one it meets with that plan's cost."""
    relaxed_ok = row.relaxed_plan is not None and row.relaxed_plan.feasible
    return {
        "slo_miss": row.miss.describe() if row.miss else "",
        "nearest_slo_met": (
            row.miss.relaxed.describe() if row.miss and row.miss.relaxed and relaxed_ok else ""
        ),
        "usd_per_month_at_nearest_slo": (
            row.relaxed_plan.usd_per_month if relaxed_ok and row.relaxed_plan else None
        ),
    }


def export_records(rows: Sequence[Row], inputs: ProcurementInputs) -> list[dict[str, object]]:
    """One flat record per row, for CSV and JSON export; ranks count the priced rows only,
    so they run 1, 2, 3 … without a gap."""
    records: list[dict[str, object]] = []
    ranks = iter(range(1, len(rows) + 1))
    for row in rows:
        plan = row.plan
        notes = [row.problem] if row.problem else []
        notes += list(plan.warnings) if plan else []
        records.append(
            {
                "rank": next(ranks) if row.ok else None,
                "run_id": row.curve.run_id,
                "deployment": row.curve.label,
                "accelerator": row.curve.accelerator,
                "gpus": row.curve.gpus,
                "engine": row.curve.engine,
                "quantization": row.curve.quantization,
                "scenario": row.curve.scenario,
                "provenance": row.curve.provenance,
                "token_kind": inputs.token_kind.value,
                **_price_columns(row),
                "tok_per_s_per_gpu_at_slo": row.slo.tok_per_s_per_gpu if row.slo else None,
                # As the board's export: a figure of unstated kind carries both readings.
                "tok_s_kind": row.tput_kind,
                "tok_s_per_gpu_range": readings_text(row.tput_range),
                "throughput_at_slo": (row.slo.provenance if row.slo else None) or "",
                # The point the one rule chose: its run, level and success statement.
                "point_run_id": row.side.point.run_id if row.side and row.side.point else None,
                "point_level": row.side.point.level if row.side and row.side.point else None,
                "success": SUCCESS_NOT_STATED if row.success_unstated else "",
                "newer_partial_run": row.curve.partial,
                "usd_per_mtok": row.usd_per_mtok,
                "usd_per_mtok_range": readings_text(row.usd_range),
                "gpus_needed": plan.gpus if plan else None,
                "nodes_needed": plan.nodes if plan else None,
                "usd_per_month": plan.usd_per_month if plan else None,
                "usd_per_request": row.usd_per_request,
                "usd_per_mtok_input_served": row.served_input_usd_per_mtok,
                "usd_per_mtok_output_served": row.served_output_usd_per_mtok,
                "usd_per_mtok_blended_served": row.served_blended_usd_per_mtok,
                "best_for_accelerator": row.best_for_accelerator,
                "revenue_per_month": row.revenue_per_month,
                "margin_per_month": row.margin_per_month,
                "joules_per_token": row.joules_per_token,
                **_miss_columns(row),
                "notes": "; ".join(notes),
            }
        )
    return records
