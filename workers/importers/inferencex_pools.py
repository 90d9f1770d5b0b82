"""The GPUs each of InferenceX's per-GPU throughputs is over (the importer of its API
responses, inferencex_api, reads them through this).

Throughputs in InferenceX's rows are in tokens per second per GPU of a stated pool. We store
whole-deployment totals (each figure times its own denominator) and keep the per-pool figures
as written, with the pool each one is over (`figures_as_written[conc].per_gpu` and
`.per_gpu_over`). For a disaggregated row the deployment's GPUs are both pools
(`num_prefill_gpu + num_decode_gpu`) and the denominators differ by figure (`POOL_OF`): total
over both pools, output over the DECODE pool, input over the PREFILL pool (SemiAnalysisAI/
InferenceX utils/process_result.py, the multinode branch, at 843c6254ff69 2026-08-21:
`tput_per_gpu = total / (prefill_gpus + decode_gpus)`, `output_tput_per_gpu = output /
decode_gpus`, `input_tput_per_gpu = (total - output) / prefill_gpus`; so since #177,
450d834a9 2025-11-05). Multiplying all three by both pools overstated a disaggregated run's
output by (P+D)/D and its input by (P+D)/P. For an aggregated row
the two pools are one (InferenceX repeats the same numbers) and its GPUs are its TP: the
per-GPU figures are per TP GPU, as InferenceX's process_result.py divides them, while
`num_decode_gpu` is TP x EP (64 for sglang's TP8 EP8, which runs on 8 GPUs). Checked on the
shipped snapshot: concurrency x median interactivity / output tok/s per GPU, the GPUs the
figures imply, is 1.02-1.11x TP for 90% of the 1,225 aggregated rows, including the 382
whose `num_decode_gpu` is not their TP (there it is 1/EP of it). `num_decode_gpu` is kept as
written beside the run.
"""

from __future__ import annotations

from typing import Any

THROUGHPUTS = {
    "tput_per_gpu": "total_tok_s",
    "output_tput_per_gpu": "output_tok_s",
    "input_tput_per_gpu": "input_tok_s",
}
# The pool each per-GPU figure of a disaggregated row is over (process_result.py's multinode
# branch, cited above): its whole-deployment total is the figure times that pool's GPUs.
POOL_OF = {
    "tput_per_gpu": ("prefill_gpus", "decode_gpus"),
    "output_tput_per_gpu": ("decode_gpus",),
    "input_tput_per_gpu": ("prefill_gpus",),
}
POOL_WORDS = {
    ("prefill_gpus", "decode_gpus"): "all GPUs (prefill + decode)",
    ("decode_gpus",): "decode GPUs",
    ("prefill_gpus",): "prefill GPUs",
}


def denominators(deployment: dict[str, Any]) -> dict[str, int]:
    """The GPUs each per-GPU figure of a row is over: one pool's or both pools' for a
    disaggregated deployment (POOL_OF), the deployment's GPUs for an aggregated one."""
    pools = deployment.get("disaggregation")
    if not pools:
        return dict.fromkeys(THROUGHPUTS, int(deployment["gpus"]))
    return {theirs: sum(int(pools[p]) for p in POOL_OF[theirs]) for theirs in THROUGHPUTS}


def pool_words(deployment: dict[str, Any]) -> dict[str, str]:
    """What each per-GPU figure is over, in words, kept beside the figures as written."""
    if not deployment.get("disaggregation"):
        return dict.fromkeys(THROUGHPUTS, "all GPUs")
    return {theirs: POOL_WORDS[POOL_OF[theirs]] for theirs in THROUGHPUTS}
