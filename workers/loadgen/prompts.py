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

import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import httpx

from workers.loadgen.client import EndpointConfig, RequestSpec
from workers.loadgen.metrics import LENGTH_TOLERANCE

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

    # Client processes (--processes) get a copy with a connection pool of their own.
    def __getstate__(self) -> dict[str, Any]:
        return {"cfg": self.cfg}

    def __setstate__(self, state: dict[str, Any]) -> None:
        # Unpickled in a client process: built again from its endpoint (a probe), which is
        # what __init__ does; mypy refuses any explicit __init__ call.
        self.__init__(state["cfg"])  # type: ignore[misc]

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

    def vocab_words(self, limit: int = 4000, scan: int = 16384) -> list[str]:
        """Whole-word tokens of the endpoint's vocabulary, where it lets us list them.

        llama.cpp states its vocabulary size (`/v1/models` meta) and detokenizes ids
        (`/detokenize`): ids are read in batches with a newline token between them. Any other
        server answers nothing here, and the pool is chosen from the fixed words alone.
        """
        try:
            models = self.http.get(self.cfg.root + "/v1/models", headers=self.cfg.request_headers())
            meta = (models.json().get("data") or [{}])[0].get("meta") or {}
            n_vocab = int(meta.get("n_vocab") or 0)
            newline = self._ids("\n")
            if not n_vocab or len(newline) != 1:
                return []
        except (httpx.HTTPError, ValueError, TypeError, KeyError, IndexError, AttributeError):
            return []
        words: list[str] = []
        batch = 128  # small: a batch holding a piece with a newline in it is skipped whole
        for start in range(0, min(n_vocab, scan), batch):
            ids = range(start, min(start + batch, n_vocab, scan))
            tokens = [t for i in ids for t in (i, newline[0])]
            try:
                answer = self.http.post(
                    self.cfg.root + "/detokenize",
                    json={"tokens": tokens},
                    headers=self.cfg.request_headers(),
                )
                pieces = str(answer.json().get("content", "")).split("\n")
            except (httpx.HTTPError, ValueError, AttributeError):
                return words
            if len(pieces) != len(ids) + 1:
                continue  # a piece held a newline itself: this batch cannot be split
            for piece in pieces[:-1]:
                if piece[:1] == " " and _VOCAB_WORD.fullmatch(piece[1:]):
                    words.append(piece[1:])
                    if len(words) >= limit:
                        return words
        return words

    def _ids(self, text: str) -> list[int]:
        body = {"content": text, "add_special": False}
        response = self.http.post(
            self.cfg.root + "/tokenize", json=body, headers=self.cfg.request_headers()
        )
        response.raise_for_status()
        return [int(t) for t in response.json()["tokens"]]

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


class LocalTokenizer:
    """Any Hugging Face `tokenizer.json`, through the `tokenizers` library itself.

    The library applies the file's own normalizer and pre-tokenizer (GPT-2, Llama 3, Qwen,
    GLM and SentencePiece-style files all differ there), so counts match the model's.
    Special tokens are left out: the template overhead is measured separately.
    """

    name = "tokenizer.json"

    def __init__(self, path: str | Path) -> None:
        from tokenizers import Tokenizer

        try:
            self.tokenizer = Tokenizer.from_file(str(path))
        except Exception as exc:  # the library raises plain Exception for a bad file
            raise ValueError(f"{path}: not a Hugging Face tokenizer.json ({exc})") from None

    def count(self, text: str) -> int:
        return len(self.tokenizer.encode(text, add_special_tokens=False).ids)

    def vocab_words(self, limit: int = 4000) -> list[str]:
        """Alphabetic whole-word tokens of the vocabulary (lowest ids first: the commonest
        merges), as candidates for the word pool."""
        words: list[str] = []
        for token, _ in sorted(self.tokenizer.get_vocab().items(), key=lambda kv: kv[1]):
            # Byte-level files mark a leading space with "Ġ", SentencePiece ones with "▁".
            if token[:1] in ("Ġ", "▁") and _VOCAB_WORD.fullmatch(token[1:]):
                words.append(token[1:])
                if len(words) >= limit:
                    break
        return words


_VOCAB_WORD = re.compile(r"[a-z]{2,12}")


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


# Appended with no space, these end a text with one more token on most tokenizers, where
# every word of the pool may be several (the fit's last step tries them all by count).
_FILLERS = (".", ",", ";", ":", "!", "?", "-", "'", "0", "1", "2", "3", "5", "7")


ENOUGH_WORDS = 512


@dataclass(frozen=True)
class WordPool:
    """The words prompts are made of, with each one's token cost after a space.

    Best: words the tokenizer makes one token each, so lengths add up word by word. Where
    the vocabulary has too few of them (a model built on another language), the cheapest
    candidates are kept and fitting works by count instead of by word.
    """

    words: tuple[str, ...]
    costs: tuple[int, ...]

    @classmethod
    def default(cls) -> WordPool:
        return cls(WORDS, (1,) * len(WORDS))

    @classmethod
    def for_counter(
        cls, counter: TokenCounter, candidates: tuple[str, ...] = (), minimum: int = 16
    ) -> WordPool:
        """Tokenize every candidate once (WORDS, then the tokenizer's own vocabulary words
        when it can list them) and keep the single-token ones."""
        listed = getattr(counter, "vocab_words", None)
        vocab = tuple(listed()) if callable(listed) else ()
        pool = dict.fromkeys((*WORDS, *vocab, *candidates))
        anchor = "x"
        base = counter.count(anchor)
        costs: dict[str, int] = {}
        single: list[str] = []
        for word in pool:
            costs[word] = counter.count(f"{anchor} {word}") - base
            if costs[word] == 1:
                single.append(word)
                if len(single) >= ENOUGH_WORDS:
                    break  # one /tokenize call per candidate: stop once variety is ample
        if len(single) >= minimum:
            return cls(tuple(single), (1,) * len(single))
        # Cheapest first; ties keep the candidates' order, so the pool is deterministic.
        cheapest = sorted((w for w in costs if costs[w] >= 1), key=lambda w: costs[w])
        chosen = tuple(cheapest[: 4 * minimum])
        if not chosen:  # a counter that sees no token in any word: nothing to learn from
            return cls.default()
        return cls(chosen, tuple(costs[w] for w in chosen))

    @property
    def mean_cost(self) -> float:
        return sum(self.costs) / len(self.costs)


@dataclass
class PromptBuilder:
    """Builds texts of exactly n text tokens under `counter` (not counting overhead)."""

    counter: TokenCounter
    seed: int = 0
    pool: WordPool = field(default_factory=WordPool.default)

    def words(self, n: int, rng: random.Random) -> list[str]:
        return [rng.choice(self.pool.words) for _ in range(max(0, n))]

    def fit(self, n_tokens: int, rng: random.Random, lead: str = "") -> str:
        """`lead` then words, n_tokens tokens in all; the closest found below if none is exact.

        Converges for any tokens-per-word ratio: a proportional step on the word count
        (secant on the measured ratio), kept inside a bracket that bisection narrows, finds
        the most words that fit; then words and fillers are tried at the end to make up the
        last few tokens. A lead starting with a space makes a text that is appended after
        another one, so it is counted exactly as it will appear.
        """
        if n_tokens <= 0:
            return lead
        count = self.counter.count
        words: list[str] = []

        def text(k: int) -> str:
            while len(words) < k:
                words.extend(self.words(max(64, k - len(words)), rng))
            body = "".join(" " + w for w in words[:k])
            return lead + body if lead else body[1:]

        base = count(lead) if lead else 0
        if base >= n_tokens:
            return lead
        lo, lo_count = 0, base  # the most words known to fit, and their count
        hi: int | None = None  # the fewest words known to overshoot
        k = max(1, round((n_tokens - base) / self.pool.mean_cost))
        for _ in range(64):
            got = count(text(k))
            if got == n_tokens:
                return text(k)
            if got < n_tokens:
                lo, lo_count = k, got
            else:
                hi = k
            if hi is not None and hi - lo <= 1:
                break
            # Proportional step from the ratio seen so far, then clamped into the bracket.
            ratio = max((got - base) / k, 1e-3) if k else self.pool.mean_cost
            k_next = k + round((n_tokens - got) / ratio)
            if k_next <= lo or (hi is not None and k_next >= hi):
                k_next = (lo + hi) // 2 if hi is not None else lo * 2 + 1
            k = k_next
        return self._top_up(text(lo), lo_count, n_tokens)

    def _top_up(self, text: str, got: int, n_tokens: int) -> str:
        """Append pool words or fillers to make up the last tokens, each try checked by count.

        A word's cost after another word can differ from its cost alone, so nothing here is
        assumed: each candidate is counted in place, cheapest first.
        """
        count = self.counter.count
        order = sorted(range(len(self.pool.words)), key=lambda i: self.pool.costs[i])
        candidates = [" " + self.pool.words[i] for i in order[:32]] + list(_FILLERS)
        for _ in range(n_tokens - got):
            best: tuple[int, str] | None = None
            for piece in candidates:
                trial = text + piece
                trial_count = count(trial)
                if trial_count == n_tokens:
                    return trial
                if got < trial_count < n_tokens and (best is None or trial_count > best[0]):
                    best = (trial_count, trial)
            if best is None:
                break
            got, text = best
        return text


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
        # Prompts built for the verification pass, kept (within a memory budget) so the
        # measured requests do not fit them again while the clock runs.
        self._built: dict[int, RequestSpec] = {}
        self._built_chars = 0

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
        built = self._built.pop(k, None)
        if built is not None:
            return built
        return self._request(k, k % max(1, len(self.prefixes)))

    def build(self, count: int, keep_chars: int = 256 * 2**20) -> list[RequestSpec]:
        """The first `count` requests, kept for `spec` while they fit in `keep_chars`."""
        specs = []
        for k in range(count):
            spec = self._built.get(k) or self._request(k, k % max(1, len(self.prefixes)))
            if k not in self._built and self._built_chars + len(spec.prompt) <= keep_chars:
                self._built[k] = spec
                self._built_chars += len(spec.prompt)
            specs.append(spec)
        return specs


@dataclass(frozen=True)
class LengthCheck:
    """The verification pass: planned prompts counted before any is measured."""

    counter: str
    checked: int
    missed: int
    tolerance: int
    worst: tuple[tuple[int, int], ...]  # (target, counted) of the farthest misses

    @property
    def rate(self) -> float:
        return self.missed / self.checked if self.checked else 0.0

    def message(self) -> str:
        shown = ", ".join(f"{got} for {target}" for target, got in self.worst)
        return (
            f"{self.missed} of {self.checked} prompts miss their input length by more than "
            f"±{self.tolerance} token(s) by the {self.counter} tokenizer ({shown})"
        )


def verify_lengths(
    specs: list[RequestSpec],
    counter: TokenCounter,
    overhead: int,
    tolerance: int = LENGTH_TOLERANCE,
) -> LengthCheck:
    """Count every planned prompt (text + template overhead) against its target."""
    misses: list[tuple[int, int]] = []
    for spec in specs:
        if spec.target_n_in is None:
            continue
        got = counter.count(spec.prompt) + overhead
        if abs(got - spec.target_n_in) > tolerance:
            misses.append((spec.target_n_in, got))
    misses.sort(key=lambda m: -abs(m[1] - m[0]))
    checked = sum(s.target_n_in is not None for s in specs)
    return LengthCheck(counter.name, checked, len(misses), tolerance, tuple(misses[:3]))


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
        PromptBuilder(counter, seed=seed, pool=WordPool.for_counter(counter)),
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        prefix_hit_rate=prefix_hit_rate,
        groups=groups,
        overhead=overhead,
        length_spread=length_spread,
        seed=seed,
    )
    return workload, overhead
