"""The shipped InferenceX snapshot stored as `loadreference` stores it: each run's leaderboard
point and board rules chosen as it lands (the per-run path) against once for all the runs at
the end (runs_settle_batched, the path inferencex_store takes).

    python bench/loadreference.py [--repeat 2]

Each repeat stores the whole snapshot (about 1,500 runs) once per path, taking turns, each in
a transaction rolled back afterwards so both start from the same database (the reference
accelerators and published runs, loaded once); the fastest of each path is kept, the same
rule on both sides of the ratio (on a shared machine the slowest runs mostly measure the
neighbours). Prints seconds and queries per path and the ratio; no figure is a threshold.
Uses the PostgreSQL at DATABASE_URL (default: postgres://postgres@127.0.0.1:5432/
inferboard_bench); the database is created and dropped by the run.
"""

import argparse
import time

from _db import scratch_postgres


class _Undo(Exception):
    """Raised inside the transaction so that every path starts from the same database."""


def _store_once(responses, *, rules_batched: bool) -> tuple[float, int, int]:
    """(seconds, queries, runs stored) for one store of the snapshot, rolled back."""
    from django.db import connection, transaction

    from apps.imports.services import inferencex_store

    queries = 0

    def count(execute, sql, params, many, context):
        nonlocal queries
        queries += 1
        return execute(sql, params, many, context)

    try:
        with connection.execute_wrapper(count), transaction.atomic():
            start = time.perf_counter()
            outcome = inferencex_store(responses=responses, rules_batched=rules_batched)
            seconds = time.perf_counter() - start
            raise _Undo
    except _Undo:
        pass
    return seconds, queries, outcome.runs_created + outcome.accuracy_runs_created


def measure(args: argparse.Namespace) -> None:
    from apps.catalog.reference import INFERENCEX_DIR, reference_data
    from apps.imports.sources import read_folder
    from apps.runs.services import reference_load

    reference_load(data=reference_data())
    responses = read_folder(INFERENCEX_DIR, description="bench")
    best: dict[str, tuple[float, int, int]] = {}
    for _ in range(args.repeat):
        for name, batched in (("per-run", False), ("batched", True)):
            seconds, queries, runs = _store_once(responses, rules_batched=batched)
            if name not in best or seconds < best[name][0]:
                best[name] = (seconds, queries, runs)
    for name, (seconds, queries, runs) in best.items():
        print(
            f"{name:8s} {seconds:6.1f} s  {queries:6,d} queries  {runs:,} runs"
            f"  ({seconds / runs * 1000:.1f} ms a run)"
        )
    ratio = best["per-run"][0] / best["batched"][0]
    print(f"per-run / batched: {ratio:.2f}x (fastest of {args.repeat} each)")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--repeat", type=int, default=2, help="stores of the snapshot per path")
    args = parser.parse_args()
    with scratch_postgres("loadreference.py"):
        measure(args)


if __name__ == "__main__":
    main()
