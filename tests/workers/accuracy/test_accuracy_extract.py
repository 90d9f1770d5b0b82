"""Golden table: where lm-eval's gsm8k rules and our numeric scorer agree and where they differ."""

from __future__ import annotations

import pytest

from workers.accuracy.extract import (
    gpqa_extract,
    gsm8k_gold,
    lmeval_flexible,
    lmeval_strict,
    numeric_extract,
    parse_number,
    score_gsm8k,
    split_reasoning,
    truncate_at_stop,
)

RESTATED_FEW_SHOT = (
    "Natalia sold 48/2 = 24 clips in May.\nNatalia sold 48+24 = 72 clips.\n#### 72\n\n"
    "Question: Weng earns $12 an hour for babysitting. How much did she earn?\n"
    "Answer: Weng earns 12/60 = $0.2 per minute.\n#### 10"
)

# (label, response, gold, strict (extracted, correct), flexible (...), numeric (...))
GSM8K_TABLE = [
    (
        "all agree on a plain answer",
        "She makes 9 * 2 = $18 every day.\n#### 18",
        "#### 18",
        ("18", True),
        ("18", True),
        ("18", True),
    ),
    (
        "$18.00 after ####: strict cannot take '$', flexible keeps the .00",
        "She makes $18.00.\n#### $18.00",
        "#### 18",
        (None, False),
        ("$18.00", False),
        ("$18.00", True),
    ),
    (
        "18.00 is 18 only to the numeric scorer",
        "The total is 18.00 dollars.\n#### 18.00",
        "#### 18",
        ("18.00", False),
        ("18.00", False),
        ("18.00", True),
    ),
    (
        "a negative answer keeps its sign everywhere",
        "The temperature falls 5 degrees from 2 to -3.\n#### -3",
        "#### -3",
        ("-3", True),
        ("-3", True),
        ("-3", True),
    ),
    (
        "a negative answer in prose: strict finds no ####",
        "So the balance is -3.",
        "#### -3",
        (None, False),
        ("-3.", True),
        ("-3", True),
    ),
    (
        "thousands separators are removed by all three",
        "In total 1,234 apples.\n#### 1,234",
        "#### 1234",
        ("1,234", True),
        ("1,234", True),
        ("1,234", True),
    ),
    (
        "a gold with commas matches a prediction without",
        "#### 1000",
        "The total is 1,000.\n#### 1,000",
        ("1000", True),
        ("1000", True),
        ("1000", True),
    ),
    (
        "restated few-shot answers: flexible takes the invented last answer",
        RESTATED_FEW_SHOT,
        "#### 72",
        ("72", True),
        ("10", False),
        ("72", True),
    ),
    (
        "a trailing full stop is ignored",
        "The answer is 18.",
        "#### 18",
        (None, False),
        ("18.", True),
        ("18", True),
    ),
    (
        "dollars and cents: lm-eval compares text, 1234.50 is not 1234.5",
        "It costs $1,234.50 in all.",
        "#### 1234.5",
        (None, False),
        ("$1,234.50", False),
        ("$1,234.50", True),
    ),
    (
        "a boxed answer",
        "Adding up, the answer is \\boxed{18}",
        "#### 18",
        (None, False),
        ("18", True),
        ("18", True),
    ),
    (
        "a minus between operands is not a sign",
        "The difference is 10-5",
        "#### 5",
        (None, False),
        ("-5", False),
        ("5", True),
    ),
    (
        "a letter answer has no number at all",
        "The answer is (B)",
        "#### 18",
        (None, False),
        (None, False),
        (None, False),
    ),
    ("an empty output", "", "#### 18", (None, False), (None, False), (None, False)),
]


@pytest.mark.parametrize(
    ("label", "response", "gold", "strict", "flexible", "numeric"),
    GSM8K_TABLE,
    ids=[row[0] for row in GSM8K_TABLE],
)
def test_gsm8k_rules_on_the_golden_table(
    label: str,
    response: str,
    gold: str,
    strict: tuple[str | None, bool],
    flexible: tuple[str | None, bool],
    numeric: tuple[str | None, bool],
) -> None:
    scored = score_gsm8k(response, gold)
    got = {name: (s.extracted, s.correct) for name, s in scored.items()}
    assert got == {"em_strict": strict, "em_flexible": flexible, "exact_match_numeric": numeric}


def test_the_table_shows_each_rule_disagreeing_with_the_others() -> None:
    verdicts = [
        tuple(score_gsm8k(response, gold)[m].correct for m in ("em_strict", "em_flexible"))
        + (score_gsm8k(response, gold)["exact_match_numeric"].correct,)
        for _, response, gold, *_ in GSM8K_TABLE
    ]
    assert (True, True, True) in verdicts
    assert (False, False, True) in verdicts  # 18.00
    assert (True, False, True) in verdicts  # restated few-shot answers
    assert (False, True, True) in verdicts  # no ####


def test_strict_takes_the_first_answer_and_flexible_the_last() -> None:
    text = "#### 3\n#### 4"
    assert lmeval_strict(text) == "3"
    assert lmeval_flexible(text) == "4"


def test_stop_strings_cut_a_restated_few_shot_answer() -> None:
    cut = truncate_at_stop(RESTATED_FEW_SHOT, ("Question:", "</s>", "<|im_end|>"))
    assert cut.endswith("#### 72\n\n")
    assert all(s.correct for s in score_gsm8k(cut, "#### 72").values())


def test_flexible_extract_can_pick_up_punctuation_runs_like_lm_eval() -> None:
    # lm-eval's first alternative matches any two of [$0-9.,]: an ellipsis is an "answer".
    assert lmeval_flexible("I am not sure...") == "..."
    assert numeric_extract("I am not sure...") is None


def test_numbers_parse_with_sign_dollars_and_commas() -> None:
    assert parse_number("-$1,234.50") == parse_number("-1234.5")
    assert parse_number("18.00") == parse_number("18")
    assert parse_number("1.2.3") is None
    assert parse_number("...") is None


def test_the_gold_answer_is_what_follows_the_last_marker() -> None:
    assert gsm8k_gold("Janet sells 16 - 3 - 4 = 9 eggs.\n#### 1,000") == "1,000"


GPQA_TABLE = [
    ("a plain last line", "Let me think.\nAnswer: B", "B"),
    ("markdown bold", "Reasoning...\n**Answer:** C", "C"),
    ("lower case", "answer: d", "D"),
    ("LaTeX dollars", "Answer: $A$", "A"),
    ("parenthesised", "Answer: (B)", "B"),
    ("'The answer is (B)' has no 'Answer:'", "The answer is (B)", None),
    ("a word starting with a letter is not a choice", "Answer: Because of symmetry", None),
    ("the last answer wins", "Maybe Answer: A at first.\nAnswer: C", "C"),
    ("an empty output", "", None),
]


@pytest.mark.parametrize(
    ("label", "response", "letter"), GPQA_TABLE, ids=[row[0] for row in GPQA_TABLE]
)
def test_gpqa_answer_extraction_on_the_golden_table(
    label: str, response: str, letter: str | None
) -> None:
    assert gpqa_extract(response) == letter


def test_reasoning_blocks_are_not_searched_for_answers() -> None:
    visible, had = split_reasoning("<think>Answer: A? no</think>Answer: C")
    assert (visible, had) == ("Answer: C", True)
    assert split_reasoning("<think>still thinking, Answer: A") == ("", True)
    assert split_reasoning("Answer: C") == ("Answer: C", False)
