"""Named, versioned accuracy protocols and the prompts they produce.

A protocol pins everything that changes a score: prompt template, few-shot exemplars, stop
strings, max tokens, temperature, seed, extraction rules, chat vs completions, and the data
(row count and content hash). Its hash goes into every result, so two scores with the same
protocol hash were produced the same way. Changing any of it means a new version name.
"""

from __future__ import annotations

import hashlib
import json
import random
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from workers.accuracy import extract
from workers.accuracy.data import Dataset, DataSpec, GpqaRow, Gsm8kRow, load

GSM8K_TEST = DataSpec(
    name="gsm8k-test",
    format="gsm8k-jsonl",
    package_path="data/gsm8k/test.jsonl",
    rows=1319,
    content_sha256="3fb31cfaeb4e270b7a44e0f3d244d96494e3c0956e699a1670ba24af1522cabd",
)
GPQA_DIAMOND = DataSpec(
    name="gpqa-diamond",
    format="gpqa-csv",
    package_path="data/gpqa/gpqa_diamond.csv",
    rows=198,
    content_sha256="fcc943eec020f2ba4e2830474cc14634f4a9bd290d3b3f6ab20bf12e7106400a",
)

# lm-evaluation-harness gsm8k (yaml version 3.0): "Question: {q}\nAnswer:" with the target after
# one space, shots joined by a blank line, stop at "Question:", greedy, 256 new tokens.
GSM8K_TEMPLATE = "Question: {question}\nAnswer:"

# simple-evals' QUERY_TEMPLATE_MULTICHOICE (zero-shot chain of thought).
GPQA_TEMPLATE = (
    "Answer the following multiple choice question. The last line of your response should be "
    "of the following format: 'Answer: $LETTER' (without quotes) where LETTER is one of ABCD. "
    "Think step by step before answering.\n\n{question}\n\nA) {A}\nB) {B}\nC) {C}\nD) {D}"
)

Endpoint = Literal["completions", "chat"]


@dataclass(frozen=True)
class Protocol:
    name: str
    task: Literal["gsm8k", "gpqa-diamond"]
    data: DataSpec
    endpoint: Endpoint
    template: str
    metrics: tuple[str, ...]  # the first is the headline metric
    extraction: dict[str, str]
    stop: tuple[str, ...] = ()
    max_tokens: int = 256
    temperature: float = 0.0
    seed: int = 1234
    num_fewshot: int = 0
    fewshot_seed: int = 1234
    fewshot_multiturn: bool = False
    repeats: int = 1
    shuffle_seed: int = 1234
    keep_response: bool = True  # False for GPQA: its text must not leave this process
    notes: str = ""

    @property
    def primary_metric(self) -> str:
        return self.metrics[0]

    def spec(self) -> dict[str, Any]:
        spec = asdict(self)
        spec["data"] = asdict(self.data)
        spec["stop"] = list(self.stop)
        spec["metrics"] = list(self.metrics)
        return spec


GSM8K_METRICS = ("exact_match_numeric", "em_strict", "em_flexible")
GSM8K_EXTRACTION = {
    "exact_match_numeric": f"first '{extract.LMEVAL_STRICT}' else last '{extract.NUMBER}'; "
    "drop $ and commas, keep sign, compare as decimals",
    "em_strict": f"lm-eval strict-match: '{extract.LMEVAL_STRICT}' first match",
    "em_flexible": f"lm-eval flexible-extract: '{extract.LMEVAL_FLEXIBLE}' last match",
    "normalise_lm_eval": f"remove {list(extract.LMEVAL_IGNORE)}, lower case",
}

GSM8K_5SHOT = Protocol(
    name="gsm8k-5shot-v1",
    task="gsm8k",
    data=GSM8K_TEST,
    endpoint="completions",
    template=GSM8K_TEMPLATE,
    metrics=GSM8K_METRICS,
    extraction=GSM8K_EXTRACTION,
    stop=("Question:", "</s>", "<|im_end|>"),
    max_tokens=256,
    num_fewshot=5,
    notes="lm-eval gsm8k layout; exemplars drawn from the test file and excluded",
)

PROTOCOLS: dict[str, Protocol] = {
    p.name: p
    for p in (
        GSM8K_5SHOT,
        replace(
            GSM8K_5SHOT,
            name="gsm8k-5shot-chat-v1",
            endpoint="chat",
            fewshot_multiturn=True,
            notes="as gsm8k-5shot-v1, shots as chat turns (lm-eval --fewshot_as_multiturn)",
        ),
        Protocol(
            name="gpqa-diamond-cot-v1",
            task="gpqa-diamond",
            data=GPQA_DIAMOND,
            endpoint="chat",
            template=GPQA_TEMPLATE,
            metrics=("exact_match_choice",),
            extraction={"exact_match_choice": f"'{extract.GPQA_ANSWER}' last match, ** removed"},
            max_tokens=8192,
            repeats=4,
            keep_response=False,
            notes="simple-evals prompt; choices shuffled per question and repeat",
        ),
    )
}

ALIASES = {
    "gsm8k": "gsm8k-5shot-v1",
    "gsm8k-chat": "gsm8k-5shot-chat-v1",
    "gpqa": "gpqa-diamond-cot-v1",
    "gpqa-diamond": "gpqa-diamond-cot-v1",
}


def get_protocol(name: str) -> Protocol:
    key = ALIASES.get(name, name)
    if key not in PROTOCOLS:
        known = ", ".join(sorted([*PROTOCOLS, *ALIASES]))
        raise ValueError(f"unknown protocol {name!r}; known: {known}")
    return PROTOCOLS[key]


@dataclass(frozen=True)
class EvalItem:
    item_id: str
    gold: str  # GSM8K: the full solution (scorers take the final answer); GPQA: a letter
    prompt: str | None = field(default=None, repr=False)
    messages: list[dict[str, str]] | None = field(default=None, repr=False)


@dataclass(frozen=True)
class PreparedEval:
    protocol: Protocol
    dataset: Dataset
    items: list[EvalItem] = field(repr=False)
    fewshot_ids: list[str]
    available: int  # scorable rows (or rows x repeats) before --limit
    limit: int | None
    protocol_hash: str


def protocol_hash(protocol: Protocol, data_sha256: str, fewshot_ids: list[str]) -> str:
    payload = {"protocol": protocol.spec(), "data_sha256": data_sha256, "fewshot": fewshot_ids}
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()


def prepare(
    protocol: Protocol,
    data_path: str | Path | None = None,
    expected_sha256: str | None = None,
    limit: int | None = None,
) -> PreparedEval:
    """Load and verify the data, pick exemplars, and build every prompt in protocol order."""
    if limit is not None and limit < 1:
        raise ValueError("limit must be >= 1")
    dataset = load(protocol.data, data_path, expected_sha256)
    if protocol.task == "gsm8k":
        items, fewshot_ids, available = _gsm8k_items(protocol, dataset, limit)
    else:
        items, fewshot_ids, available = _gpqa_items(protocol, dataset, limit)
    return PreparedEval(
        protocol=protocol,
        dataset=dataset,
        items=items,
        fewshot_ids=fewshot_ids,
        available=available,
        limit=limit,
        protocol_hash=protocol_hash(protocol, dataset.content_sha256, fewshot_ids),
    )


def _gsm8k_items(
    protocol: Protocol, dataset: Dataset, limit: int | None
) -> tuple[list[EvalItem], list[str], int]:
    rows = [r for r in dataset.rows if isinstance(r, Gsm8kRow)]
    if len(rows) <= protocol.num_fewshot:
        raise ValueError(f"{len(rows)} rows cannot supply {protocol.num_fewshot} exemplars")
    # Exemplars come from the scored file, so they are taken out of it: never scored.
    picks = random.Random(protocol.fewshot_seed).sample(range(len(rows)), protocol.num_fewshot)
    shots = [rows[i] for i in picks]
    shot_ids = {r.item_id for r in shots}
    scored = [r for r in rows if r.item_id not in shot_ids]
    available = len(scored)
    if limit is not None:
        scored = scored[:limit]
    items = []
    for row in scored:
        question = protocol.template.format(question=row.question)
        if protocol.endpoint == "completions":
            blocks = [protocol.template.format(question=s.question) + " " + s.answer for s in shots]
            items.append(EvalItem(row.item_id, row.answer, prompt="\n\n".join([*blocks, question])))
        else:
            messages: list[dict[str, str]] = []
            for s in shots:
                messages.append(
                    {"role": "user", "content": protocol.template.format(question=s.question)}
                )
                messages.append({"role": "assistant", "content": s.answer})
            messages.append({"role": "user", "content": question})
            items.append(EvalItem(row.item_id, row.answer, messages=messages))
    return items, [r.item_id for r in shots], available


def _gpqa_items(
    protocol: Protocol, dataset: Dataset, limit: int | None
) -> tuple[list[EvalItem], list[str], int]:
    rows = [r for r in dataset.rows if isinstance(r, GpqaRow)]
    available = len(rows) * protocol.repeats
    if limit is not None:
        rows = rows[:limit]  # --limit counts questions; each still gets every repeat
    items = []
    for row in rows:
        for repeat in range(protocol.repeats):
            options = [row.correct, *row.incorrect]
            order = [0, 1, 2, 3]  # shuffle positions, not texts: two options may read alike
            # A string seed is hashed (sha512) by random.Random: stable across runs and hosts.
            random.Random(f"{protocol.shuffle_seed}:{row.item_id}:{repeat}").shuffle(order)
            choices = [options[i] for i in order]
            gold = "ABCD"[order.index(0)]
            text = protocol.template.format(
                question=row.question, A=choices[0], B=choices[1], C=choices[2], D=choices[3]
            )
            items.append(
                EvalItem(
                    f"{row.item_id}:r{repeat}", gold, messages=[{"role": "user", "content": text}]
                )
            )
    return items, [], available


def score(protocol: Protocol, response: str, gold: str) -> dict[str, extract.Scored]:
    if protocol.task == "gsm8k":
        return extract.score_gsm8k(response, gold)
    return extract.score_gpqa(response, gold)
