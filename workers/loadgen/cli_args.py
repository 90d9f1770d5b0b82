"""The bench command's flags, and their translation into an endpoint, a deployment, a scenario
and a load plan.
"""

from __future__ import annotations

import argparse
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from workers import slo as slo_rule
from workers.loadgen import gate
from workers.loadgen.client import EndpointConfig
from workers.loadgen.client_load import ClientLimits
from workers.loadgen.load_spec import LoadSpec
from workers.loadgen.prompts import (
    CalibratedCounter,
    EndpointTokenizer,
    LocalTokenizer,
    TokenCounter,
    usage_probe,
)
from workers.loadgen.runner import parse_concurrency
from workers.loadgen.sessions import SESSION_PRESETS
from workers.result_facts import Deployment, SessionScenario, Slo
from workers.result_fields import validation_problems
from workers.scenario_presets import SCENARIO_PRESETS


@dataclass(frozen=True)
class Preset:
    input_tokens: int
    output_tokens: int
    prefix_hit_rate: float
    concurrency: str | None = None
    description: str = ""


# From the one preset table the server's catalog is made from (workers/scenario_presets.py):
# a run submitted under a preset's name states the shape the server holds for it.
PRESETS = {
    p["slug"]: Preset(
        p["input_tokens"],
        p["output_tokens"],
        p.get("prefix_cache_hit_rate", 0.0),
        ",".join(str(level) for level in p["concurrency"]),
        p["name"],
    )
    for p in SCENARIO_PRESETS
}


class CliError(Exception):
    """A bad flag or file: printed as one clear message, exit code 2."""


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


def deployment_facts(args: argparse.Namespace) -> Deployment:
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
        problems = validation_problems(exc)
        raise CliError(f"deployment facts are incomplete or wrong ({problems})") from None


def endpoint_config(args: argparse.Namespace) -> EndpointConfig:
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


def scenario_numbers(args: argparse.Namespace) -> tuple[int, int, float, str | None]:
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


def load_spec(args: argparse.Namespace, concurrency: str | None) -> LoadSpec:
    """The load the flags ask for, each refusal naming its flag; `concurrency` is the flag's
    text or the preset's levels."""
    try:
        if args.rate:
            rates = [float(r) for r in args.rate.split(",") if r.strip()]
            if not rates or any(r <= 0 for r in rates):
                raise ValueError("rates must be positive")
            levels: list[int] = []
        else:
            rates, levels = [], parse_concurrency(concurrency or "1")
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
    try:
        return LoadSpec(
            concurrency=levels or [1],
            rates=rates or None,
            requests=args.requests,
            duration_s=args.duration,
            warmup=args.warmup,
            seed=args.seed,
            arrival=args.arrival,
            burstiness=args.burstiness,
            max_concurrency=args.max_concurrency,
            prefix_groups=args.prefix_groups,
            early_stop=not args.no_early_stop,
            processes=args.processes,
            client_cpu_limit=args.client_cpu_limit,
            client_lag_limit_ms=args.client_lag_limit_ms,
        )
    except ValidationError as exc:
        raise CliError(f"load: {_flag_problems(exc)}") from None


def _flag_problems(exc: ValidationError) -> str:
    """pydantic's errors as the flags that caused them: `--prefix-groups: ...`."""
    flags = {"duration_s": "duration", "early_stop": "no-early-stop", "rates": "rate"}
    return "; ".join(
        f"--{flags.get(str(e['loc'][0]), str(e['loc'][0])).replace('_', '-')}: {e['msg']}"
        if e["loc"]
        else e["msg"]
        for e in exc.errors(include_url=False)
    )


def token_counter(args: argparse.Namespace, cfg: EndpointConfig) -> TokenCounter:
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


def _slo_percentile(text: str) -> float:
    """A percentile that is stored (workers/slo.py), as the document's number."""
    try:
        return float(slo_rule.percentile_name(text).removeprefix("p"))
    except slo_rule.SloError as exc:
        raise argparse.ArgumentTypeError(exc.message) from None


def session_shape(args: argparse.Namespace) -> SessionScenario | None:
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


def slo_limits(args: argparse.Namespace) -> Slo | None:
    if not (args.slo_ttft_ms or args.slo_tpot_ms or args.slo_e2el_ms):
        return None
    return Slo(
        ttft_ms=args.slo_ttft_ms,
        tpot_ms=args.slo_tpot_ms,
        e2el_ms=args.slo_e2el_ms,
        ttft_percentile=args.slo_percentile,
    )
