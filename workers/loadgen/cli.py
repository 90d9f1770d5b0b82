"""`inferboard-worker bench`: measure an OpenAI-compatible endpoint and write a result document.

The lead's `workers/cli.py` calls `register(subparsers)`; `python -m workers.loadgen.cli`
runs the same command on its own.
"""

from __future__ import annotations

import argparse
import sys

from workers.loadgen import gate
from workers.loadgen.cli_args import CliError, add_arguments
from workers.loadgen.modes import run_mode


def register(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "bench",
        help="measure an OpenAI-compatible endpoint and write a result document",
        description=(
            "Measure throughput and latency of an OpenAI-compatible endpoint over one or more "
            "load levels. Writes the inferboard.run/v1 document to --out and every request's "
            "record to <out>.requests.jsonl beside it. Ctrl-C keeps the finished levels."
        ),
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    add_arguments(parser)
    parser.set_defaults(func=run_bench)
    return parser


def run_bench(args: argparse.Namespace) -> int:
    try:
        baseline = gate.prepare(args)
        return gate.finish(args, baseline, run_mode(args))
    except (CliError, gate.GateError) as exc:
        print(f"inferboard-worker bench: error: {exc}", file=sys.stderr)
        return 2


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="inferboard-worker")
    subparsers = parser.add_subparsers(dest="command", required=True)
    register(subparsers)
    args = parser.parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
