"""One accelerator name per SKU, whoever wrote it: every importer's accelerator goes through here.

Peer files and users spell one SKU many ways: InferenceX runner pools ('b200-dgxc-slurm',
'cluster:mi355x-amds', 'h200-nb', 'b200-trt'), vendor names as drivers report them ('NVIDIA
B200', 'AMD Instinct MI300X', 'NVIDIA H100 80GB HBM3', 'NVIDIA A100-SXM4-80GB'), lower case.
A run stored under 'B200-DGXC' or 'NVIDIA B200' is on no accelerator a price or comparison
knows, so importers store the SKU as the catalog names it (the one accelerators file,
workers/accelerator_specs.py) and keep the name as written beside it
(environment.extra.accelerator_as_written).

A name whose SKU is not known here is kept as written: guessing would merge boards that
differ. Board variants that change the part (PCIe, NVL) are kept after the SKU ('H100 PCIe').
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from workers import accelerator_specs
from workers.importers.errors import ImportFailure

# SKUs that published files name beside the catalog's (which the accelerators file lists).
OTHER_SKUS = (
    "A100",
    "A10G",
    "GH200",
    "H20",
    "H800",
    "L4",
    "L40S",
    "MI250X",
    "MI300A",
    "MI350X",
    "RTX 4090",
    "RTX 5090",
    "RTX PRO 6000",
)


def known_skus() -> tuple[str, ...]:
    """The catalog's SKUs, then others that published files name."""
    return (*accelerator_specs.skus(), *OTHER_SKUS)


# Vendor and product-line words around an SKU in driver-reported names.
VENDOR_WORDS = {"NVIDIA", "AMD", "INSTINCT", "GEFORCE", "TESLA", "RADEON"}
# Words after an SKU that describe the same part: its memory, memory kind or socket.
SAME_PART = re.compile(r"^(\d+GB|HBM\d*E?|SXM\d*|OAM)$")
RUNNER_PREFIX = "cluster:"


def accelerator_sku(name: str) -> str:
    """The catalog's SKU for an accelerator name, or the name as written when unknown."""
    written = name.strip()
    words = [
        w
        for w in re.split(r"[\s_]+", written.removeprefix(RUNNER_PREFIX))
        if w and w.upper() not in VENDOR_WORDS
    ]
    upper = [w.upper() for w in words]
    # Longest match wins, so 'GB200' is never read as 'B200'.
    for sku in sorted(known_skus(), key=len, reverse=True):
        parts = sku.split(" ")
        head = upper[: len(parts)]
        if len(head) < len(parts):
            continue
        # A hyphen after the SKU starts a runner's site or a driver's part suffix
        # ('B200-DGXC', 'A100-SXM4-80GB'): the SKU is the part before it.
        last = head[-1].split("-", 1)[0]
        if head[:-1] + [last] != parts:
            continue
        rest = [w for w in words[len(parts) :] if not SAME_PART.match(w.upper())]
        return " ".join([sku, *rest])
    return written


def runner_sku(hw: str) -> str:
    """The SKU an InferenceX `hw` names. Runner pools are '<sku>-<site>[-<scheduler>]'
    ('b200-dgxc-slurm', 'cluster:mi355x-amds'), and 'b200-trt' labels B200 runs served by
    TensorRT-LLM. No SKU has a hyphen, so the pool's first word is its SKU, known here or not."""
    first = hw.strip().removeprefix(RUNNER_PREFIX).split("-", 1)[0]
    return accelerator_sku(first.upper())


def one_accelerator(pools: Mapping[str, str], where: str) -> str:
    """The one SKU every pool of a deployment names (prefill and decode, say).

    A deployment here has one accelerator: its per-GPU figures divide by all its GPUs and
    its price is one accelerator's price per GPU-hour. Pools on different accelerators (a
    GH200 prefill pool feeding an A100 decode pool; InferenceX's heterogeneous
    `prefill_hw`/`decode_hw`) would be priced at one of them and compared as if they were
    the other, so such a run is refused by name rather than stored under either.
    """
    skus = {role: runner_sku(str(name)) for role, name in pools.items()}
    if len(set(skus.values())) > 1:
        named = ", ".join(f"{role} on {sku}" for role, sku in skus.items())
        raise ImportFailure(
            f"{where}: this is a mixed-accelerator deployment ({named}); a deployment here "
            "has one accelerator, whose price and GPU count every per-GPU figure uses, so a "
            "run whose pools sit on different accelerators cannot be stored"
        )
    return next(iter(skus.values()))
