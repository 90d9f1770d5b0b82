"""The wild corpus's fourth pass (issue 59): the facts, checks and refusals of the formats and
files it added, merged into test_wild_corpus's tables (which keep the rest)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from workers.importers import Facts
from workers.results import ResultDocument

# Words that say a refusal is by name, besides the format's: the file holds nothing to import.
NOTHING_MEASURED = "holds no measurement"

# Facts a file cannot state, by file-name prefix; matched before test_wild_corpus's own.
FACTS_BY_PREFIX: dict[str, Facts] = {
    # ajith-sirra-amd/InferenceMAX_Rocm_Team's 0603_sa agentic runs of Kimi-K2.5 on B200: the
    # run folder names TP8, vLLM, FP4 weights and a b200-dgxc runner.
    "aiperf/agentic_kimik2.5_tp8": Facts.model_validate(
        {
            "deployment": {
                "accelerator": "B200",
                "gpus": 8,
                "engine": {"name": "vllm"},
                "quantization": {"weights": "FP4"},
            }
        }
    ),
}

CHECKS: dict[str, Callable[[list[ResultDocument], Any], None]] = {}

# Files refused on purpose: relative path -> words the message must contain.
REFUSED: dict[str, tuple[str, ...]] = {
    # aiperf cancelled the run before any of its 32 requests succeeded.
    "aiperf/agentic_kimik2.5_tp8_conc32_offloadlmcache_fp4_vllm_tp8-ep1-dpafalse_disagg-false"
    "_spec-none_conc32_b200-dgxc_05_profile_export_aiperf.json": (
        "was_cancelled: true",
        "before any request succeeded (32 failed)",
        NOTHING_MEASURED,
    ),
}
