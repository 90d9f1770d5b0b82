"""Reference price tiers: visible to everyone, used when a user gives no price of their own.

Source: SemiAnalysisAI/InferenceX-app packages/app/src/lib/constants.ts GPU_SPECS (commit
77ca49a, 2026-04-03); $/GPU-hr from the SemiAnalysis AI Cloud TCO model, power in kW per
GPU all-in (facility share, not chip TDP). B300 and GB300 prices are marked temporary at
the source (1.2x B200 / GB200).
"""

from __future__ import annotations

from apps.costs.formulas import AcceleratorPrices, Tier
from apps.frame import TIER_LABELS as TIER_LABELS  # the one spelling of a tier, site-wide

REFERENCE_SOURCE = "inferencex-gpu-specs"
REFERENCE_PRICE_SOURCE = "reference tier"
REFERENCE_CITATION = (
    "inferencex-gpu-specs: SemiAnalysisAI/InferenceX-app GPU_SPECS (commit 77ca49a, "
    "2026-04-03), $/GPU-hr from the SemiAnalysis AI Cloud TCO model"
)

_ROWS: tuple[tuple[str, float, float, float, float], ...] = (
    # sku, all-in kW, owning hyperscaler, owning neocloud, 3-year rental ($/GPU-hr)
    ("H100", 1.73, 1.30, 1.69, 1.30),
    ("H200", 1.73, 1.41, 1.74, 1.60),
    ("B200", 2.17, 1.95, 2.34, 2.90),
    ("B300", 2.17, 2.34, 2.808, 3.48),
    ("GB200", 2.10, 2.21, 2.75, 3.30),
    ("GB300", 2.10, 2.652, 3.30, 3.96),
    ("MI300X", 1.79, 1.12, 1.40, 1.55),
    ("MI325X", 2.18, 1.28, 1.59, 1.80),
    ("MI355X", 2.65, 1.48, 1.90, 2.10),
)

REFERENCE_PRICES: dict[str, AcceleratorPrices] = {
    sku: AcceleratorPrices(
        sku=sku,
        usd_per_gpu_hour={
            Tier.OWNING_HYPERSCALER.value: hyperscaler,
            Tier.OWNING_NEOCLOUD.value: neocloud,
            Tier.RENTAL_3YR.value: rental,
        },
        all_in_kw=kw,
        sources={tier.value: REFERENCE_PRICE_SOURCE for tier in Tier},
        citations={tier.value: REFERENCE_CITATION for tier in Tier},
    )
    for sku, kw, hyperscaler, neocloud, rental in _ROWS
}
