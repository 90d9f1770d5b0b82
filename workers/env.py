"""Typed reads of the environment, for the server's settings and the workers' own knobs alike.

Each reader takes the variable's name and its default, and a value it cannot read is an
`EnvError` naming the variable and what it holds (`JOB_MAX_LEVELS='3x' is not a whole
number`), raised when the process starts, never a bare `ValueError` from `int()` or a
quiet fallback. Written here rather than taken from django-environ because `workers/`
never imports Django and the GPU host's install has only what the workers use; an empty
value counts as unset, as it does in the deploy templates (`deploy/env.example`).
"""

import os

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


class EnvError(ValueError):
    """An environment variable holds a value its reader cannot take; the message names it."""


def _raw(name: str) -> str | None:
    value = os.environ.get(name)
    return None if value is None or not value.strip() else value.strip()


def env_str(name: str, default: str = "") -> str:
    value = os.environ.get(name)
    return default if value is None or value == "" else value


def env_bool(name: str, default: bool) -> bool:
    """Strict, as healthchecks' envbool: `DEBUG=flase` must not quietly mean anything."""
    value = _raw(name)
    if value is None:
        return default
    word = value.lower()
    if word not in _TRUE | _FALSE:
        words = ", ".join(sorted(_TRUE | _FALSE))
        raise EnvError(f"{name}={value!r} is not a boolean: use one of {words}")
    return word in _TRUE


def env_int(name: str, default: int, *, minimum: int | None = None) -> int:
    value = _raw(name)
    if value is None:
        return default
    try:
        number = int(value)
    except ValueError:
        raise EnvError(f"{name}={value!r} is not a whole number") from None
    return _at_least(name, value, number, minimum)


def env_optional_int(name: str, *, minimum: int | None = None) -> int | None:
    """A whole number, or None when unset (for a setting whose absence means "never")."""
    return None if _raw(name) is None else env_int(name, 0, minimum=minimum)


def env_float(name: str, default: float, *, minimum: float | None = None) -> float:
    value = _raw(name)
    if value is None:
        return default
    try:
        number = float(value)
    except ValueError:
        raise EnvError(f"{name}={value!r} is not a number") from None
    if number != number or number in (float("inf"), float("-inf")):
        raise EnvError(f"{name}={value!r} is not a finite number")
    return _at_least(name, value, number, minimum)


def env_list(name: str, default: list[str]) -> list[str]:
    """Comma-separated; blanks between commas are dropped."""
    value = _raw(name)
    if value is None:
        return default
    return [item.strip() for item in value.split(",") if item.strip()]


def env_int_list(name: str, default: list[int]) -> list[int]:
    """Comma-separated whole numbers (ports, say)."""
    if _raw(name) is None:
        return default
    numbers = []
    for item in env_list(name, []):
        try:
            numbers.append(int(item))
        except ValueError:
            raise EnvError(f"{name}: {item!r} is not a whole number") from None
    return numbers


def _at_least[N: (int, float)](name: str, value: str, number: N, minimum: N | None) -> N:
    if minimum is not None and number < minimum:
        raise EnvError(f"{name}={value!r} is below its least value, {minimum}")
    return number
