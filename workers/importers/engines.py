"""One engine name per serving engine, whoever wrote it: every importer's engine goes through here.

Peer files and users spell one engine many ways: InferenceX calls TensorRT-LLM `trt`, vLLM's
benchmark backends `tensorrt-llm`, Triton and genai-perf `tensorrtllm`, NVIDIA's docs
`TRT-LLM`; sglang's benchmark names its own server `sglang-oai` when it speaks the OpenAI API;
a user copies `vllm-openai` from the image name. A run stored under `trt-llm` and one under
`trtllm` would be two engines to the board, the facts and the fingerprints, so importers store
the engine under one name (the name inferboard's own CLIs document: sglang, vllm, atom,
trtllm, llama.cpp ...) and keep the name as written beside it
(environment.extra.engine_as_written), as accelerators.py does for SKUs.

A name not known here is kept as written (lower case and spacing aside, which every fact
comparison already ignores): a serving stack around an engine (NVIDIA Dynamo, llm-d, a
router) is a different deployment, not another spelling, so `dynamo-trt` stays itself.
"""

from __future__ import annotations

# Each alias, the engine it names, and where that spelling is written. The test lists these.
ALIASES: dict[str, tuple[str, str]] = {
    # TensorRT-LLM
    "trtllm": ("trtllm", "inferboard's own name; the trtllm-bench CLI"),
    "trt": ("trtllm", "InferenceX configs (framework: trt); sglang.bench_serving --backend trt"),
    "trt-llm": ("trtllm", "NVIDIA's documentation (TRT-LLM); users' --engine"),
    "tensorrt-llm": (
        "trtllm",
        "the project's name (NVIDIA/TensorRT-LLM, PyPI tensorrt-llm, NGC nvidia/tensorrt-llm); "
        "vLLM's benchmark backend tensorrt-llm",
    ),
    "tensorrt_llm": ("trtllm", "the Python package (import tensorrt_llm)"),
    "tensorrtllm": ("trtllm", "Triton's tensorrtllm backend; genai-perf --backend tensorrtllm"),
    # sglang
    "sglang": ("sglang", "the project's name (sgl-project/sglang)"),
    "sgl": ("sglang", "the project's organization (sgl-project) and kernels (sgl-kernel)"),
    "sglang-native": ("sglang", "sglang.bench_serving --backend sglang-native"),
    "sglang-oai": ("sglang", "sglang.bench_serving --backend sglang-oai (its OpenAI API)"),
    "sglang-oai-chat": ("sglang", "sglang.bench_serving --backend sglang-oai-chat"),
    # vLLM
    "vllm": ("vllm", "the project's name (vllm-project/vllm)"),
    "vllm-openai": ("vllm", "the image vllm/vllm-openai"),
    "vllm-openai-rocm": ("vllm", "the image vllm/vllm-openai-rocm (InferenceX MI355X rows)"),
    "vllm-chat": ("vllm", "sglang.bench_serving --backend vllm-chat"),
    # llama.cpp
    "llama.cpp": ("llama.cpp", "the project's name (ggml-org/llama.cpp); vLLM bench backend"),
    "llamacpp": ("llama.cpp", "the Python binding's module name (llama_cpp) without the dot"),
    "llama-server": ("llama.cpp", "llama.cpp's OpenAI-compatible server binary"),
    # Hugging Face TGI
    "tgi": ("tgi", "vLLM's benchmark backend tgi; llmperf-bench's results"),
    "text-generation-inference": (
        "tgi",
        "the project's name (huggingface/text-generation-inference) and image",
    ),
    # others named by published files
    "atom": ("atom", "InferenceX configs (framework: atom, ROCm/ATOM)"),
    "lmdeploy": ("lmdeploy", "sglang.bench_serving and vLLM's benchmark backend lmdeploy"),
    "lmdeploy-chat": ("lmdeploy", "sglang.bench_serving --backend lmdeploy-chat"),
}


def engine_name(written: str) -> str:
    """The one name of the engine `written` names, or the name as written when unknown."""
    key = written.strip().lower()
    known = ALIASES.get(key)
    return known[0] if known else written.strip()


def engine_as_written(written: str) -> str | None:
    """The name as written, when it is not the name stored (None when they are one)."""
    return None if engine_name(written) == written.strip() else written
