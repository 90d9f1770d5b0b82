"""The result document's field types and limits, the strict base every part of it builds on,
and the checks of free-form JSON. Never imports Django (GPU hosts run the worker alone).
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    model_validator,
)
from pydantic_core import PydanticCustomError

# Limits a document must keep: the server's columns are 32-bit integers (counts, sizes) and
# 64-bit ones (token totals), and free-form JSON (environment.extra) is bounded so that one
# document cannot starve the server that stores and serves it.
INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1
MAX_JSON_DEPTH = 32
MAX_EXTRA_BYTES = 1024 * 1024

Provenance = Literal["measured", "imported", "published", "simulated"]


def _not_a_boolean(value: Any) -> Any:
    # JSON's true and false are not numbers, though pydantic's lax mode reads them as 1 and 0.
    if isinstance(value, bool):
        raise ValueError("must be a number, not true or false")
    return value


NotBoolean = BeforeValidator(_not_a_boolean)
# The bounds come before the validator: after one, pydantic leaves them out of the schema.
NonNegative = Annotated[float, Field(ge=0), NotBoolean]
Rate = Annotated[float, Field(ge=0, le=1), NotBoolean]
Count = Annotated[int, Field(ge=0, le=INT32_MAX), NotBoolean]
Size = Annotated[int, Field(ge=1, le=INT32_MAX), NotBoolean]
TokenTotal = Annotated[int, Field(ge=0, le=INT64_MAX), NotBoolean]
ShortText = Annotated[str, Field(min_length=1, max_length=200)]
# Free labels of a run (branch, commit, pr, "unofficial" ...); the CLI's --label checks these.
LABEL_KEY_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.:/-]{0,49}$"
MAX_LABELS = 20
MAX_LABEL_VALUE = 200
LabelKey = Annotated[str, Field(pattern=LABEL_KEY_PATTERN)]
LabelValue = Annotated[str, Field(min_length=1, max_length=MAX_LABEL_VALUE, pattern=r"^[^\x00]*$")]
NUL = "\x00"


class StrictModel(BaseModel):
    # Unknown fields are errors: a typo in a field name must not silently drop a measurement.
    # NaN and infinities are not numbers a measurement can have (and not JSON).
    model_config = ConfigDict(extra="forbid", frozen=False, allow_inf_nan=False)

    @model_validator(mode="after")
    def _no_nul(self) -> StrictModel:
        # PostgreSQL stores no NUL character in text; say which field has one.
        for name, value in self.__dict__.items():
            texts = value if isinstance(value, list) else (value,)
            if isinstance(value, dict):
                texts = tuple(value)
            if any(isinstance(text, str) and NUL in text for text in texts):
                raise ValueError(f"{name} must not contain a NUL character (\\u0000)")
        return self


def json_problem(value: Any, limit: int = MAX_JSON_DEPTH) -> str | None:
    """What makes free-form JSON unstorable (too deep, NUL, not finite, too large an
    integer), with its path; None when it is fine. Iterative: depth cannot overflow it."""
    stack: list[tuple[Any, tuple[int | str, ...]]] = [(value, ())]
    while stack:
        item, loc = stack.pop()
        where = json_path(loc) if loc else "the value"
        if len(loc) > limit:
            return f"{where}: nested deeper than {limit} levels"
        if isinstance(item, str) and NUL in item:
            return f"{where}: must not contain a NUL character (\\u0000)"
        if isinstance(item, float) and not math.isfinite(item):
            return f"{where}: must be a finite number"
        if isinstance(item, int) and not isinstance(item, bool) and abs(item) > INT64_MAX:
            return f"{where}: must be between -{INT64_MAX} and {INT64_MAX}"
        if isinstance(item, dict):
            for key, child in item.items():
                if NUL in str(key):
                    return f"{where}: a key must not contain a NUL character (\\u0000)"
                stack.append((child, (*loc, str(key))))
        elif isinstance(item, list):
            stack.extend((child, (*loc, index)) for index, child in enumerate(item))
    return None


def field_problem(field: str, message: str) -> PydanticCustomError:
    """A model's cross-field check that is about one of its fields: the error's path names
    that field (`deployment.gpus`), not only the model (`deployment`). A custom error, not a
    ValueError, because its context must survive as plain values: django-ninja turns a
    ValueError in the context into text before the API's error handler sees it."""
    return PydanticCustomError(FIELD_PROBLEM, "{message}", {"field": field, "message": message})


FIELD_PROBLEM = "field_problem"


def error_loc(error: Any) -> tuple[int | str, ...]:
    """A pydantic error's location, down to the field a field_problem names."""
    loc = tuple(error["loc"])
    if error.get("type") == FIELD_PROBLEM:
        return (*loc, (error.get("ctx") or {})["field"])
    return loc


def json_path(loc: tuple[int | str, ...]) -> str:
    """('points', 3, 'latency_ms', 'ttft', 'p99') -> 'points[3].latency_ms.ttft.p99'."""
    path = ""
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        else:
            path += f".{part}" if path else str(part)
    return path or "(document)"


def validation_problems(exc: ValidationError) -> str:
    """Every problem pydantic found, one 'path: message' each, joined for one error line."""
    return "; ".join(
        f"{json_path(error_loc(e))}: {e['msg']}" for e in exc.errors(include_url=False)
    )
