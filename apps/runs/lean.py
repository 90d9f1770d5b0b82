"""A compact in-memory form of a result document's request records, for ingestion.

A document's records dominate its size (100,000 of them in ~21 MB of JSON). Validated into
`workers.results.RequestRecord` models they cost ~1.5 KB each (a model, its `__dict__`, boxed
floats): 7x the document. Ingestion validates the same fields with the same constraints into
slotted dataclasses instead (no per-record dict), so its memory stays near the document's
size, and error paths and messages are those of the public model (one definition: the fields
are taken from `RequestRecord`, not restated).
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import ConfigDict, Field
from pydantic.dataclasses import dataclass as pydantic_dataclass

from workers import results as doc


def _record_row() -> type:
    annotations: dict[str, Any] = {}
    defaults: dict[str, Any] = {}
    for name, info in doc.RequestRecord.model_fields.items():
        annotations[name] = (
            Annotated[info.annotation, *info.metadata] if info.metadata else info.annotation
        )
        if not info.is_required():
            defaults[name] = info.default
    namespace = {"__annotations__": annotations, **defaults, "__module__": __name__}
    config = ConfigDict(extra="forbid", allow_inf_nan=False)
    # kw_only: required and optional fields keep the model's order.
    return pydantic_dataclass(slots=True, kw_only=True, config=config)(
        type("RecordRow", (), namespace)
    )


RecordRow = _record_row()


class LeanPoint(doc.Point):
    # RecordRow is a class made at import (_record_row), which mypy cannot read as a type.
    records: list[RecordRow] | None = None  # type: ignore[valid-type]


class LeanDocument(doc.ResultDocument):
    # A narrower field than the base's (its points hold slotted record rows): pydantic reads
    # it so; mypy calls narrowing a mutable field's type unsafe.
    points: list[LeanPoint] = Field(default_factory=list)  # type: ignore[assignment]
