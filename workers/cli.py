"""`inferboard-worker`: measure endpoints, run accuracy protocols, import peer results.

Runs next to the GPU endpoints and needs no database and no Django: it writes result
documents (inferboard.run/v1) to files and, with --submit, posts them to the server.
"""

import argparse
import sys

from workers.accuracy.cli import register as register_eval
from workers.agent import register as register_agent
from workers.importers.cli import register as register_import
from workers.loadgen.cli import register as register_bench


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="inferboard-worker",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    register_bench(subparsers)
    register_eval(subparsers)
    register_import(subparsers)
    register_agent(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
