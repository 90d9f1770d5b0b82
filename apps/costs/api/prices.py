"""/costs/mtok, /costs/mtok/kinds and /costs/gpu-hour: $/Mtok and the price of a GPU-hour."""

from __future__ import annotations

from django.http import HttpRequest
from ninja import Query, Router

from apps.api_errors import Errors
from apps.costs.api.common import kw_per_gpu, price_out, request_price
from apps.costs.api.schemas import (
    GpuHourOut,
    GpuHourQuery,
    KindsOut,
    KindsQuery,
    MtokOut,
    MtokQuery,
)
from apps.costs.formulas import (
    CapexOpex,
    Throughput,
    TokenMix,
    capex_opex_usd_per_gpu_hour,
    deployment_usd_per_mtok,
    joules_per_token,
    mtok_costs,
    require_gpus,
    require_positive,
    tok_per_s_per_mw,
)
from workers import figures

router = Router()


@router.get(
    "/mtok",
    response={200: MtokOut, 422: Errors},
    summary="$/Mtok from a price and a deployment's throughput",
)
def mtok(request: HttpRequest, query: Query[MtokQuery]):
    """$ per million tokens = $/GPU-hr x GPUs / (tok/s x 3600 / 1e6).

    `GET /api/v1/costs/mtok?usd_per_gpu_hour=1.48&gpus=8&tok_per_s=2626` gives 1.2524.
    """
    price = request_price(request, query.usd_per_gpu_hour, query.accelerator, query.tier)
    gpus = require_gpus(query.gpus)
    tput = require_positive("tok_per_s", query.tok_per_s)
    cost = deployment_usd_per_mtok(price.usd_per_gpu_hour, gpus, tput)
    kw = kw_per_gpu(request, query.accelerator, query.kw_per_gpu)
    energy = joules_per_token(kw, gpus, tput) if kw is not None else None
    per_mw = tok_per_s_per_mw(kw, gpus, tput) if kw is not None else None
    return {
        "usd_per_mtok": cost,
        "token_kind": query.token_kind,
        "tok_per_s": tput,
        "gpus": gpus,
        "tok_per_s_per_gpu": figures.per_gpu(tput, gpus),
        "usd_per_hour": price.usd_per_gpu_hour * gpus,
        "price": price_out(price),
        "kw_per_gpu": kw,
        "joules_per_token": energy,
        "tok_per_s_per_mw": per_mw,
    }


@router.get(
    "/mtok/kinds",
    response={200: KindsOut, 422: Errors},
    summary="$/Mtok for input, output, total and blended tokens",
)
def mtok_kinds(request: HttpRequest, query: Query[KindsQuery]):
    """Each kind carries the whole GPU cost; the blend is their mix-weighted mean (3:1)."""
    price = request_price(request, query.usd_per_gpu_hour, query.accelerator, query.tier)
    costs = mtok_costs(
        price.usd_per_gpu_hour,
        Throughput(
            gpus=query.gpus,
            input_tok_per_s=query.input_tok_per_s,
            output_tok_per_s=query.output_tok_per_s,
            cached_input_share=query.cached_input_share,
        ),
        mix=TokenMix(query.mix_input, query.mix_output),
        cached_input_usd_per_mtok=query.cached_input_usd_per_mtok,
    )
    return {
        "input": costs.input,
        "output": costs.output,
        "total": costs.total,
        "blended": costs.blended,
        "mix": f"{costs.mix.input_weight:g}:{costs.mix.output_weight:g}",
        "cached_input": costs.cached_input,
        "uncached_input": costs.uncached_input,
        "price": price_out(price),
    }


@router.get(
    "/gpu-hour",
    response={200: GpuHourOut, 422: Errors},
    summary="$/GPU-hr from capex and opex",
)
def gpu_hour(request: HttpRequest, query: Query[GpuHourQuery]):
    """(capex / (years x 8760) + kW x PUE x $/kWh + hosting / 730) / utilization."""
    cost = capex_opex_usd_per_gpu_hour(CapexOpex(**query.dict()))
    return {
        "usd_per_gpu_hour": cost.usd_per_gpu_hour,
        "depreciation": cost.depreciation,
        "power": cost.power,
        "hosting": cost.hosting,
        "utilization": cost.utilization,
    }
