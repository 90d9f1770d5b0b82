"""Protocols and data: pinned data, exemplars never scored, prompts, hashes, refusals.

GPQA text must never be printed: assertions here only compare ids, letters, counts and
booleans computed beforehand, so a failure cannot echo a question.
"""

from __future__ import annotations

import csv
import json
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest

from workers.accuracy.data import DataError, content_hash, load, read_rows
from workers.accuracy.protocols import (
    GPQA_DIAMOND,
    GSM8K_TEST,
    get_protocol,
    prepare,
    protocol_hash,
)


def test_the_packaged_gsm8k_test_set_matches_its_pinned_rows_and_hash() -> None:
    dataset = load(GSM8K_TEST)
    assert len(dataset.rows) == 1319
    assert dataset.content_sha256 == GSM8K_TEST.content_sha256
    assert dataset.packaged


def test_the_packaged_gpqa_diamond_set_matches_its_pinned_rows_and_hash() -> None:
    dataset = load(GPQA_DIAMOND)
    assert len(dataset.rows) == 198
    assert dataset.content_sha256 == GPQA_DIAMOND.content_sha256
    assert len({row.item_id for row in dataset.rows}) == 198


def test_gsm8k_exemplars_are_excluded_and_the_scored_n_is_reported() -> None:
    prepared = prepare(get_protocol("gsm8k-5shot-v1"))
    scored_ids = {item.item_id for item in prepared.items}
    assert len(prepared.fewshot_ids) == 5
    assert scored_ids.isdisjoint(prepared.fewshot_ids)
    assert prepared.available == len(prepared.items) == 1314


def test_the_completions_prompt_follows_lm_evals_gsm8k_layout() -> None:
    prepared = prepare(get_protocol("gsm8k"), limit=1)
    prompt = prepared.items[0].prompt
    assert prompt is not None
    blocks = prompt.split("\n\n")
    assert len(blocks) == 6
    assert all(
        b.startswith("Question: ") and "\nAnswer: " in b and "#### " in b for b in blocks[:5]
    )
    assert blocks[5].startswith("Question: Janet") and blocks[5].endswith("\nAnswer:")


def test_the_chat_variant_sends_exemplars_as_turns() -> None:
    item = prepare(get_protocol("gsm8k-5shot-chat-v1"), limit=1).items[0]
    assert item.prompt is None and item.messages is not None
    assert [m["role"] for m in item.messages] == ["user", "assistant"] * 5 + ["user"]
    assert item.messages[-1]["content"].endswith("\nAnswer:")


def test_a_limit_takes_the_first_items_and_keeps_the_protocol_hash() -> None:
    full = prepare(get_protocol("gsm8k"))
    limited = prepare(get_protocol("gsm8k"), limit=20)
    assert [i.item_id for i in limited.items] == [i.item_id for i in full.items[:20]]
    assert limited.protocol_hash == full.protocol_hash
    assert limited.available == 1314


def test_the_protocol_hash_is_stable_and_moves_with_anything_pinned() -> None:
    protocol = get_protocol("gsm8k")
    base = protocol_hash(protocol, GSM8K_TEST.content_sha256, ["a"])
    assert base == protocol_hash(protocol, GSM8K_TEST.content_sha256, ["a"])
    assert base != protocol_hash(
        replace(protocol, max_tokens=512), GSM8K_TEST.content_sha256, ["a"]
    )
    assert base != protocol_hash(replace(protocol, stop=()), GSM8K_TEST.content_sha256, ["a"])
    assert base != protocol_hash(protocol, "0" * 64, ["a"])
    assert base != protocol_hash(protocol, GSM8K_TEST.content_sha256, ["b"])


def write_gsm8k(path: Path, records: list[dict]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


def gsm8k_records() -> list[dict]:
    return [{"question": r.question, "answer": r.answer} for r in load(GSM8K_TEST).rows]


def test_a_file_with_a_missing_row_is_refused_with_its_count_and_hash(tmp_path: Path) -> None:
    short = tmp_path / "short.jsonl"
    write_gsm8k(short, gsm8k_records()[:-1])
    with pytest.raises(DataError) as raised:
        prepare(get_protocol("gsm8k"), data_path=short)
    message = str(raised.value)
    assert "1318 rows" in message and "pins 1319 rows" in message
    assert "--data-sha256" in message


def test_an_edited_answer_with_the_same_row_count_is_refused(tmp_path: Path) -> None:
    records = gsm8k_records()
    records[7]["answer"] = records[7]["answer"].rsplit("####", 1)[0] + "#### 999999"
    edited = tmp_path / "edited.jsonl"
    write_gsm8k(edited, records)
    with pytest.raises(DataError, match="Refusing to run"):
        load(GSM8K_TEST, edited)


def test_the_same_content_laid_out_differently_is_accepted(tmp_path: Path) -> None:
    records = [{"id": i, **r, "extra": "ignored"} for i, r in enumerate(gsm8k_records())]
    reformatted = tmp_path / "reformatted.jsonl"
    reformatted.write_text("".join(json.dumps(r, indent=None) + "\n" for r in records))
    dataset = load(GSM8K_TEST, reformatted)
    assert dataset.content_sha256 == GSM8K_TEST.content_sha256
    assert not dataset.packaged


def test_a_users_own_file_runs_when_its_hash_is_named(tmp_path: Path) -> None:
    own = tmp_path / "own.jsonl"
    write_gsm8k(
        own, [{"question": f"What is {i} + 1?", "answer": f"#### {i + 1}"} for i in range(8)]
    )
    expected = content_hash_of(own)
    prepared = prepare(get_protocol("gsm8k"), data_path=own, expected_sha256=expected)
    assert len(prepared.items) == 3  # 8 rows minus 5 exemplars
    assert prepared.dataset.content_sha256 == expected
    with pytest.raises(DataError, match="not the"):
        prepare(get_protocol("gsm8k"), data_path=own, expected_sha256="0" * 64)


def content_hash_of(path: Path) -> str:
    return content_hash(read_rows("gsm8k-jsonl", path))


def test_a_malformed_line_is_reported_by_line_number(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question": "q", "answer": "#### 1"}\nnot json\n')
    with pytest.raises(DataError, match=r"bad.jsonl:2:"):
        load(GSM8K_TEST, bad)


def test_gpqa_repeats_each_question_with_a_fixed_shuffle() -> None:
    first = prepare(get_protocol("gpqa"))
    second = prepare(get_protocol("gpqa-diamond-cot-v1"))
    assert len(first.items) == first.available == 198 * 4
    assert [(i.item_id, i.gold) for i in first.items] == [(i.item_id, i.gold) for i in second.items]
    assert first.items[0].item_id.endswith(":r0") and first.items[3].item_id.endswith(":r3")
    letters = Counter(item.gold for item in first.items)
    assert set(letters) == {"A", "B", "C", "D"}
    assert min(letters.values()) > 792 / 4 * 0.7  # shuffled, not always "A"


def test_the_gpqa_gold_letter_points_at_the_correct_answer() -> None:
    prepared = prepare(get_protocol("gpqa"), limit=5)
    rows = {row.item_id: row for row in prepared.dataset.rows}
    agree = []
    for item in prepared.items:
        row = rows[item.item_id.rsplit(":", 1)[0]]
        text = item.messages[0]["content"] if item.messages else ""
        agree.append(f"\n{item.gold}) {row.correct}\n" in text + "\n")
    assert agree == [True] * 20


def test_gpqa_text_stays_out_of_reprs() -> None:
    prepared = prepare(get_protocol("gpqa"), limit=3)
    rows = prepared.dataset.rows[:3]
    leaked = any(
        row.question[:40] in repr(row)
        or row.question[:40] in repr(item)
        or row.question[:40] in repr(prepared)
        for row in rows
        for item in prepared.items
    )
    assert leaked is False


def test_an_altered_gpqa_file_is_refused_without_quoting_it(tmp_path: Path) -> None:
    source = load(GPQA_DIAMOND)
    with open(source.path, encoding="utf-8", newline="") as handle:
        records = list(csv.DictReader(handle))
    original = records[0]["Question"]
    records[0]["Question"] = original + " (edited)"
    altered = tmp_path / "gpqa.csv"
    with altered.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(records[0]))
        writer.writeheader()
        writer.writerows(records)
    with pytest.raises(DataError) as raised:
        load(GPQA_DIAMOND, altered)
    message = str(raised.value)
    quoted = original[:40] in message
    assert quoted is False
    assert "198 rows" in message


def test_an_unknown_protocol_lists_the_known_ones() -> None:
    with pytest.raises(ValueError, match="gsm8k-5shot-v1"):
        get_protocol("mmlu")
