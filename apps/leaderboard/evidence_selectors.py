"""Like-for-like evidence the board's headline and the GLM story cite: paired rows across
accelerators, and the published and measured runs of a model.
"""

from collections import Counter
from dataclasses import dataclass

from apps.accounts.models import Organization
from apps.catalog.models import Deployment
from apps.leaderboard.selectors import Board, Row, leaderboard_rows
from apps.runs.models import Run
from apps.runs.selectors import runs_visible
from workers.figures import per_gpu


@dataclass(frozen=True)
class Pair:
    """Two leaderboard rows set side by side like for like, and what still differs."""

    a: Row
    b: Row
    differs: list[str]


def like_for_like_pairs(
    *, org: Organization | None, model: str, scenario: str, skus: tuple[str, str]
) -> list[Pair]:
    """Per weight precision both accelerators have, the fastest row of each with that model
    and scenario, preferring pairs that also share serving (aggregated or not) and engine:
    the comparison that leaves the fewest differences to explain. Most rows first."""
    # Evidence for a published claim, read beside it: checked or not, each side says its
    # origin and, where it fails the board's rules, "not checked" (story.html).
    board = Board(model=model, scenario=scenario, accelerators=skus, include_unchecked=True)
    page = leaderboard_rows(board=board, org=org)
    serving = dict(
        Deployment.objects.filter(pk__in=[r.deployment_id for r in page.ranked]).values_list(
            "pk", "disaggregated"
        )
    )
    firsts, seconds = (
        [r for r in page.ranked if r.accelerator == sku and r.tput_per_gpu] for sku in skus
    )
    best: dict[str, tuple[tuple, Pair]] = {}
    for a in firsts:
        for b in seconds:
            if a.quantization != b.quantization:
                continue
            differs = [
                name
                for name, same in (
                    ("serving", serving[a.deployment_id] == serving[b.deployment_id]),
                    ("engine", a.engine == b.engine),
                    ("parallelism", a.parallelism == b.parallelism),
                    ("speculative decoding", a.speculative == b.speculative),
                )
                if not same
            ]
            score = (
                "serving" not in differs,
                "engine" not in differs,
                -len(differs),
                min(a.tput_per_gpu or 0.0, b.tput_per_gpu or 0.0),
            )
            held = best.get(a.quantization)
            if held is None or score > held[0]:
                best[a.quantization] = (score, Pair(a=a, b=b, differs=differs))
    rows = Counter(r.quantization for r in firsts + seconds)
    return [pair for quant, (_, pair) in sorted(best.items(), key=lambda kv: -rows[kv[0]])]


def published_runs(*, model: str, org: Organization | None) -> list[Run]:
    """The published-figure runs of a model, for a story to link."""
    return list(
        runs_visible(org=org)
        .filter(deployment__model__name=model, provenance=Run.Provenance.PUBLISHED)
        .select_related("deployment__accelerator")
        .order_by("id")
    )


def measured_runs_count(*, model: str, sku: str, org: Organization | None) -> int:
    """Runs of a model on an accelerator that someone measured or imported (not a cited
    figure, not simulated)."""
    return (
        runs_visible(org=org)
        .filter(deployment__model__name__iexact=model, deployment__accelerator__sku__iexact=sku)
        .filter(provenance__in=(Run.Provenance.MEASURED, Run.Provenance.IMPORTED))
        .count()
    )


def published_cells(*, model: str, source_key: str, org: Organization | None) -> list[dict]:
    """The published runs of a model from one source (environment's `source_key`), each with
    the facts a side states and its points as the source gave them (total tok/s per GPU,
    P50 TTFT and TPOT), for a story to set side by side."""
    runs = (
        runs_visible(org=org)
        .filter(deployment__model__name=model, provenance=Run.Provenance.PUBLISHED)
        .filter(environment__extra__source_key=source_key)
        .select_related("deployment__accelerator", "deployment__engine")
        .prefetch_related("points")
        .order_by("id")
    )
    cells = []
    for run in runs:
        d = run.deployment
        cells.append(
            {
                "run_id": run.pk,
                "url": run.source_url,
                "sku": d.accelerator.sku,
                "gpus": d.gpus,
                "quantization": d.quant_weights,
                "engine": f"{d.engine.name} {d.engine_version}".strip(),
                "parallelism": d.parallelism_label,
                "speculative": f"{d.spec_method} ({d.spec_draft_tokens} draft tokens)"
                if d.spec_method
                else "none",
                "strategy": run.environment.get("extra", {})
                .get("cookbook_cell", {})
                .get("strategy", ""),
                "notes": d.notes,
                "points": [
                    {
                        "concurrency": p.concurrency,
                        "total_per_gpu": per_gpu(p.total_tok_s, d.gpus),
                        "ttft_p50_ms": (p.latency_ms.get("ttft") or {}).get("p50"),
                        "tpot_p50_ms": (p.latency_ms.get("tpot") or {}).get("p50"),
                    }
                    for p in sorted(run.points.all(), key=lambda p: p.ordinal)
                ],
            }
        )
    return cells
