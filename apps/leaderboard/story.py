"""The GLM 5.2 story from the published figures: arithmetic on the reference data, and the
seed's claim as the claims ledger checks it (apps/claims: its verdict under each tier)."""

from collections.abc import Sequence
from typing import Any

from apps.claims.verdicts import PricedVerdict
from apps.costs.formulas import TokenKind, deployment_usd_per_mtok, unstated_readings

TIMELINE = [
    ("wafer-glm52-mi355x-tp8", "TP8"),
    ("wafer-glm52-mi355x-tp4dp2", "TP4×DP2"),
    ("wafer-glm52-mi355x-tp4dp2-fp4kernel", "TP4×DP2 + hand-picked FP4 MoE kernel"),
]


def _tier_row(
    verdict: PricedVerdict, final: dict[str, Any], claimed_cost_ratio: float
) -> dict[str, Any]:
    """The seed's claim at one reference tier: its prices, verdict and $/Mtok."""
    mi = verdict.usd_a
    return {
        "tier": verdict.tier,
        "price_set": verdict.price_set,
        "mi355x": verdict.usd_a,
        "b200": verdict.usd_b,
        "cost_ratio": verdict.cost_ratio,
        "holds": verdict.holds,
        # the throughput ratio at which "under half" would hold at these prices
        "throughput_ratio_needed": (verdict.usd_a / verdict.usd_b) / claimed_cost_ratio,
        "mtok": deployment_usd_per_mtok(mi, final["gpus"], final["node_throughput_tok_s"]),
        # The 2,626 tok/s does not say which tokens it counts: $/Mtok of output tokens under
        # both readings (as output; as total of a 20k/1k request).
        "mtok_output_readings": sorted(
            deployment_usd_per_mtok(mi, final["gpus"], reading)
            for reading in unstated_readings(
                final["node_throughput_tok_s"],
                TokenKind.OUTPUT,
                input_tokens=final["scenario"]["input_tokens"],
                output_tokens=final["scenario"]["output_tokens"],
            )
        ),
    }


def glm_story(
    *,
    figures: dict[str, dict[str, Any]],
    verdicts: Sequence[PricedVerdict],
    throughput_ratio: float,
    claimed_cost_ratio: float,
) -> dict[str, Any]:
    """The story's figures; `verdicts` are the ledger's for the seed's claim ("about 80% of
    B200's throughput at under half the cost"), one per reference tier, never the story's own."""
    values = [figures[key]["node_throughput_tok_s"] for key, _ in TIMELINE]
    steps = [
        {"label": label, "tok_s": value, "gain": (value / values[i - 1] - 1) if i else None}
        for i, ((_, label), value) in enumerate(zip(TIMELINE, values, strict=True))
    ]
    final = figures[TIMELINE[-1][0]]
    tiers = [_tier_row(verdict, final, claimed_cost_ratio) for verdict in verdicts]
    ratios = [t["cost_ratio"] for t in tiers]
    semi = figures.get("semianalysis-glm5-interactive", {}).get("usd_per_mtok", {})
    accuracy = figures.get("wafer-glm52-accuracy", {})
    return {
        "steps": steps,
        "timeline_labels": [s["label"] for s in steps],
        "timeline_values": values,
        "overall_gain": values[-1] / values[0] - 1,
        "final": final,
        "tiers": tiers,
        # The range the verdict and the text quote, from the table itself (rounded as shown).
        "cost_ratio_low": min(ratios) if ratios else None,
        "cost_ratio_high": max(ratios) if ratios else None,
        "claim_holds_anywhere": any(t["holds"] for t in tiers),
        "throughput_ratio": throughput_ratio,
        "claimed_cost_ratio": claimed_cost_ratio,
        "semianalysis": semi,
        "semianalysis_ratio": semi["MI355X"] / semi["B200"] if semi else None,
        "accuracy": accuracy,
        "accuracy_delta_points": (accuracy["mxfp4"] - accuracy["bf16"]) * 100 if accuracy else None,
    }


# Which cookbook cells stand beside which: the MI355X cell first, each cell a column.
COOKBOOK_COLUMNS = (("MI355X", "FP8"), ("B200", "FP8"), ("B200", "NVFP4"))
STRATEGIES = ("low-latency", "balanced", "high-throughput")


def b200_published(
    *, figures: dict[str, dict[str, Any]], cells: list[dict[str, Any]]
) -> dict[str, Any]:
    """B200's published GLM 5.2 figures beside MI355X's, each with what differs: the
    write-ups' figure on the seed's workload, and sglang's cookbook cells on 8k/1k. Sides and
    facts only; which side wins at an SLO is the comparison service's to say."""
    writeup = figures.get("wafer-glm52-b200-writeups")
    final = figures[TIMELINE[-1][0]]
    rows = []
    for strategy in STRATEGIES:
        sides = {(c["sku"], c["quantization"]): c for c in cells if c["strategy"] == strategy}
        columns = [sides.get(key) for key in COOKBOOK_COLUMNS]
        present = [c for c in columns if c]
        if not present:
            continue
        levels = sorted({p["concurrency"] for c in present for p in c["points"]})
        differs = [
            f"{name}: " + " / ".join(f"{c['sku']} {c['quantization']} {c[key]}" for c in present)
            for name, key in (
                ("engine", "engine"),
                ("speculative decoding", "speculative"),
                ("parallelism", "parallelism"),
            )
            if len({c[key] for c in present}) > 1
        ]
        rows.append(
            {
                "strategy": strategy,
                "columns": columns,
                "levels": [
                    {
                        "concurrency": level,
                        "cells": [
                            next((p for p in c["points"] if p["concurrency"] == level), None)
                            if c
                            else None
                            for c in columns
                        ],
                    }
                    for level in levels
                ],
                "differs": differs,
                "notes": [f"{c['sku']} {c['quantization']}: {c['notes']}" for c in present],
            }
        )
    return {
        "writeup": writeup,
        # The write-ups' own arithmetic (2,626 of 3,192), against the post's "about 80%".
        "writeup_ratio": final["node_throughput_tok_s"] / writeup["reported_node_throughput_tok_s"]
        if writeup
        else None,
        "cookbook": rows,
        "cookbook_url": next((c["url"] for c in cells if c["url"]), ""),
        "cookbook_columns": [f"{sku} {quant}" for sku, quant in COOKBOOK_COLUMNS],
    }
