"""Answer extraction and scoring.

GSM8K is scored three ways so that our numbers can be set beside lm-eval's:

- `em_strict` and `em_flexible` reproduce lm-evaluation-harness's gsm8k task exactly:
  lm_eval/tasks/gsm8k/gsm8k.yaml (task metadata version 3.0, commit 47f16bf6), its `regex`
  filter (lm_eval/filters/extraction.py RegexFilter, commit a06c80e6) followed by
  `take_first`, and `exact_match_hf_evaluate` (lm_eval/api/metrics.py) with the yaml's
  `regexes_to_ignore` [",", "\\$", "(?s).*#### ", "\\.$"] and `ignore_case: true`.
- `exact_match_numeric` is ours: take the `#### X` answer when there is one, else the last
  number; drop `$` and thousands commas, keep the sign, compare as decimals (18.00 == 18).

GPQA takes the letter after `Answer:` (simple-evals' rule, with the deviations noted at
GPQA_ANSWER).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

LMEVAL_STRICT = r"#### (\-?[0-9\.\,]+)"
LMEVAL_FLEXIBLE = r"(-?[$0-9.,]{2,})|(-?[0-9]+)"
LMEVAL_IGNORE = (",", r"\$", r"(?s).*#### ", r"\.$")

# A number as people write it: optional sign (not a minus between two operands, as in
# "10-5"), optional dollar sign, digits with optional thousands commas, optional decimals.
NUMBER = r"(?:(?<![\w)])-)?\$?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?"

# simple-evals' ANSWER_PATTERN_MULTICHOICE is r"(?i)Answer[ \t]*:[ \t]*\$?([A-D])\$?" taken
# with re.search (first match). We differ in three ways, each to stop a wrong extraction:
# the letter must not start a word ("Answer: Because ..." is not B), markdown bold is removed
# first ("**Answer:** C"), and the last match wins (the prompt asks for it on the last line).
GPQA_ANSWER = r"(?i)Answer[ \t]*:[ \t]*[\$\(\[]*([A-D])(?![A-Za-z0-9])"


def truncate_at_stop(text: str, stop: tuple[str, ...] | list[str]) -> str:
    """Cut at the earliest stop string, as servers that ignore `stop` would not."""
    cut = len(text)
    for s in stop:
        at = text.find(s)
        if at != -1:
            cut = min(cut, at)
    return text[:cut]


def split_reasoning(text: str) -> tuple[str, bool]:
    """Remove <think>...</think> blocks; an unclosed <think> hides the rest of the text.

    Returns the visible text and whether any reasoning was removed.
    """
    visible = re.sub(r"(?s)<think>.*?</think>", "", text)
    had_reasoning = visible != text
    if "<think>" in visible:
        visible = visible.split("<think>", 1)[0]
        had_reasoning = True
    return visible, had_reasoning


# --- lm-evaluation-harness gsm8k -------------------------------------------------------------


def lmeval_regex_filter(text: str, pattern: str, group_select: int) -> str | None:
    """lm-eval's RegexFilter: findall, pick one match, first non-empty group, strip.

    None stands for lm-eval's "[invalid]" fallback.
    """
    matches = re.findall(pattern, text)
    if not matches:
        return None
    match = matches[group_select]
    if isinstance(match, tuple):
        groups = [g for g in match if g]
        if not groups:
            return None
        match = groups[0]
    return match.strip()


def lmeval_normalise(text: str) -> str:
    for pattern in LMEVAL_IGNORE:
        text = re.sub(pattern, "", text)
    return text.lower()


def lmeval_strict(text: str) -> str | None:
    return lmeval_regex_filter(text, LMEVAL_STRICT, 0)


def lmeval_flexible(text: str) -> str | None:
    return lmeval_regex_filter(text, LMEVAL_FLEXIBLE, -1)


def lmeval_match(extracted: str | None, gold: str) -> bool:
    """exact_match with the gsm8k yaml's settings; gold may be the full solution text."""
    if extracted is None:
        return False
    return lmeval_normalise(extracted) == lmeval_normalise(gold)


# --- our numeric scorer ----------------------------------------------------------------------


def numeric_extract(text: str) -> str | None:
    """The `#### X` answer when it parses as a number, else the last number in the text."""
    strict = lmeval_strict(text)
    if strict is not None and parse_number(strict) is not None:
        return strict
    numbers = re.findall(NUMBER, text)
    return numbers[-1] if numbers else None


def parse_number(text: str) -> Decimal | None:
    cleaned = text.strip().replace(",", "").replace("$", "").rstrip(".")
    try:
        value = Decimal(cleaned)
    except InvalidOperation:
        return None
    return value if value.is_finite() else None


def numeric_match(extracted: str | None, gold: str) -> bool:
    if extracted is None:
        return False
    got, want = parse_number(extracted), parse_number(gsm8k_gold(gold))
    return got is not None and want is not None and got == want


def gsm8k_gold(answer: str) -> str:
    """The final answer of a GSM8K solution ("... #### 1,000" -> "1,000")."""
    return answer.rsplit("####", 1)[-1].strip()


# --- GPQA ------------------------------------------------------------------------------------


def gpqa_extract(text: str) -> str | None:
    letters = re.findall(GPQA_ANSWER, text.replace("**", ""))
    return letters[-1].upper() if letters else None


# --- one response, every rule ----------------------------------------------------------------


@dataclass(frozen=True)
class Scored:
    extracted: str | None
    correct: bool


def score_gsm8k(response: str, gold_solution: str) -> dict[str, Scored]:
    """All three GSM8K rules on one (already stop-truncated) response."""
    strict, flexible = lmeval_strict(response), lmeval_flexible(response)
    numeric = numeric_extract(response)
    return {
        "exact_match_numeric": Scored(numeric, numeric_match(numeric, gold_solution)),
        "em_strict": Scored(strict, lmeval_match(strict, gold_solution)),
        "em_flexible": Scored(flexible, lmeval_match(flexible, gold_solution)),
    }


def score_gpqa(response: str, gold_letter: str) -> dict[str, Scored]:
    letter = gpqa_extract(response)
    return {"exact_match_choice": Scored(letter, letter == gold_letter)}
