"""Parameter types shared by the routers, with the ranges the OpenAPI document states.

Every number the API takes says its range in its schema, so the OpenAPI document says what the
API accepts and the API accepts what it says (issue 53): a value outside is a 422 naming the
field, and a value inside is one the formulas behind it compute with (none overflows, rounds to
nothing or divides by zero). Booleans are not numbers here, though pydantic's lax mode would
read `false` as 0.
"""

from collections.abc import Mapping
from typing import Annotated, Any

from ninja import Schema
from pydantic import (
    AllowInfNan,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    Strict,
    field_validator,
    model_validator,
)

from workers.result_fields import NUL, NotBoolean


def _holds_nul(value: Any) -> bool:
    if isinstance(value, str):
        return NUL in value
    if isinstance(value, list | tuple):
        return any(_holds_nul(item) for item in value)
    if isinstance(value, dict):
        return any(_holds_nul(key) or _holds_nul(item) for key, item in value.items())
    return False


# In a JSON body a number is a JSON number: "1.5" is text, and pydantic's lax mode would read
# it as 1.5 although the schema says number. Query strings are text by nature, so a model
# used there stays lax; a body-only model is STRICT_BODY (its integers are Whole, so 8.0 is
# still 8), and a field of a dataclass in a body is Annotated[..., JSON_NUMBER].
STRICT_BODY = ConfigDict(strict=True, allow_inf_nan=False)
JSON_NUMBER = Strict()


class Input(Schema):
    """A request's parameters or body: an object (ninja's Schema would read `true` or `"x"`
    as an object with every field at its default), and no text in it holds a NUL character
    (PostgreSQL stores none), a 422 naming the field, as the OpenAPI document's pattern on
    every string says (apps/api/api.py). Fields it does not declare are ignored, never
    refused."""

    @model_validator(mode="before")
    @classmethod
    def _an_object(cls, value: Any) -> Any:
        given = getattr(value, "_obj", value)  # ninja hands its DjangoGetter over the input
        if not isinstance(given, Mapping | BaseModel):
            raise ValueError("must be an object")
        return value

    @field_validator("*", mode="after", check_fields=False)
    @classmethod
    def _no_nul(cls, value: Any) -> Any:
        if _holds_nul(value):
            raise ValueError("must not contain a NUL character (\\u0000)")
        return value


# A number in a query string or a body that must be finite: "nan", "inf" and "1e999" are a 422
# naming the parameter (pydantic's float accepts them). Query schemas say the same with
# `model_config = ConfigDict(allow_inf_nan=False)`; tests/faults/test_request_shapes.py checks
# every number parameter in the OpenAPI document.
def _integral(value: Any) -> Any:
    # JSON Schema counts 8.0 as an integer; a strict body's int field would refuse it.
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


Integral = BeforeValidator(_integral)
Finite = Annotated[float, NotBoolean, AllowInfNan(False)]
# An integer in a query or a body: not a boolean, 8.0 read as 8. (An optional one bounds
# itself inside: `Whole | None = Field(None, ge=1)` would lose its bound from the schema.)
Whole = Annotated[int, NotBoolean, Integral]
PositiveWhole = Annotated[int, Field(ge=1), NotBoolean, Integral]
NonNegativeWhole = Annotated[int, Field(ge=0), NotBoolean, Integral]

# Bounded numbers. In each, the bounds come before the validators: after one, pydantic leaves
# them out of the JSON schema. A model field may also bound a Finite itself
# (`x: Finite = Field(1.0, ge=0, le=10)`), which pydantic documents the same way.
_NUMBER = (NotBoolean, AllowInfNan(False))
# A row's id in a path or a query: what a bigint column holds (a larger one is a 422, not a
# database error).
RowId = Annotated[int, Field(ge=1, le=2**63 - 1), NotBoolean, Integral]
# The quantities the cost formulas take.
UsdPerGpuHour = Annotated[float, Field(ge=0, le=1e6), *_NUMBER]
# What a price is divided by (the claim's side B): at least a millionth of a dollar.
DivisorUsdPerGpuHour = Annotated[float, Field(ge=1e-6, le=1e6), *_NUMBER]
UsdPerMtok = Annotated[float, Field(ge=0, le=1e9), *_NUMBER]
TokPerS = Annotated[float, Field(ge=1e-6, le=1e12), *_NUMBER]
Gpus = Annotated[int, Field(ge=1, le=1_000_000), NotBoolean, Integral]
Share = Annotated[float, Field(ge=0, le=1), *_NUMBER]
Weight = Annotated[float, Field(ge=0, le=1e6), *_NUMBER]
Ratio = Annotated[float, Field(ge=1e-6, le=1e6), *_NUMBER]
Tokens = Annotated[float, Field(ge=1, le=1e9), *_NUMBER]
KwPerGpu = Annotated[float, Field(ge=1e-3, le=1000), *_NUMBER]
RequestsPerDay = Annotated[float, Field(ge=1e-3, le=1e12), *_NUMBER]
RequestsPerS = Annotated[float, Field(ge=1e-6, le=1e9), *_NUMBER]
NonNegativeMetric = Annotated[float, Field(ge=0), *_NUMBER]
# SLO bounds: seconds of latency, tok/s/user of interactivity.
SloSeconds = Annotated[float, Field(ge=1e-6, le=1e6), *_NUMBER]
SloTokPerS = Annotated[float, Field(ge=1e-6, le=1e9), *_NUMBER]
