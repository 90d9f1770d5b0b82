"""Prompts of an exact token length, without a model hub, and the shared-prefix dataset.

Token counts come from, in order of preference:
1. the endpoint's own tokenizer route (`/tokenize` on llama.cpp, vLLM and sglang),
2. a local `tokenizer.json` (byte-level BPE, GPT-2 style) given by path,
3. calibration from `usage.prompt_tokens` of probe requests (tokens per word + overhead).
The server's special tokens and chat template add tokens the text does not have: one
probe request measures that overhead. Every request's `usage.prompt_tokens` is still
checked against its target and the mismatch rate reported, so exactness is measured.

Prompts are space-separated common English words: nearly every tokenizer makes " word"
one token, and a word boundary never merges across, so lengths add up.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import httpx

from workers.loadgen.client import EndpointConfig, RequestSpec

# Common words that are single tokens in GPT-2, Llama 3, Qwen and DeepSeek vocabularies.
_WORD_TEXT = (
    "the of and to in is was for on that with as by at from his it an were are which this "
    "be or has had first one their its new after but who not they have her she two been "
    "other when there all during into school time may years more most only over city some "
    "world would where later up such used many can state about national out known united "
    "then made first three while these between high de both under well since him part "
    "also team through however being year before following four own area age club "
    "season several group began day game government best place de album second film "
    "music work family life end include house home water river name number line field "
    "general public early last long each under book south north west east young small "
    "great large given local side power main short major army same air law war court "
    "town church early hand head land light story road form point order case start "
    "open money market price trade food plant animal star black white green red blue"
)
# Distinct, in a fixed order: the dataset must not depend on set iteration order.
WORDS: tuple[str, ...] = tuple(dict.fromkeys(_WORD_TEXT.split()))


_WARMUP_KEY = 10**9
WARMUP_COPIES = 8


def code_words(key: int) -> str:
    """A number written in WORDS (base len(WORDS), least significant first): unique, and
    consecutive keys differ in their first word."""
    words = [WORDS[key % len(WORDS)]]
    key //= len(WORDS)
    while key:
        words.append(WORDS[key % len(WORDS)])
        key //= len(WORDS)
    return " ".join(words) + " ."


class TokenCounter(Protocol):
    name: str

    def count(self, text: str) -> int: ...


class EndpointTokenizer:
    """POST {root}/tokenize; llama.cpp reads 'content', vLLM and sglang read 'prompt'."""

    name = "endpoint"

    def __init__(self, cfg: EndpointConfig, http: httpx.Client | None = None) -> None:
        self.cfg = cfg
        self.http = http or httpx.Client(timeout=60)

    def count(self, text: str) -> int:
        body = {
            "model": self.cfg.model,
            "content": text,
            "prompt": text,
            "add_special": False,
            "add_special_tokens": False,
        }
        headers = self.cfg.request_headers()
        response = self.http.post(self.cfg.root + "/tokenize", json=body, headers=headers)
        response.raise_for_status()
        data = response.json()
        if isinstance(data.get("tokens"), list):
            return len(data["tokens"])
        if isinstance(data.get("count"), int):
            return int(data["count"])
        raise ValueError(f"unexpected /tokenize answer: {str(data)[:200]}")

    @classmethod
    def probe(cls, cfg: EndpointConfig) -> EndpointTokenizer | None:
        """The endpoint's tokenizer if it has a working /tokenize route, else None."""
        tokenizer = cls(cfg)
        try:
            if tokenizer.count("the city") >= 1:
                return tokenizer
        except (httpx.HTTPError, ValueError, KeyError):
            pass
        return None


def _bytes_to_unicode() -> dict[int, str]:
    """GPT-2's reversible map from bytes to printable characters."""
    printable = (
        list(range(ord("!"), ord("~") + 1))
        + list(range(ord("¡"), ord("¬") + 1))
        + list(range(ord("®"), ord("ÿ") + 1))
    )
    chars = printable[:]
    extra = 0
    for b in range(256):
        if b not in printable:
            printable.append(b)
            chars.append(256 + extra)
            extra += 1
    return dict(zip(printable, map(chr, chars), strict=True))


# GPT-2's pre-tokenizer, with Python's [^\W\d_] standing in for \p{L}.
_PRETOKEN = re.compile(r"""'s|'t|'re|'ve|'m|'ll|'d| ?[^\W\d_]+| ?\d+| ?[^\s\w]+|\s+(?!\S)|\s+""")


class LocalTokenizer:
    """Byte-level BPE from a Hugging Face `tokenizer.json` (GPT-2 style models)."""

    name = "tokenizer.json"

    def __init__(self, path: str | Path) -> None:
        data = json.loads(Path(path).read_text())
        model = data.get("model") or {}
        if model.get("type") != "BPE" or not isinstance(model.get("vocab"), dict):
            raise ValueError(f"{path}: only byte-level BPE tokenizer.json files are supported")
        self.vocab: dict[str, int] = model["vocab"]
        merges = [
            tuple(m.split(" ", 1)) if isinstance(m, str) else tuple(m)
            for m in model.get("merges", [])
        ]
        self.ranks = {pair: rank for rank, pair in enumerate(merges)}
        self.byte_map = _bytes_to_unicode()
        self._cache: dict[str, int] = {}  # words repeat: count each once

    def count(self, text: str) -> int:
        return sum(self._word_tokens(piece) for piece in _PRETOKEN.findall(text))

    def _word_tokens(self, piece: str) -> int:
        cached = self._cache.get(piece)
        if cached is not None:
            return cached
        parts = [self.byte_map[b] for b in piece.encode()]
        while len(parts) > 1:
            pairs = zip(parts, parts[1:], strict=False)
            ranked = [(self.ranks[p], k) for k, p in enumerate(pairs) if p in self.ranks]
            if not ranked:
                break
            _, k = min(ranked)
            parts[k : k + 2] = [parts[k] + parts[k + 1]]
        self._cache[piece] = len(parts)
        return len(parts)


def usage_probe(cfg: EndpointConfig, http: httpx.Client | None = None) -> Callable[[str], int]:
    """usage.prompt_tokens of a one-token, non-streaming request for this prompt."""
    client = http or httpx.Client(timeout=cfg.timeout_s)

    def probe(prompt: str) -> int:
        body: dict[str, Any] = {"model": cfg.model, "max_tokens": 1, "temperature": 0}
        if cfg.api == "chat":
            body["messages"] = [{"role": "user", "content": prompt}]
        else:
            body["prompt"] = prompt
        response = client.post(cfg.url, json=body, headers=cfg.request_headers())
        response.raise_for_status()
        return int(response.json()["usage"]["prompt_tokens"])

    return probe


class CalibratedCounter:
    """Tokens per word and fixed overhead fitted from two probe requests' usage."""

    name = "calibrated"

    def __init__(self, probe: Callable[[str], int], words: int = 200) -> None:
        rng = random.Random(7)
        short = " ".join(rng.choice(WORDS) for _ in range(words // 4))
        long = " ".join(rng.choice(WORDS) for _ in range(words))
        a, b = probe(short), probe(long)
        self.per_word = (b - a) / (words - words // 4)
        self.overhead = a - self.per_word * (words // 4)

    def count(self, text: str) -> int:
        # Text only: the overhead is measured separately by `template_overhead`.
        return round(self.per_word * len(text.split()))


def template_overhead(counter: TokenCounter, probe: Callable[[str], int]) -> int:
    """Tokens the server adds around the text (BOS, chat template), from one probe request."""
    text = " ".join(WORDS[:20])
    return probe(text) - counter.count(text)


@dataclass
class PromptBuilder:
    """Builds texts of exactly n text tokens under `counter` (not counting overhead)."""

    counter: TokenCounter
    seed: int = 0

    def words(self, n: int, rng: random.Random) -> list[str]:
        return [rng.choice(WORDS) for _ in range(max(0, n))]

    def fit(self, n_tokens: int, rng: random.Random, lead: str = "") -> str:
        """`lead` then words, n_tokens tokens in all; the closest found if none is exact.

        A lead starting with a space makes a text that is appended after another one, so it
        is counted exactly as it will appear.
        """
        if n_tokens <= 0:
            return lead
        pool = self.words(n_tokens + 64, rng)
        n = n_tokens
        best: tuple[int, str] | None = None
        for _ in range(8):
            text = lead + "".join(" " + w for w in pool[:n])
            text = text if lead else text[1:]
            got = self.counter.count(text)
            if best is None or abs(got - n_tokens) < best[0]:
                best = (abs(got - n_tokens), text)
            if got == n_tokens:
                return text
            n = max(0, min(len(pool), n + (n_tokens - got)))
        return best[1] if best else ""


class PromptWorkload:
    """Requests of exact input length, sharing prefixes to reach a target cache hit rate.

    With hit rate h and input N, each request is one of `groups` shared prefixes of about
    h*N tokens (overhead included: a template's leading tokens are cached too) followed by a
    unique suffix. Warm-up sends each prefix once so later requests can hit it; the rate
    actually reached is measured from `cached_tokens`, not assumed.
    """

    def __init__(
        self,
        builder: PromptBuilder,
        *,
        input_tokens: int,
        output_tokens: int,
        prefix_hit_rate: float = 0.0,
        groups: int = 1,
        overhead: int = 0,
        length_spread: float = 0.0,
        seed: int = 0,
    ) -> None:
        if not 0 <= prefix_hit_rate < 1:
            raise ValueError("prefix hit rate must be in [0, 1)")
        self.builder = builder
        self.input_tokens = input_tokens
        self.output_tokens = output_tokens
        self.overhead = overhead
        self.length_spread = length_spread
        self.seed = seed
        prefix_tokens = round(prefix_hit_rate * input_tokens) - overhead
        self.prefixes: list[str] = []
        if prefix_hit_rate > 0 and prefix_tokens > 0:
            for g in range(max(1, groups)):
                rng = random.Random(f"{seed}:prefix:{g}")
                # A group code first, so different groups diverge at their first word.
                self.prefixes.append(builder.fit(prefix_tokens, rng, lead=code_words(g)))
        self.prefix_counts = [builder.counter.count(p) for p in self.prefixes]

    def _lengths(self, rng: random.Random) -> tuple[int, int]:
        spread = self.length_spread
        n_in = (
            round(self.input_tokens * (1 + rng.uniform(-spread, spread)))
            if spread
            else self.input_tokens
        )
        n_out = (
            round(self.output_tokens * (1 + rng.uniform(-spread, spread)))
            if spread
            else self.output_tokens
        )
        return max(1, n_in), max(1, n_out)

    def _request(self, key: int, group: int, max_tokens: int | None = None) -> RequestSpec:
        # Seeded by the dataset's shape as well, so different scenarios never share text.
        rng = random.Random(f"{self.seed}:{self.input_tokens}:{len(self.prefixes)}:{key}")
        n_in, n_out = self._lengths(rng)
        if self.prefixes:
            prefix, prefix_count = self.prefixes[group], self.prefix_counts[group]
        else:
            prefix, prefix_count = "", 0
        suffix_tokens = max(1, n_in - self.overhead - prefix_count)
        # The request's own code leads the suffix, so suffixes diverge at their first word
        # and the cache hit stops where the shared prefix ends.
        lead = " " + code_words(key) if prefix else code_words(key)
        suffix = self.builder.fit(suffix_tokens, rng, lead=lead)
        prompt = prefix + suffix
        return RequestSpec(prompt=prompt, max_tokens=max_tokens or n_out, target_n_in=n_in)

    def warmup_specs(self, width: int) -> list[RequestSpec]:
        """Each prefix, sent by up to `width` (at most 8) concurrent requests.

        Engines with one shared prefix cache (vLLM, sglang) need one; llama.cpp keeps a cache
        per slot, and concurrent requests land on different slots.
        """
        copies = max(1, min(width, WARMUP_COPIES))
        groups = len(self.prefixes)
        # A few output tokens keep concurrent copies in flight together, so they spread
        # over slots instead of queueing for one. Keys far above any request index keep
        # warm-up prompts apart from measured ones.
        max_tokens = min(self.output_tokens, 16)
        return [
            self._request(_WARMUP_KEY + copy * groups + g, g, max_tokens=max_tokens)
            for copy in range(copies)
            for g in range(groups)
        ]

    def spec(self, k: int) -> RequestSpec:
        return self._request(k, k % max(1, len(self.prefixes)))


def scenario_workload(
    cfg: EndpointConfig,
    counter: TokenCounter,
    *,
    input_tokens: int,
    output_tokens: int,
    prefix_hit_rate: float,
    length_spread: float,
    seed: int,
    groups: int = 1,
) -> tuple[PromptWorkload, int]:
    """A scenario's prompts sized by `counter`, with the endpoint's template overhead (one
    probe request) counted in; returns the workload and that overhead."""
    overhead = template_overhead(counter, usage_probe(cfg))
    workload = PromptWorkload(
        PromptBuilder(counter, seed=seed),
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        prefix_hit_rate=prefix_hit_rate,
        groups=groups,
        overhead=overhead,
        length_spread=length_spread,
        seed=seed,
    )
    return workload, overhead
