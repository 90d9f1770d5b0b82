"""Importers: a peer tool's result file + user-supplied facts -> `inferboard.run/v1` documents.

Pure functions of bytes: no network, no Django. Every document has provenance `imported`,
`source.file_sha256` / `file_name` / `tool`, and idempotency key `sha256:<file hash>`.

    docs = import_file(data, "result.json", facts=load_facts_yaml(text))
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence

from workers.importers.common import ImportInput, PeerFile
from workers.importers.errors import ImportFailure
from workers.importers.facts import Facts, facts_from_arguments, load_facts_yaml
from workers.importers.registry import check_requested, formats, get, sniff
from workers.results import ResultDocument

# Each format module registers itself with the registry when imported. The registry knows
# none of them, so the arrows point one way: package -> format modules -> registry.
FORMAT_MODULES = (
    "aiperf",
    "genai_perf",
    "guidellm",
    "inferboard",
    "inference_perf",
    "inferencex",
    "inferencex_agg",
    "inferencex_api",
    "inferencex_runner",
    "llmperf",
    "lm_eval",
    "mlperf",
    "sglang",
    "trtllm_bench",
    "trtllm_bench_log",
    "vllm",
    "vllm_latency",
)
for _module in FORMAT_MODULES:
    importlib.import_module(f"workers.importers.{_module}")

__all__ = [
    "Facts",
    "ImportFailure",
    "facts_from_arguments",
    "formats",
    "import_file",
    "load_facts_yaml",
    "sniff",
]


def import_file(
    data: bytes,
    filename: str,
    *,
    facts: Facts | None = None,
    format_name: str | None = None,
    companions: Sequence[tuple[bytes, str]] = (),
    namespace: str = "",
) -> list[ResultDocument]:
    """Documents for one peer file; `companions` are (bytes, name) of per-request files.

    Raises ImportFailure with a message naming the file and field when anything is wrong;
    nothing is returned partially.
    """
    if format_name:
        fmt = get(format_name)
        check_requested(data, filename, fmt.name)
    else:
        fmt = get(sniff(data, filename))
    job = ImportInput(
        main=PeerFile(data, filename),
        facts=facts or Facts(),
        companions=tuple(PeerFile(d, n) for d, n in companions),
        namespace=namespace,
    )
    return fmt.parse(job)
