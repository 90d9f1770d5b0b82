from __future__ import annotations

import pytest

from workers.importers import Facts


@pytest.fixture
def h200_vllm() -> Facts:
    return Facts.model_validate(
        {
            "deployment": {
                "accelerator": "H200",
                "gpus": 8,
                "engine": {"name": "vllm"},
                "quantization": {"weights": "FP8"},
                "parallelism": {"tp": 8},
            },
            # No scenario: the InferenceX file names state ISL/OSL (glm5_..._isl1024_osl128).
        }
    )


@pytest.fixture
def llama_server() -> Facts:
    return Facts.model_validate(
        {
            "model": "random-weights-llama",
            "deployment": {
                "accelerator": "CPU",
                "gpus": 1,
                "engine": {"name": "llama.cpp"},
                "quantization": {"weights": "F16"},
            },
        }
    )
