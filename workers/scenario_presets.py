"""The named single-turn scenarios, defined once for the CLI and the server.

The server's catalog (apps/catalog/presets.py) makes its preset rows from this table, and
`inferboard-worker bench --scenario NAME` fills its flags from it, so a document the CLI
submits under a preset's name states exactly the shape the server stores under that name
(a mismatch is refused: apps.catalog.services.scenario_resolve). Multi-turn presets live in
workers/loadgen/session_shapes.py. No Django here: workers import it too.
"""

from __future__ import annotations

SCENARIO_PRESETS: tuple[dict, ...] = (
    {
        "slug": "seed-20k-1k-60",
        "name": "20k in / 1k out / 60% prefix cache",
        "input_tokens": 20_000,
        "output_tokens": 1_000,
        "prefix_cache_hit_rate": 0.60,
        "dataset": "shared-prefix",
        "concurrency": [1, 4, 16, 64],
        "slo_ttft_ms": 2220.0,
    },
    {
        "slug": "8k-1k",
        "name": "8k in / 1k out (InferenceX)",
        "input_tokens": 8192,
        "output_tokens": 1024,
        "concurrency": [1, 4, 16, 64, 256],
    },
    {
        "slug": "1k-1k",
        "name": "1k in / 1k out (InferenceX)",
        "input_tokens": 1024,
        "output_tokens": 1024,
        "concurrency": [1, 4, 16, 64, 256],
    },
    {
        "slug": "1k-8k",
        "name": "1k in / 8k out (InferenceX)",
        "input_tokens": 1024,
        "output_tokens": 8192,
        "concurrency": [1, 4, 16, 64, 256],
    },
    {
        "slug": "single-stream",
        "name": "Single stream, 1k in / 1k out",
        "input_tokens": 1024,
        "output_tokens": 1024,
        "concurrency": [1],
        # Same token shape as 1k-1k; the load is what differs, so it gets a shape of its own.
        "shape_suffix": "single-stream",
    },
)
