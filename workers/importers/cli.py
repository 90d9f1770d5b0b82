"""`inferboard-worker import`: turn a peer tool's result file into result documents.

    inferboard-worker import FILE [--format NAME] [--records FILE ...]
        [--deployment deployment.yaml] [--accelerator SKU --gpus N --engine NAME ...]
        [--out doc.json] [--submit URL --token T] [--private]

Without --out or --submit the documents are printed. --submit POSTs each document to the
server's /api/v1/runs (the same path measured runs take); re-submitting the same file is
harmless, because the document's idempotency key is the file's hash.

The worker CLI (workers/cli.py) calls `register(subparsers)`; the parsed namespace carries
`func`, which returns the exit status.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from workers.importers import ImportFailure, formats, import_file
from workers.importers.facts import add_fact_arguments, facts_from_arguments
from workers.results import ResultDocument

EXIT_BAD_INPUT = 2
EXIT_SUBMIT_FAILED = 3


def register(subparsers: Any) -> argparse.ArgumentParser:
    names = ", ".join(sorted(formats()))
    parser = subparsers.add_parser(
        "import",
        help="convert a peer tool's result file into inferboard result documents",
        description=__doc__.split("\n\n")[0] + f" Formats: {names}.",
    )
    add_import_arguments(parser)
    parser.add_argument("--out", metavar="PATH", help="write the document(s) as JSON here")
    parser.add_argument("--submit", metavar="URL", help="inferboard server to POST runs to")
    parser.add_argument(
        "--token", metavar="T", help="API token for --submit (default: $INFERBOARD_TOKEN)"
    )
    parser.add_argument("--private", action="store_true", help="submit as private runs")
    parser.set_defaults(func=run)
    return parser


def add_import_arguments(parser: argparse.ArgumentParser) -> None:
    """FILE, --format, --records and the fact flags (shared with `manage.py importresults`)."""
    parser.add_argument("file", metavar="FILE", help="the peer tool's result file")
    parser.add_argument(
        "--format",
        dest="format_name",
        metavar="NAME",
        help="skip sniffing: " + ", ".join(sorted(formats())),
    )
    parser.add_argument(
        "--records",
        metavar="FILE",
        action="append",
        default=[],
        help="companion per-request file (aiperf profile_export.jsonl, lm-eval samples); "
        "may repeat",
    )
    add_fact_arguments(parser)


def documents_from_arguments(options: argparse.Namespace) -> list[ResultDocument]:
    """Read FILE, companions and facts named in the options; ImportFailure on any problem."""
    path = Path(options.file)
    data = _read(path)
    yaml_text = _read(Path(options.deployment)).decode("utf-8") if options.deployment else None
    facts = facts_from_arguments(vars(options), yaml_text)
    companions = [(_read(Path(name)), Path(name).name) for name in options.records]
    return import_file(
        data, path.name, facts=facts, format_name=options.format_name, companions=companions
    )


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise ImportFailure(f"{path}: {exc.strerror or exc}") from None


def run(options: argparse.Namespace) -> int:
    try:
        documents = documents_from_arguments(options)
    except ImportFailure as exc:
        print(f"import failed: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    payload = [doc.to_json_dict() for doc in documents]
    text = json.dumps(payload[0] if len(payload) == 1 else payload, indent=2)
    if options.out:
        Path(options.out).write_text(text + "\n")
        print(f"wrote {len(payload)} document(s) to {options.out}", file=sys.stderr)
    if options.submit:
        token = options.token or os.environ.get("INFERBOARD_TOKEN")
        if not token:
            print("import failed: --submit needs --token or $INFERBOARD_TOKEN", file=sys.stderr)
            return EXIT_BAD_INPUT
        return submit(documents, options.submit, token, private=options.private)
    if not options.out:
        print(text)
    return 0


def submit(payload: list[ResultDocument], server: str, token: str, *, private: bool) -> int:
    # The worker's shared client: retries network errors and 5xx with backoff, and the
    # document's idempotency key makes a retried POST store at most one run.
    from workers.submit import ServerClient, ServerError, ServerRefused

    client = ServerClient(server, token)
    for document in payload:
        try:
            run_id = client.submit(document, private=private)
        except (ServerError, ServerRefused) as exc:
            print(f"submit failed: {exc}", file=sys.stderr)
            return EXIT_SUBMIT_FAILED
        print(f"submitted: run {run_id} ({document.idempotency_key})")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Stand-alone entry point until the worker CLI mounts `register`."""
    parser = argparse.ArgumentParser(prog="inferboard-worker")
    register(parser.add_subparsers(dest="command", required=True))
    options = parser.parse_args(argv)
    return options.func(options)


if __name__ == "__main__":
    raise SystemExit(main())
