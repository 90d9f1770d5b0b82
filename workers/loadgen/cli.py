"""`inferboard-worker bench`: measure an OpenAI-compatible endpoint and write a result document.

The lead's `workers/cli.py` calls `register(subparsers)`; `python -m workers.loadgen.cli`
runs the same command on its own.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import sys
import time
from collections.abc import Coroutine
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import yaml
from pydantic import ValidationError

from workers import slo as slo_rule
from workers.client import InferboardClient
from workers.loadgen import gate
from workers.loadgen.client import EndpointConfig
from workers.loadgen.datasets import DatasetError, DatasetWorkload, dataset_name, read_dataset
from workers.loadgen.metrics import LENGTH_TOLERANCE, NS_PER_S
from workers.loadgen.prompts import (
    CalibratedCounter,
    EndpointTokenizer,
    LengthCheck,
    LocalTokenizer,
    PromptBuilder,
    PromptWorkload,
    TokenCounter,
    WordPool,
    scenario_workload,
    template_overhead,
    usage_probe,
    verify_lengths,
)
from workers.loadgen.runner import (
    ClientLimits,
    Level,
    LevelProgress,
    LoadPlan,
    SweepResult,
    make_document,
    parse_concurrency,
    run_sweep,
    write_outputs,
)
from workers.loadgen.scrape import (
    Scraper,
    metrics_url,
    point_window,
    probe,
    scraping,
    server_acceptance,
)
from workers.loadgen.sessions import (
    SESSION_PRESETS,
    SessionWorkload,
    mean_context_tokens,
    run_session_sweep,
    session_dataset,
)
from workers.loadgen.traces import TraceError, TracePrompts, read_mooncake, replay, trace_dataset
from workers.results import (
    SCHEMA_REVISION,
    Deployment,
    ModelInfo,
    Point,
    ResultDocument,
    Scenario,
    SessionScenario,
    Slo,
    json_path,
)
from workers.submit import ServerError, ServerRefused


@dataclass(frozen=True)
class Preset:
    input_tokens: int
    output_tokens: int
    prefix_hit_rate: float
    concurrency: str | None = None
    description: str = ""


PRESETS = {
    "seed-20k-1k-60": Preset(20_000, 1_000, 0.6, None, "20k in / 1k out / 60% prefix cache"),
    "8k-1k": Preset(8_192, 1_024, 0.0, None, "InferenceX 8k/1k"),
    "1k-1k": Preset(1_024, 1_024, 0.0, None, "InferenceX 1k/1k"),
    "single-stream": Preset(20_000, 1_000, 0.6, "1", "the seed workload at concurrency 1"),
}


class CliError(Exception):
    """A bad flag or file: printed as one clear message, exit code 2."""


def register(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:  # type: ignore[type-arg]
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


def add_arguments(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("endpoint")
    g.add_argument("--endpoint", required=True, help="server URL, e.g. http://host:8000 (/v1 ok)")
    g.add_argument("--model", required=True, help="model name sent in requests and recorded")
    g.add_argument("--model-family", help="model family recorded in the document")
    g.add_argument("--api", choices=["completions", "chat"], default="completions")
    g.add_argument("--api-key", help="bearer key for the endpoint (default: env OPENAI_API_KEY)")
    g.add_argument(
        "--header", action="append", default=[], metavar="NAME:VALUE", help="extra header"
    )
    g.add_argument(
        "--extra-body", default="{}", metavar="JSON", help="fields merged into each body"
    )
    g.add_argument("--timeout", type=float, default=600.0, help="per-request timeout, seconds")
    g.add_argument(
        "--no-ignore-eos",
        action="store_true",
        help="let the model stop at EOS (outputs may then be shorter than asked)",
    )
    g.add_argument("--no-min-tokens", action="store_true", help="do not send min_tokens")
    g.add_argument(
        "--no-continuous-usage",
        action="store_true",
        help="do not ask for usage on every chunk (exact tokens per chunk)",
    )
    g.add_argument(
        "--transport",
        choices=["aiohttp", "httpx"],
        default="aiohttp",
        help="HTTP wire under httpx (see bench/loadgen_capacity.py)",
    )

    g = parser.add_argument_group("scenario")
    g.add_argument(
        "--scenario",
        choices=sorted([*PRESETS, *SESSION_PRESETS]),
        help="a preset; flags below override it (chat and agentic-coding are multi-turn "
        "sessions: --requests then counts sessions per level)",
    )
    g.add_argument("--input-tokens", type=int, help="prompt tokens per request")
    g.add_argument("--output-tokens", type=int, help="output tokens per request")
    g.add_argument("--prefix-hit-rate", type=float, help="target prefix-cache hit rate in [0, 1)")
    g.add_argument("--prefix-groups", type=int, default=1, help="distinct shared prefixes")
    g.add_argument("--length-spread", type=float, default=0.0, help="± uniform length spread")
    g.add_argument(
        "--tokenizer",
        choices=["auto", "endpoint", "local", "calibrate"],
        default="auto",
        help="token counts: the endpoint's /tokenize, --tokenizer-json (local), or "
        "calibration from usage; auto: endpoint, else --tokenizer-json, else calibrate",
    )
    g.add_argument(
        "--tokenizer-json", type=Path, help="a local Hugging Face tokenizer.json (any model)"
    )
    g.add_argument(
        "--allow-length-mismatch",
        action="store_true",
        help="measure even when prompts miss their input length by more than ±1 token; the "
        "points are then marked as not matching their scenario (never a leaderboard point)",
    )
    g.add_argument(
        "--seed",
        type=int,
        help="seed for prompts and arrivals (default: random, recorded in the document; a "
        "repeated seed repeats prompts, which a server's prefix cache may still hold)",
    )

    g.add_argument(
        "--dataset",
        type=Path,
        help='a JSONL of prompts ({"prompt": ..., "output_tokens": n}) or of ShareGPT '
        "conversations, sent instead of generated prompts; its sha256 goes into the scenario",
    )

    g = parser.add_argument_group("server metrics")
    g.add_argument(
        "--metrics-url", help="the server's Prometheus endpoint (default: <endpoint>/metrics)"
    )
    g.add_argument(
        "--scrape-interval", type=float, default=1.0, help="seconds between /metrics scrapes"
    )
    g.add_argument("--no-scrape", action="store_true", help="do not scrape the server's metrics")

    g = parser.add_argument_group("trace replay (instead of a scenario and load levels)")
    g.add_argument(
        "--trace",
        type=Path,
        help="a Mooncake-layout JSONL (timestamp ms, input_length, output_length, hash_ids "
        "of 512-token blocks) replayed at its timestamps; --requests takes its first N rows",
    )
    g.add_argument(
        "--trace-scale", type=float, default=1.0, help="replay speed: 2 sends twice as fast"
    )

    g = parser.add_argument_group("sessions (multi-turn; override a session preset)")
    g.add_argument("--turns", type=int, help="turns per session (makes the run multi-turn)")
    g.add_argument("--system-tokens", type=int, help="system prompt shared by all sessions")
    g.add_argument("--first-tokens", type=int, help="first user message per session")
    g.add_argument("--turn-tokens", type=int, help="each later user or tool message")
    g.add_argument("--think-time", type=float, help="seconds between an answer and the next turn")

    g = parser.add_argument_group("load")
    load = g.add_mutually_exclusive_group()
    load.add_argument("--concurrency", help="closed loop: '1,4,16' or 'pow2:64' (1,2,4..64)")
    load.add_argument("--rate", help="open loop: arrivals per second, e.g. '1,2,4'")
    g.add_argument("--arrival", choices=["poisson", "gamma"], default="poisson")
    g.add_argument("--burstiness", type=float, default=1.0, help="gamma shape (<1 burstier)")
    g.add_argument("--max-concurrency", type=int, help="open loop: cap on requests in flight")
    stop = g.add_mutually_exclusive_group()
    stop.add_argument("--requests", type=int, help="measured requests per level")
    stop.add_argument("--duration", type=float, help="seconds of new requests per level")
    g.add_argument("--warmup", type=int, default=0, help="warm-up requests per level (excluded)")
    g.add_argument("--slo-ttft-ms", type=float, help="TTFT SLO for goodput and early stop")
    g.add_argument("--slo-tpot-ms", type=float, help="TPOT SLO for goodput and early stop")
    g.add_argument("--slo-e2el-ms", type=float, help="E2E latency SLO for goodput and early stop")
    g.add_argument(
        "--slo-percentile",
        type=_slo_percentile,
        default=99.0,
        help="percentile the SLOs apply at: 50, 90, 95, 99 or 99.9",
    )
    g.add_argument(
        "--no-early-stop",
        action="store_true",
        help="run every level even when one is saturated (SLO broken or throughput flat)",
    )

    g.add_argument(
        "--processes",
        type=int,
        default=1,
        help="client processes sharing each level (one schedule, one document; needs "
        "--requests); use when one process is client-bound",
    )
    g.add_argument(
        "--client-cpu-limit",
        type=float,
        default=ClientLimits().cpu,
        help="a level is client-bound when this process is busy at least this share of a core",
    )
    g.add_argument(
        "--client-lag-limit-ms",
        type=float,
        default=ClientLimits().loop_lag_ms,
        help="a level is client-bound when the event loop runs timers this late (p99)",
    )

    g = parser.add_argument_group("deployment (flags override --deployment YAML)")
    g.add_argument("--deployment", type=Path, help="YAML with the fields below (schema names)")
    g.add_argument("--accelerator", help="SKU: MI355X, B200, H200 ...")
    g.add_argument("--gpus", type=int, help="GPUs serving the endpoint (per-GPU throughput)")
    g.add_argument("--nodes", type=int, help="nodes serving the endpoint")
    g.add_argument("--engine", help="sglang, vllm, atom, trtllm, llama.cpp ...")
    g.add_argument("--engine-version", help="engine version, e.g. 0.5.4")
    g.add_argument("--image-digest", help="container image digest the engine ran from")
    g.add_argument("--quantization", help="weights precision: BF16, FP8, MXFP4 ...")
    g.add_argument("--quant-activations", help="activations precision, e.g. FP8")
    g.add_argument("--quant-kv-cache", help="KV cache precision, e.g. FP8")
    g.add_argument("--tp", type=int, help="tensor parallel size")
    g.add_argument("--dp", type=int, help="data parallel size")
    g.add_argument("--ep", type=int, help="expert parallel size")
    g.add_argument("--pp", type=int, help="pipeline parallel size")
    g.add_argument(
        "--dp-attention", action="store_true", default=None, help="data-parallel attention on"
    )
    g.add_argument("--spec-method", help="speculative decoding: mtp, eagle, ngram ...")
    g.add_argument("--spec-draft-tokens", type=int, help="speculative draft tokens per step")
    g.add_argument("--engine-flag", action="append", default=None, help="engine flag (repeat)")
    g.add_argument("--notes", help="free-text notes on the deployment")

    g = parser.add_argument_group("output")
    g.add_argument("--out", type=Path, default=Path("result.json"), help="result document path")
    g.add_argument("--no-records", action="store_true", help="keep records only in the JSONL")
    g.add_argument("--submit", metavar="URL", help="inferboard server (base URL) to POST to")
    g.add_argument("--token", help="inferboard API token (default: env INFERBOARD_TOKEN)")
    g.add_argument("--quiet", action="store_true", help="no progress bar")
    gate.add_arguments(parser)


def _deployment(args: argparse.Namespace) -> Deployment:
    data: dict[str, Any] = {}
    if args.deployment:
        try:
            loaded = yaml.safe_load(args.deployment.read_text()) or {}
        except (OSError, yaml.YAMLError) as exc:
            raise CliError(f"--deployment {args.deployment}: {exc}") from None
        if not isinstance(loaded, dict):
            raise CliError(f"--deployment {args.deployment}: expected a mapping")
        data = loaded
    if isinstance(data.get("engine"), str):
        data["engine"] = {"name": data["engine"]}
    if isinstance(data.get("quantization"), str):
        data["quantization"] = {"weights": data["quantization"]}

    def put(path: tuple[str, ...], value: Any) -> None:
        if value is None:
            return
        node = data
        for key in path[:-1]:
            node = node.setdefault(key, {})
        node[path[-1]] = value

    put(("accelerator",), args.accelerator)
    put(("gpus",), args.gpus)
    put(("nodes",), args.nodes)
    put(("engine", "name"), args.engine)
    put(("engine", "version"), args.engine_version)
    put(("engine", "image_digest"), args.image_digest)
    put(("quantization", "weights"), args.quantization)
    put(("quantization", "activations"), args.quant_activations)
    put(("quantization", "kv_cache"), args.quant_kv_cache)
    for name in ("tp", "dp", "ep", "pp", "dp_attention"):
        put(("parallelism", name), getattr(args, name))
    put(("speculative", "method"), args.spec_method)
    put(("speculative", "draft_tokens"), args.spec_draft_tokens)
    put(("engine_flags",), args.engine_flag)
    put(("notes",), args.notes)
    try:
        return Deployment.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{json_path(tuple(e['loc']))}: {e['msg']}" for e in exc.errors(include_url=False)
        )
        raise CliError(f"deployment facts are incomplete or wrong ({problems})") from None


def _endpoint(args: argparse.Namespace) -> EndpointConfig:
    headers = {}
    for header in args.header:
        name, sep, value = header.partition(":")
        if not sep or not name.strip():
            raise CliError(f"--header {header!r}: expected NAME:VALUE")
        headers[name.strip()] = value.strip()
    try:
        extra = json.loads(args.extra_body)
    except ValueError as exc:
        raise CliError(f"--extra-body: not JSON ({exc})") from None
    if not isinstance(extra, dict):
        raise CliError("--extra-body: expected a JSON object")
    return EndpointConfig(
        base_url=args.endpoint,
        model=args.model,
        api=args.api,
        api_key=args.api_key or os.environ.get("OPENAI_API_KEY"),
        headers=headers,
        extra_body=extra,
        timeout_s=args.timeout,
        ignore_eos=not args.no_ignore_eos,
        min_tokens=not args.no_min_tokens,
        continuous_usage=not args.no_continuous_usage,
        transport=args.transport,
    )


def _scenario_numbers(args: argparse.Namespace) -> tuple[int, int, float, str | None]:
    preset = PRESETS.get(args.scenario) if args.scenario else None
    n_in = args.input_tokens or (preset.input_tokens if preset else None)
    n_out = args.output_tokens or (preset.output_tokens if preset else None)
    hit = args.prefix_hit_rate
    if hit is None:
        hit = preset.prefix_hit_rate if preset else 0.0
    if not n_in or not n_out:
        raise CliError("give --scenario, or --input-tokens and --output-tokens")
    if n_in < 1 or n_out < 1:
        raise CliError("--input-tokens and --output-tokens must be positive")
    if not 0 <= hit < 1:
        raise CliError("--prefix-hit-rate must be in [0, 1)")
    concurrency = args.concurrency or (preset.concurrency if preset else None)
    return n_in, n_out, hit, concurrency


def _plan(args: argparse.Namespace, concurrency: str | None, slo: Slo | None) -> LoadPlan:
    try:
        if args.rate:
            rates = [float(r) for r in args.rate.split(",") if r.strip()]
            if not rates or any(r <= 0 for r in rates):
                raise ValueError("rates must be positive")
            levels = [Level(rate=r) for r in rates]
        else:
            levels = [Level(concurrency=c) for c in parse_concurrency(concurrency or "1")]
    except ValueError as exc:
        raise CliError(f"load levels: {exc}") from None
    if args.requests is None and args.duration is None:
        raise CliError("give --requests N or --duration S")
    if (args.requests is not None and args.requests < 1) or (
        args.duration is not None and args.duration <= 0
    ):
        raise CliError("--requests and --duration must be positive")
    if args.processes < 1:
        raise CliError("--processes must be positive")
    if args.processes > 1 and args.requests is None:
        raise CliError("--processes needs --requests: a duration cannot be split ahead")
    return LoadPlan(
        levels=levels,
        requests=args.requests,
        duration_s=args.duration,
        warmup=args.warmup,
        arrival=args.arrival,
        burstiness=args.burstiness,
        max_concurrency=args.max_concurrency,
        slo=slo,
        early_stop=not args.no_early_stop,
        seed=args.seed,
        client_limits=ClientLimits(cpu=args.client_cpu_limit, loop_lag_ms=args.client_lag_limit_ms),
        processes=args.processes,
    )


def _counter(args: argparse.Namespace, cfg: EndpointConfig) -> TokenCounter:
    if args.tokenizer == "local" and not args.tokenizer_json:
        raise CliError("--tokenizer local needs --tokenizer-json PATH")
    if args.tokenizer in ("auto", "endpoint"):
        tokenizer = EndpointTokenizer.probe(cfg)
        if tokenizer is not None:
            return tokenizer
        if args.tokenizer == "endpoint":
            raise CliError(f"{cfg.root}/tokenize does not answer: try --tokenizer calibrate")
    if args.tokenizer_json and args.tokenizer != "calibrate":
        try:
            return LocalTokenizer(args.tokenizer_json)
        except (OSError, ValueError) as exc:
            raise CliError(f"--tokenizer-json: {exc}") from None
    return CalibratedCounter(usage_probe(cfg))


def _check_prompt_lengths(
    args: argparse.Namespace,
    plan: LoadPlan,
    workload: PromptWorkload,
    counter: TokenCounter,
    overhead: int,
) -> LengthCheck:
    """The verification pass: every planned prompt counted before any is measured."""
    check = verify_lengths(workload.build(plan.prompts_to_verify()), counter, overhead)
    if check.missed and not args.allow_length_mismatch:
        raise CliError(
            f"{check.message()}: the run would not match its scenario. Measure anyway with "
            "--allow-length-mismatch (its points are then marked and never ranked)"
        )
    return check


def _mark_length_mismatch(result: SweepResult, check: LengthCheck) -> str | None:
    """Why the measured prompts do not match the scenario, by the server's own counts; None
    when they do. A point without server counts takes the verification pass's rate."""
    problems = []
    for point in result.points:
        if point.prompt_length_mismatch_rate is None and check.missed:
            point.prompt_length_mismatch_rate = check.rate
        rate = point.prompt_length_mismatch_rate
        if rate:
            problems.append(f"{point.label}: {rate:.0%} of prompts")
    if not problems:
        return None
    return (
        f"prompts missed their input length by more than ±{LENGTH_TOLERANCE} token(s) "
        f"({', '.join(problems)})"
    )


class ProgressBar:
    """One line per level on stderr: bar, requests done, live output tok/s, errors."""

    def __init__(self, stream: Any = sys.stderr, enabled: bool = True) -> None:
        self.stream = stream
        self.enabled = enabled
        self.last_draw = 0.0
        self.label: tuple[str, bool] | None = None

    def __call__(self, state: LevelProgress) -> None:
        if not self.enabled:
            return
        key = (state.label, state.warmup)
        if self.label is not None and key != self.label:
            self.stream.write("\n")
        self.label = key
        finished = state.total is not None and state.done >= state.total
        now = time.monotonic()
        if not finished and now - self.last_draw < 0.1:
            return
        self.last_draw = now
        elapsed = max(1e-9, (time.perf_counter_ns() - state.started_ns) / NS_PER_S)
        if state.total:
            fraction = min(1.0, state.done / state.total)
        elif state.duration_s:
            fraction = min(1.0, elapsed / state.duration_s)
        else:
            fraction = 0.0
        bar = "#" * int(fraction * 24) + "." * (24 - int(fraction * 24))
        total = f"/{state.total}" if state.total else ""
        phase = " warm-up" if state.warmup else ""
        self.stream.write(
            f"\r{state.label:>12}{phase} [{bar}] {state.done}{total} req "
            f"{state.output_tokens / elapsed:9.1f} tok/s  errors {state.errors}  {elapsed:6.1f}s"
        )
        self.stream.flush()

    def close(self) -> None:
        if self.enabled and self.label is not None:
            self.stream.write("\n")
            self.stream.flush()


def _slo_percentile(text: str) -> float:
    """A percentile that is stored (workers/slo.py), as the document's number."""
    try:
        return float(slo_rule.percentile_name(text).removeprefix("p"))
    except slo_rule.SloError as exc:
        raise argparse.ArgumentTypeError(exc.message) from None


def submit(document: ResultDocument, url: str, token: str | None) -> int:
    """POST the document to the server's runs API; retries keep the idempotency key."""
    if not token:
        raise CliError("--submit needs --token (or env INFERBOARD_TOKEN)")
    try:
        return InferboardClient(url, token).submit(document)
    except (ServerRefused, ServerError) as exc:
        raise CliError(f"--submit: {exc}") from None


def run_bench(args: argparse.Namespace) -> int:
    try:
        baseline = gate.prepare(args)
        return gate.finish(args, baseline, _run_bench(args))
    except (CliError, gate.GateError) as exc:
        print(f"inferboard-worker bench: error: {exc}", file=sys.stderr)
        return 2


def _session_shape(args: argparse.Namespace) -> SessionScenario | None:
    """The multi-turn shape: a session preset with flags over it, or --turns alone."""
    preset = SESSION_PRESETS.get(args.scenario or "")
    if preset is None and args.turns is None:
        return None
    fields = preset.model_dump() if preset else {"kind": "chat"}
    for name, value in (
        ("turns", args.turns),
        ("system_tokens", args.system_tokens),
        ("first_tokens", args.first_tokens or args.input_tokens),
        ("turn_tokens", args.turn_tokens),
        ("output_tokens", args.output_tokens),
        ("think_time_s", args.think_time),
    ):
        if value is not None:
            fields[name] = value
    fields["sessions"] = args.requests
    try:
        return SessionScenario.model_validate(fields)
    except ValidationError as exc:
        problems = "; ".join(
            f"--{'-'.join(str(e['loc'][0]).split('_'))}: {e['msg']}"
            for e in exc.errors(include_url=False)
        )
        raise CliError(f"session shape: {problems}") from None


def _run_bench(args: argparse.Namespace) -> int:
    if args.seed is None:
        args.seed = secrets.randbelow(2**31)
    cfg = _endpoint(args)
    deployment = _deployment(args)
    if args.trace is not None:
        return _run_trace(args, cfg, deployment)
    if args.dataset is not None:
        return _run_dataset(args, cfg, deployment)
    shape = _session_shape(args)
    if shape is not None:
        return _run_sessions(args, cfg, deployment, shape)
    n_in, n_out, hit, concurrency = _scenario_numbers(args)
    slo = _slo(args)
    plan = _plan(args, concurrency, slo)
    try:
        counter = _counter(args, cfg)
        workload, overhead = scenario_workload(
            cfg,
            counter,
            input_tokens=n_in,
            output_tokens=n_out,
            prefix_hit_rate=hit,
            length_spread=args.length_spread,
            seed=args.seed,
            groups=args.prefix_groups,
        )
        check = _check_prompt_lengths(args, plan, workload, counter, overhead)
    except httpx.HTTPError as exc:
        raise CliError(f"cannot reach {cfg.url}: {exc}") from None
    scenario = Scenario(
        preset=args.scenario,
        input_tokens=n_in,
        output_tokens=n_out,
        length_spread=args.length_spread,
        prefix_cache_hit_rate=hit,
        dataset="shared-prefix" if hit > 0 else "random-words",
        arrival="open" if args.rate else "closed",
        warmup_requests=args.warmup,
        duration_s=args.duration,
        request_count=args.requests,
        slo=slo,
    )
    scraper = _scraper(args, cfg)
    started_at = datetime.now(UTC)
    result = SweepResult()
    progress = ProgressBar(enabled=not args.quiet)
    interrupted = _drive(
        run_sweep(
            cfg, workload, plan, result=result, progress=progress, count_tokens=counter.count
        ),
        scraper,
        progress,
    )
    if not result.points:
        print("inferboard-worker bench: no level finished; nothing written", file=sys.stderr)
        return 130 if interrupted else 1
    mismatched = _mark_length_mismatch(result, check)
    document = _write_document(
        args,
        cfg,
        scraper,
        result,
        deployment=deployment,
        scenario=scenario,
        started_at=started_at,
        interrupted=interrupted,
        revision=False,
        tokenizer=counter.name,
        prompt_overhead_tokens=overhead,
        api=cfg.api,
        seed=args.seed,
        transport=cfg.transport,
        prompt_check={
            "counter": check.counter,
            "checked": check.checked,
            "missed": check.missed,
            "tolerance_tokens": check.tolerance,
        },
    )
    if result.stop_reason:
        print(result.stop_reason, file=sys.stderr)
    bound = [p.label or "?" for p in document.points if p.client_bound]
    if bound:
        print(
            f"client-bound at {', '.join(bound)}: this process was saturated or starved of "
            "CPU (a busy core, or its event loop late past --client-lag-limit-ms), so its "
            "timestamps carry its own delay; those levels are marked and never ranked "
            "(try --processes, or a host with idle cores)",
            file=sys.stderr,
        )
    if mismatched and not args.allow_length_mismatch:
        print(
            f"inferboard-worker bench: error: {mismatched}; the run does not match its "
            "scenario and was not submitted (--allow-length-mismatch measures anyway and "
            "marks the points)",
            file=sys.stderr,
        )
        return 3
    _submit_if_asked(args, document)
    return 130 if interrupted else 0


def _metrics_headers(cfg: EndpointConfig) -> dict[str, str]:
    return {"Authorization": f"Bearer {cfg.api_key}"} if cfg.api_key else {}


def _scraper(args: argparse.Namespace, cfg: EndpointConfig) -> Scraper | None:
    """A scraper for the endpoint's /metrics, or None when off or when nothing answers
    there in the Prometheus text format (the run then says so in environment.extra)."""
    if args.no_scrape:
        return None
    if args.scrape_interval <= 0:
        raise CliError("--scrape-interval must be positive")
    url = args.metrics_url or metrics_url(cfg.root)
    if not asyncio.run(probe(url, _metrics_headers(cfg))):
        return None
    return Scraper(url, args.scrape_interval, _metrics_headers(cfg))


async def _scraped[T](scraper: Scraper | None, measure: Coroutine[Any, Any, T]) -> T:
    if scraper is None:
        return await measure
    async with scraping(scraper):
        return await measure


def _attach_server_metrics(
    args: argparse.Namespace, cfg: EndpointConfig, scraper: Scraper | None, result: SweepResult
) -> dict[str, Any]:
    """Each point's slice of the server's series; what the document's extra should say."""
    if args.no_scrape:
        return {"server_metrics": "off"}
    url = args.metrics_url or metrics_url(cfg.root)
    if scraper is None:
        return {"server_metrics": f"not available at {url}"}
    for point, timings in zip(result.points, result.timings, strict=True):
        window = point_window(timings)
        if window is not None:
            point.server = scraper.window(*window)
        if point.server is not None and point.speculative_acceptance is None:
            # Per-request draft counts are exact per point; the counters are the fallback.
            point.speculative_acceptance = server_acceptance(point.server)
    return {"server_metrics": {"url": url, "engine": scraper.engine, "missed": scraper.errors}}


def _slo(args: argparse.Namespace) -> Slo | None:
    if not (args.slo_ttft_ms or args.slo_tpot_ms or args.slo_e2el_ms):
        return None
    return Slo(
        ttft_ms=args.slo_ttft_ms,
        tpot_ms=args.slo_tpot_ms,
        e2el_ms=args.slo_e2el_ms,
        ttft_percentile=args.slo_percentile,
    )


def _run_dataset(args: argparse.Namespace, cfg: EndpointConfig, deployment: Deployment) -> int:
    """The file's prompts at the usual load levels; lengths are the file's, counted."""
    if args.scenario or args.turns is not None or args.input_tokens:
        raise CliError("--dataset brings its own prompts: drop --scenario/--input-tokens/--turns")
    if args.output_tokens is not None and args.output_tokens < 1:
        raise CliError("--output-tokens must be positive")
    plan = _plan(args, args.concurrency or "1", _slo(args))
    try:
        counter = _counter(args, cfg)
        dataset = read_dataset(args.dataset, counter, limit=args.requests)
        prompt_tokens = [counter.count(row.prompt) for row in dataset.rows]
    except OSError as exc:
        raise CliError(f"--dataset {args.dataset}: {exc.strerror or exc}") from None
    except DatasetError as exc:
        raise CliError(f"--dataset {args.dataset}: {exc}") from None
    except httpx.HTTPError as exc:
        raise CliError(f"cannot reach {cfg.url}: {exc}") from None
    if args.output_tokens is None and any(row.output_tokens is None for row in dataset.rows):
        raise CliError(f"--dataset {args.dataset}: rows without output_tokens need --output-tokens")
    outputs = [args.output_tokens or row.output_tokens or 1 for row in dataset.rows]
    scenario = Scenario(
        name=f"dataset {dataset.identity.name}"[:200],
        input_tokens=max(1, round(sum(prompt_tokens) / len(prompt_tokens))),
        output_tokens=max(1, round(sum(outputs) / len(outputs))),
        length_spread=None,  # the file's own lengths
        prefix_cache_hit_rate=None,
        dataset=dataset_name(dataset.identity),
        arrival="open" if args.rate else "closed",
        warmup_requests=args.warmup,
        duration_s=args.duration,
        request_count=args.requests,
        slo=plan.slo,
        trace=dataset.identity,
    )
    workload = DatasetWorkload(dataset, args.output_tokens)
    scraper = _scraper(args, cfg)
    started_at = datetime.now(UTC)
    result = SweepResult()
    progress = ProgressBar(enabled=not args.quiet)
    interrupted = _drive(
        run_sweep(cfg, workload, plan, result=result, progress=progress), scraper, progress
    )
    if not result.points:
        print("inferboard-worker bench: no level finished; nothing written", file=sys.stderr)
        return 130 if interrupted else 1
    document = _write_document(
        args,
        cfg,
        scraper,
        result,
        deployment=deployment,
        scenario=scenario,
        started_at=started_at,
        interrupted=interrupted,
        tokenizer=counter.name,
        api=cfg.api,
        seed=args.seed,
    )
    _submit_if_asked(args, document)
    return 130 if interrupted else 0


def _run_trace(args: argparse.Namespace, cfg: EndpointConfig, deployment: Deployment) -> int:
    """One open-loop level: the trace's own arrivals, lengths and shared blocks."""
    if args.scenario or args.concurrency or args.rate or args.turns is not None:
        raise CliError("--trace replays the file's own load: drop --scenario/--concurrency/--rate")
    if args.requests is not None and args.requests < 1:
        raise CliError("--requests must be positive")
    try:
        trace = read_mooncake(args.trace, scale=args.trace_scale, limit=args.requests)
    except OSError as exc:
        raise CliError(f"--trace {args.trace}: {exc.strerror or exc}") from None
    except TraceError as exc:
        raise CliError(f"--trace {args.trace}: {exc}") from None
    try:
        counter = _counter(args, cfg)
        overhead = template_overhead(counter, usage_probe(cfg))
        builder = PromptBuilder(counter, seed=args.seed, pool=WordPool.for_counter(counter))
        prompts = TracePrompts(builder, overhead=overhead)
    except httpx.HTTPError as exc:
        raise CliError(f"cannot reach {cfg.url}: {exc}") from None
    rows = trace.rows
    scenario = Scenario(
        name=f"trace {trace.identity.name} x{trace.identity.scale:g}"[:200],
        input_tokens=max(1, round(sum(r.input_length for r in rows) / len(rows))),
        output_tokens=max(1, round(sum(r.output_length for r in rows) / len(rows))),
        length_spread=None,  # the trace's own lengths, not a uniform spread
        prefix_cache_hit_rate=None,  # the trace's shared blocks decide it: measured
        dataset=trace_dataset(trace.identity),
        arrival="open",
        request_count=len(rows),
        slo=_slo(args),
        trace=trace.identity,
    )
    limits = ClientLimits(cpu=args.client_cpu_limit, loop_lag_ms=args.client_lag_limit_ms)
    scraper = _scraper(args, cfg)
    started_at = datetime.now(UTC)
    progress = ProgressBar(enabled=not args.quiet)
    try:
        point, timings = asyncio.run(
            _scraped(
                scraper,
                replay(
                    cfg,
                    trace,
                    prompts,
                    max_concurrency=args.max_concurrency,
                    limits=limits,
                    progress=progress,
                ),
            )
        )
    finally:
        progress.close()
    result = SweepResult(points=[point], timings=[timings], levels=[Level(name=point.label)])
    document = _write_document(
        args,
        cfg,
        scraper,
        result,
        deployment=deployment,
        scenario=scenario,
        started_at=started_at,
        tokenizer=counter.name,
        prompt_overhead_tokens=overhead,
        seed=args.seed,
    )
    _submit_if_asked(args, document)
    return 0


def _run_sessions(
    args: argparse.Namespace, cfg: EndpointConfig, deployment: Deployment, shape: SessionScenario
) -> int:
    """Multi-turn sessions: prompts depend on the answers, so there is no verification pass;
    the server's own usage counts every turn's context."""
    if args.processes > 1:
        raise CliError("--processes: sessions run in one client process")
    plan = _plan(args, args.concurrency or "1", _slo(args))
    try:
        counter = _counter(args, cfg)
        pool = WordPool.for_counter(counter)
        workload = SessionWorkload(
            PromptBuilder(counter, seed=args.seed, pool=pool), shape, seed=args.seed
        )
    except httpx.HTTPError as exc:
        raise CliError(f"cannot reach {cfg.url}: {exc}") from None
    preset = SESSION_PRESETS.get(args.scenario or "")
    # A preset with any parameter overridden is another scenario, not that preset.
    same = preset is not None and preset == shape.model_copy(update={"sessions": None})
    scenario = Scenario(
        preset=args.scenario if same else None,
        input_tokens=mean_context_tokens(shape),
        output_tokens=shape.output_tokens,
        length_spread=0.0,
        prefix_cache_hit_rate=None,  # what the conversation itself reuses: measured per turn
        dataset=session_dataset(shape),
        arrival="open" if args.rate else "closed",
        warmup_requests=args.warmup,
        duration_s=args.duration,
        request_count=args.requests,
        slo=plan.slo,
        sessions=shape,
    )
    scraper = _scraper(args, cfg)
    started_at = datetime.now(UTC)
    result = SweepResult()
    progress = ProgressBar(enabled=not args.quiet)
    interrupted = _drive(
        run_session_sweep(cfg, workload, plan, result=result, progress=progress), scraper, progress
    )
    if not result.points:
        print("inferboard-worker bench: no level finished; nothing written", file=sys.stderr)
        return 130 if interrupted else 1
    document = _write_document(
        args,
        cfg,
        scraper,
        result,
        deployment=deployment,
        scenario=scenario,
        started_at=started_at,
        interrupted=interrupted,
        tokenizer=counter.name,
        api=cfg.api,
        seed=args.seed,
    )
    for point in document.points:
        for turn in point.turns or []:
            hit = turn.prefix_cache_hit_rate
            ttft = turn.ttft_ms.p50 if turn.ttft_ms else None
            print(
                f"{point.label:>12}  turn {turn.turn:>3}  context "
                f"{turn.context_tokens_mean or 0:8.0f} tok  TTFT p50 "
                f"{'-' if ttft is None else f'{ttft:.1f}'} ms  cache hit "
                f"{'not reported' if hit is None else f'{hit:.1%}'}",
                file=sys.stderr,
            )
    _submit_if_asked(args, document)
    return 130 if interrupted else 0


def _write_document(
    args: argparse.Namespace,
    cfg: EndpointConfig,
    scraper: Scraper | None,
    result: SweepResult,
    *,
    deployment: Deployment,
    scenario: Scenario,
    started_at: datetime,
    interrupted: bool = False,
    revision: bool = True,
    **extra: Any,
) -> ResultDocument:
    """Every run path ends here: the finished levels as a document, written to --out with its
    request records beside it, and summarized on stderr. `extra` goes to environment.extra.
    `revision` marks revision-2 content; server metrics make a document revision 2 anyway."""
    if args.no_records:
        for point in result.points:
            point.records = None
    document = make_document(
        model=ModelInfo(name=args.model, family=args.model_family),
        deployment=deployment,
        scenario=scenario,
        result=result,
        started_at=started_at,
        interrupted=interrupted,
        extra={**_attach_server_metrics(args, cfg, scraper, result), **extra},
    )
    if revision or any(point.server is not None for point in document.points):
        document.schema_revision = SCHEMA_REVISION
    document.labels = gate.labels(args)
    jsonl = write_outputs(document, result, args.out)
    print(f"wrote {args.out} and {jsonl}", file=sys.stderr)
    _summary(document)
    return document


def _drive(sweep: Coroutine[Any, Any, Any], scraper: Scraper | None, progress: ProgressBar) -> bool:
    """Run the sweep with the server scrape beside it; True when Ctrl-C ended it (the levels
    that finished are kept in the sweep's result)."""
    try:
        asyncio.run(_scraped(scraper, sweep))
    except KeyboardInterrupt:
        return True
    finally:
        progress.close()
    return False


def _submit_if_asked(args: argparse.Namespace, document: ResultDocument) -> None:
    if args.submit:
        token = args.token or os.environ.get("INFERBOARD_TOKEN")
        run_id = submit(document, args.submit, token)
        print(f"submitted as run {run_id} (key {document.idempotency_key})", file=sys.stderr)


def _summary(document: ResultDocument) -> None:
    def fmt(value: float | None, digits: int) -> str:
        return "-" if value is None else f"{value:.{digits}f}"

    def per_gpu(value: float | None) -> float | None:
        return None if value is None else value / document.deployment.gpus

    for point in document.points:
        lat = point.latency_ms
        counts = point.requests
        hit = point.prefix_cache_hit_rate
        print(
            f"{point.label:>12}  ok {counts.succeeded if counts else '?'}"
            f"/{counts.total if counts else '?'}  "
            f"out {fmt(point.throughput.output_tok_s, 1)} tok/s "
            f"({fmt(per_gpu(point.throughput.output_tok_s), 1)}/GPU)  "
            f"TTFT p50 {fmt(lat.ttft.p50 if lat.ttft else None, 1)} ms  "
            f"TPOT p50 {fmt(lat.tpot.p50 if lat.tpot else None, 2)} ms  "
            f"cache hit {'not reported' if hit is None else f'{hit:.1%}'}" + _marks(point),
            file=sys.stderr,
        )


def _marks(point: Point) -> str:
    """Why a point cannot stand for its scenario, loudly, at the end of its summary line."""
    marks = []
    if point.prompt_length_mismatch_rate:
        marks.append(f"LENGTH MISMATCH {point.prompt_length_mismatch_rate:.0%}")
    if point.client_bound and point.client is not None:
        lag = point.client.loop_lag_p99_ms
        marks.append(
            f"CLIENT-BOUND cpu {point.client.cpu_utilization:.0%}"
            + (f", loop lag p99 {lag:.1f} ms" if lag is not None else "")
        )
    return "".join(f"  [{m}]" for m in marks)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="inferboard-worker")
    subparsers = parser.add_subparsers(dest="command", required=True)
    register(subparsers)
    args = parser.parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
