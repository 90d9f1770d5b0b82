"""`inferboard-worker eval`: run an accuracy protocol on an endpoint; write or submit the result.

    inferboard-worker eval --endpoint http://gpu-host:8000 --model served-name \\
        --protocol gsm8k --limit 100 --concurrency 16 --out result.json \\
        --accelerator MI355X --gpus 8 --engine sglang --quantization MXFP4 \\
        [--deployment-file deployment.yaml] [--submit https://inferboard.example.com --token T]

workers/cli.py calls `register(subparsers)`; `python -m workers.accuracy.cli eval ...` works too.
Exit status: 0 succeeded or partial, 1 every item failed, 2 bad input, 3 submission refused.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, TextIO

import yaml
from pydantic import ValidationError

from workers.accuracy.data import DataError
from workers.accuracy.protocols import ALIASES, PROTOCOLS, get_protocol, prepare
from workers.accuracy.runner import RequestFailed, evaluate, preflight
from workers.client import InferboardClient
from workers.result_facts import Deployment, ModelInfo
from workers.result_fields import validation_problems
from workers.results import ResultDocument
from workers.submit import ServerError, ServerRefused, runs_url, server_base

ENDPOINT_KEY_ENV = "INFERBOARD_ENDPOINT_API_KEY"
TOKEN_ENV = "INFERBOARD_TOKEN"


class UsageError(Exception):
    pass


class SubmitError(Exception):
    pass


def register(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "eval",
        help="run an accuracy protocol (gsm8k, gpqa) against an OpenAI-compatible endpoint",
        description="Run a pinned accuracy protocol and write an inferboard.run/v1 document.",
    )
    add_arguments(parser)
    parser.set_defaults(func=run_command)
    return parser


def add_arguments(parser: argparse.ArgumentParser) -> None:
    protocols = ", ".join(sorted([*PROTOCOLS, *ALIASES]))
    run = parser.add_argument_group("run")
    run.add_argument("--endpoint", required=True, help="base URL, e.g. http://host:8000 or .../v1")
    run.add_argument("--model", required=True, help="model name the endpoint serves")
    run.add_argument("--protocol", default="gsm8k", help=f"one of: {protocols}")
    run.add_argument("--limit", type=int, help="score only the first N items (GPQA: questions)")
    run.add_argument("--concurrency", type=int, default=8, help="requests in flight (default 8)")
    run.add_argument("--out", type=Path, help="write the result document here")
    run.add_argument("--data", type=Path, help="your own data file instead of the packaged one")
    run.add_argument("--data-sha256", help="content hash your own --data file must have")
    run.add_argument("--timeout", type=float, default=600.0, help="seconds per request")
    run.add_argument("--retries", type=int, default=3, help="retries on transport errors and 5xx")
    run.add_argument(
        "--api-key", help=f"endpoint key (better: set {ENDPOINT_KEY_ENV} in the environment)"
    )
    run.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    run.add_argument(
        "--submit", metavar="URL", help="inferboard server (base URL) to POST the document to"
    )
    run.add_argument("--token", help=f"API token for --submit (or set {TOKEN_ENV})")

    facts = parser.add_argument_group("deployment facts (flags override --deployment-file)")
    facts.add_argument(
        "--deployment-file", type=Path, help="YAML: deployment fields, or model+deployment"
    )
    facts.add_argument("--model-name", help="display name (default: --model)")
    facts.add_argument("--model-family")
    facts.add_argument("--model-revision")
    facts.add_argument("--accelerator", help="MI355X, B200, H200 ...")
    facts.add_argument("--gpus", type=int)
    facts.add_argument("--nodes", type=int)
    facts.add_argument("--engine", help="sglang, vllm, atom, trtllm, llama.cpp ...")
    facts.add_argument("--engine-version")
    facts.add_argument("--image-digest")
    facts.add_argument("--quantization", help="weights: BF16, FP8, MXFP4, NVFP4 ...")
    facts.add_argument("--activations")
    facts.add_argument("--kv-cache")
    for size in ("tp", "dp", "ep", "pp"):
        facts.add_argument(f"--{size}", type=int)
    facts.add_argument("--dp-attention", action="store_true", default=None)
    facts.add_argument("--speculative", help="speculative decoding method: mtp, eagle, ngram ...")
    facts.add_argument("--draft-tokens", type=int)
    facts.add_argument("--engine-flag", action="append", default=None, help="repeatable")
    facts.add_argument("--notes")


def _set(target: dict[str, Any], path: tuple[str, ...], value: Any) -> None:
    if value is None:
        return
    for key in path[:-1]:
        target = target.setdefault(key, {})
    target[path[-1]] = value


def load_facts(args: argparse.Namespace) -> tuple[ModelInfo, Deployment]:
    """Deployment and model from the YAML file, then flags on top; pydantic checks the result."""
    model: dict[str, Any] = {}
    deployment: dict[str, Any] = {}
    if args.deployment_file:
        try:
            loaded = yaml.safe_load(args.deployment_file.read_text(encoding="utf-8")) or {}
        except (OSError, yaml.YAMLError) as exc:
            raise UsageError(f"--deployment-file: {exc}") from None
        if not isinstance(loaded, dict):
            raise UsageError("--deployment-file must hold a mapping")
        if "deployment" in loaded:
            deployment = dict(loaded["deployment"] or {})
            model = dict(loaded.get("model") or {})
        else:
            deployment = dict(loaded)
    _set(model, ("name",), args.model_name)
    model.setdefault("name", args.model)
    _set(model, ("family",), args.model_family)
    _set(model, ("revision",), args.model_revision)
    for path, value in (
        (("accelerator",), args.accelerator),
        (("gpus",), args.gpus),
        (("nodes",), args.nodes),
        (("engine", "name"), args.engine),
        (("engine", "version"), args.engine_version),
        (("engine", "image_digest"), args.image_digest),
        (("quantization", "weights"), args.quantization),
        (("quantization", "activations"), args.activations),
        (("quantization", "kv_cache"), args.kv_cache),
        (("parallelism", "tp"), args.tp),
        (("parallelism", "dp"), args.dp),
        (("parallelism", "ep"), args.ep),
        (("parallelism", "pp"), args.pp),
        (("parallelism", "dp_attention"), args.dp_attention),
        (("speculative", "method"), args.speculative),
        (("speculative", "draft_tokens"), args.draft_tokens),
        (("engine_flags",), args.engine_flag),
        (("notes",), args.notes),
    ):
        _set(deployment, path, value)
    try:
        return ModelInfo.model_validate(model), Deployment.model_validate(deployment)
    except ValidationError as exc:
        problems = validation_problems(exc)
        hint = " (give --accelerator, --gpus, --engine and --quantization, or --deployment-file)"
        raise UsageError(f"deployment facts are incomplete or wrong: {problems}{hint}") from None


class ProgressBar:
    """One updating line on a terminal; otherwise a line every tenth of the way."""

    def __init__(self, label: str, stream: TextIO | None = None, width: int = 30):
        # Looked up when the bar starts, not at import: sys.stderr may have been replaced.
        stream = stream or sys.stderr
        self.label, self.stream, self.width = label, stream, width
        self.tty = stream.isatty()
        self.last_draw = 0.0
        self.last_decile = -1

    def __call__(self, done: int, total: int, correct: int, failed: int) -> None:
        fraction = done / total if total else 1.0
        line = (
            f"{self.label} [{'#' * int(fraction * self.width):<{self.width}}] {done}/{total} "
            f"correct {correct} failed {failed}"
        )
        if self.tty:
            now = time.monotonic()
            if done == total or now - self.last_draw >= 0.1:
                self.last_draw = now
                self.stream.write("\r" + line + ("\n" if done == total else ""))
                self.stream.flush()
        elif int(fraction * 10) > self.last_decile:
            self.last_decile = int(fraction * 10)
            self.stream.write(line + "\n")
            self.stream.flush()


def submit(document: ResultDocument, url: str, token: str) -> str:
    """POST the document to the server `url` names (its base URL, as for bench and import)."""
    # The worker's shared client: retries network errors and 5xx with backoff, and the
    # document's idempotency key makes a retried POST store at most one run.
    try:
        run_id = InferboardClient(url, token).submit(document)
    except (ServerError, ServerRefused) as exc:
        raise SubmitError(f"{runs_url(url)}: {exc}") from None
    return f"submitted to {server_base(url)} as run {run_id}"


def summary(document: ResultDocument) -> str:
    lines = []
    for result in document.accuracy:
        failures = ", ".join(f"{k} {v}" for k, v in result.failures.items()) or "none"
        lines.append(
            f"{result.protocol} {result.metric}: {100 * result.score:.2f}% "
            f"({result.correct:g}/{result.n}, 95% CI {100 * (result.ci_low or 0):.2f}-"
            f"{100 * (result.ci_high or 0):.2f}); failures: {failures}"
        )
    return "\n".join(lines)


def run_command(args: argparse.Namespace) -> int:
    try:
        return _run(args)
    except UsageError as exc:
        print(f"inferboard-worker eval: {exc}", file=sys.stderr)
        return 2
    except SubmitError as exc:
        print(f"inferboard-worker eval: --submit failed: {exc}", file=sys.stderr)
        return 3


def _run(args: argparse.Namespace) -> int:
    if not args.out and not args.submit:
        raise UsageError("say where the result goes: --out FILE and/or --submit URL")
    if args.concurrency < 1:
        raise UsageError("--concurrency must be >= 1")
    if args.retries < 0:
        raise UsageError("--retries must be >= 0")
    token = args.token or os.environ.get(TOKEN_ENV)
    if args.submit and not token:
        raise UsageError(f"--submit needs --token or {TOKEN_ENV}")
    if args.data_sha256 and not args.data:
        raise UsageError("--data-sha256 applies to your own --data file")
    if not args.endpoint.startswith(("http://", "https://")):
        raise UsageError(f"--endpoint must be an http:// or https:// URL, not {args.endpoint!r}")
    model, deployment = load_facts(args)
    try:
        protocol = get_protocol(args.protocol)
        prepared = prepare(protocol, args.data, args.data_sha256, args.limit)
    except (DataError, ValueError) as exc:
        raise UsageError(str(exc)) from None
    api_key = args.api_key or os.environ.get(ENDPOINT_KEY_ENV)
    try:
        asyncio.run(preflight(args.endpoint, api_key))
    except RequestFailed as exc:
        raise UsageError(f"cannot reach the endpoint ({exc.detail})") from None
    progress = None if args.no_progress else ProgressBar(protocol.name)
    document = asyncio.run(
        evaluate(
            prepared,
            endpoint=args.endpoint,
            model=model,
            served_model=args.model,
            deployment=deployment,
            concurrency=args.concurrency,
            api_key=api_key,
            timeout_s=args.timeout,
            retries=args.retries,
            progress=progress,
        )
    )
    if args.out:
        args.out.write_text(json.dumps(document.to_json_dict(), indent=1) + "\n", encoding="utf-8")
    print(summary(document), file=sys.stderr)
    if args.out:
        print(f"wrote {args.out} ({document.status})", file=sys.stderr)
    if args.submit:
        print(submit(document, args.submit, token or ""), file=sys.stderr)
    return 1 if document.status == "failed" else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="inferboard-worker")
    subparsers = parser.add_subparsers(dest="command", required=True)
    register(subparsers)
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
