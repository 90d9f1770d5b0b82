"""Facts derived from what a peer file states: scenario lengths from measured token counts.

A file that states what each request sent (per-request arrays, measured means) or totals
that divide exactly by the request count states its lengths, so the user is never asked
for them. Each derived length is labelled: environment.extra.scenario_lengths says from
what it was derived, the means it was rounded from and over how many requests. A length
the facts give is never derived (the facts win), each slot on its own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from workers.importers.common import ImportInput

SLOTS = ("input_tokens", "output_tokens")
Derived = tuple[dict[str, int], dict[str, Any]]


def _open_slots(job: ImportInput) -> list[str]:
    """The length slots the facts leave to the file."""
    given = job.facts.as_tree().get("scenario", {})
    return [slot for slot in SLOTS if slot not in given]


def lengths_from_means(
    job: ImportInput, means: Mapping[str, float | None], requests: int | None, derived: str
) -> Derived | None:
    """Rounded means of what `requests` successful requests measured, for the slots the facts
    leave open; None when nothing is derived. `requests` None: the file states means but
    not over how many requests (MLPerf's rates), and the label says none."""
    slots = [s for s in _open_slots(job) if means.get(s) is not None]
    if requests == 0 or not slots:
        return None
    kept = {slot: means[slot] for slot in slots}
    lengths = {slot: max(1, round(mean)) for slot, mean in kept.items() if mean is not None}
    label: dict[str, Any] = {"derived": derived, "means": kept}
    if requests is not None:
        label["requests"] = requests
    return lengths, label


def sequence_length_means(doc: Mapping[str, Any]) -> dict[str, float | None]:
    """The mean input and output tokens an aiperf or genai-perf export measured (their
    `input_sequence_length` / `output_sequence_length` statistics), by length slot."""
    return {
        slot: (doc.get(name) or {}).get("avg")
        for slot, name in (
            ("input_tokens", "input_sequence_length"),
            ("output_tokens", "output_sequence_length"),
        )
    }


def derived_lengths(
    job: ImportInput, sent: Sequence[tuple[float, float]], derived: str
) -> Derived | None:
    """Lengths from the successful requests' (input, output) token counts: the rounded means.

    For files that state what each request measured, not the lengths it asked for.
    """
    if not sent:
        return None
    means = {
        "input_tokens": sum(n_in for n_in, _ in sent) / len(sent),
        "output_tokens": sum(n_out for _, n_out in sent) / len(sent),
    }
    return lengths_from_means(job, means, len(sent), derived)


def lengths_from_totals(
    job: ImportInput, totals: Mapping[str, int | None], count: int | None, derived: str
) -> Derived | None:
    """Lengths from token totals over `count` successful requests, only where the total
    divides exactly (2,621,440 input tokens over 320 requests is 8,192 each).

    A quotient with a remainder is a mean of lengths that differ, which the file does not
    state as a target; such a slot stays open for the facts.
    """
    if not count:
        return None
    means = {
        slot: total // count
        for slot, total in totals.items()
        if isinstance(total, int) and total > 0 and total % count == 0
    }
    return lengths_from_means(job, means, count, derived) if means else None
