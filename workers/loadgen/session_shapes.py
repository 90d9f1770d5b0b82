"""Session presets and the facts derived from a session shape, with no I/O: the server's
catalog (apps/catalog/presets.py) reads them as the load generator does."""

from __future__ import annotations

from workers.result_facts import SessionScenario

# Parameters, not files: anyone can rebuild the same conversations from these numbers.
SESSION_PRESETS: dict[str, SessionScenario] = {
    # A person chatting: a short system prompt, short questions, longer answers.
    "chat": SessionScenario(
        kind="chat",
        turns=6,
        system_tokens=256,
        first_tokens=256,
        turn_tokens=128,
        output_tokens=256,
        think_time_s=0.0,
    ),
    # A coding agent: a long shared system prompt (tools), a task with repository context,
    # then many turns of tool output in and short tool calls out, with no human pause.
    "agentic-coding": SessionScenario(
        kind="agentic",
        turns=12,
        system_tokens=2048,
        first_tokens=1024,
        turn_tokens=768,
        output_tokens=96,
        think_time_s=0.0,
    ),
}


def mean_context_tokens(shape: SessionScenario) -> int:
    """The planned prompt length averaged over a session's turns (answers at full length)."""
    first = shape.system_tokens + shape.first_tokens
    grow = shape.output_tokens + shape.turn_tokens
    return round(first + grow * (shape.turns - 1) / 2)


def session_dataset(shape: SessionScenario) -> str:
    """The scenario's dataset name: every parameter of the shape, so that two shapes with
    the same mean context never share a scenario (the server keys scenarios by dataset)."""
    return (
        f"sessions-{shape.kind}-{shape.turns}t-sys{shape.system_tokens}-first"
        f"{shape.first_tokens}-turn{shape.turn_tokens}-out{shape.output_tokens}"
        f"-think{shape.think_time_s:g}s"
    )
