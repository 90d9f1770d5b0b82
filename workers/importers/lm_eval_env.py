"""The deployment an lm-eval results file states: its backend, GPUs and weight dtype.

lm-eval writes `config.model` (the backend: vllm, hf, sglang ... or an API client),
`config.model_args` (a mapping or 'k=v,k=v': dtype, tensor_parallel_size ...) and
`pretty_env_info` (PyTorch's collect_env: 'GPU models and configuration: GPU 0: NVIDIA H100
80GB HBM3' one line per GPU). Facts are derived from them only where they are stated:

- accelerator: the GPU model when every GPU listed is the same model (through the one
  SKU rule of accelerators.py);
- gpus: tensor_parallel_size x data_parallel_size when model_args states them, or 1 when
  the machine lists one GPU (the run cannot have used more);
- engine: the backend when it runs the model itself (vllm, sglang, hf); an API client
  (local-completions ...) serves from an engine the file does not name;
- weights: model_args dtype (bfloat16 -> BF16 ...) unless the model is quantized (a
  quantization argument, or FP8/AWQ/GPTQ/GGUF ... in its name); 'auto' states nothing.

Each derived fact is recorded with where it was read (environment.extra.deployment_derived).
"""

from __future__ import annotations

import re
from typing import Any

from workers.importers.accelerators import accelerator_sku
from workers.importers.common import object_at

BACKENDS = {"vllm": "vllm", "vllm-vlm": "vllm", "sglang": "sglang", "hf": "hf",
            "hf-auto": "hf", "huggingface": "hf", "hf-multimodal": "hf"}  # fmt: skip
DTYPES = {"bfloat16": "BF16", "bf16": "BF16", "float16": "FP16", "fp16": "FP16",
          "half": "FP16", "float32": "FP32", "fp32": "FP32", "float": "FP32"}  # fmt: skip
GPU_LINE = re.compile(r"GPU \d+: ([^\n]+)")
# dtype is the compute precision; with these the weights are stored in another one.
QUANTIZING_ARGS = ("quantization", "quantize", "load_in_8bit", "load_in_4bit", "gguf_file")
QUANTIZED_NAME = re.compile(r"fp8|fp4|int4|int8|awq|gptq|gguf|w4a16|w8a8|bnb|4bit|8bit", re.I)


def model_args(config: dict[str, Any]) -> dict[str, Any]:
    """config.model_args as a mapping, whichever way lm-eval wrote it."""
    args = config.get("model_args")
    if isinstance(args, dict):
        return args
    if isinstance(args, str):
        return dict(part.split("=", 1) for part in args.split(",") if "=" in part)
    return {}


def stated_deployment(doc: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """The deployment facts the file states, and for each where it was read."""
    config = object_at(doc, "config")
    args = model_args(config)
    stated: dict[str, Any] = {}
    read: dict[str, str] = {}
    env = doc.get("pretty_env_info")
    gpus = GPU_LINE.findall(env) if isinstance(env, str) else []
    models = {name.strip() for name in gpus}
    if len(models) == 1:
        stated["accelerator"] = accelerator_sku(models.pop())
        read["accelerator"] = f"pretty_env_info ({len(gpus)} GPU(s) of one model)"
    sizes = [_size(args.get(k)) for k in ("tensor_parallel_size", "data_parallel_size")]
    if sizes[0] is not None:
        stated["gpus"] = sizes[0] * (sizes[1] or 1)
        read["gpus"] = "config.model_args tensor_parallel_size x data_parallel_size"
    elif len(gpus) == 1:
        stated["gpus"] = 1
        read["gpus"] = "pretty_env_info lists one GPU"
    backend = BACKENDS.get(str(config.get("model") or "").strip().lower())
    if backend:
        stated["engine"] = {"name": backend}
        read["engine"] = f"config.model {config['model']!r}"
    dtype = DTYPES.get(str(args.get("dtype") or "").strip().lower())
    if dtype and not _quantized(args):
        stated["quantization"] = {"weights": dtype}
        read["weights"] = f"config.model_args dtype {args['dtype']!r}"
    return stated, read


def _quantized(args: dict[str, Any]) -> bool:
    """Whether the weights may be stored in another precision than the compute dtype."""
    if any(key in args for key in QUANTIZING_ARGS):
        return True
    return bool(QUANTIZED_NAME.search(str(args.get("pretrained") or args.get("model") or "")))


def _size(value: Any) -> int | None:
    try:
        size = int(value)
    except (TypeError, ValueError):
        return None
    return size if size >= 1 else None
