"""The fast path of ingestion: request records validated and COPYed as a pipeline.

The general path (`workers.results.parse_document` into `apps.runs.lean`, then one
`copy.write_row` per record) makes three passes over 100,000 records before the database
sees the first one: a duplicate-key pass (`json.loads` with a Python hook), a validation
pass (pydantic), a row-building pass; and the database works only after all three. Here:

1. The document's text is cut into its skeleton (everything but the `points[k].records`
   arrays, which become `null`) and the records arrays, found by a scan that knows where
   strings are (quote parity, escapes counted). The skeleton goes through `parse_document`,
   the very validation the general path runs, so every field outside the records is checked
   (and reported) exactly as before.
2. Each records array is cut at record boundaries into chunks of ~256 KB. Chunk k+1 is parsed
   (orjson), checked column by column (a cheaper validator of the same constraints as
   `workers.results.RequestRecord`) and encoded into binary COPY rows (numpy, a run of
   records of one shape at a time), while chunk k travels to PostgreSQL and is stored
   there: psycopg's QueuedLibpqWriter sends from its own thread, which waits for the network
   without the GIL, and the server parses rows on its own core. One COPY carries every
   point's records.
3. Anything the cheap checks cannot vouch for (a bad value, a duplicate key, an odd layout)
   raises `Rejected`; the caller rolls the transaction back and runs the general path, which
   stores the document if it is valid after all, or raises the usual `DocumentError` naming
   each field path. So the fast path only ever accepts what the model accepts, and stores
   the same rows the general path would.

Memory: the document's bytes, its skeleton, one chunk's dicts, and the encoded rows queued
for the writer (about 140 bytes a record, less than the record's JSON).
"""

from __future__ import annotations

import re
import struct
from bisect import bisect_left
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from operator import itemgetter
from typing import Any, get_args

import numpy as np
import orjson

from apps.runs.lean import LeanDocument
from workers import results as doc
from workers.result_fields import INT32_MAX

CHUNK_BYTES = 256 * 1024
# PostgreSQL's binary COPY framing (https://www.postgresql.org/docs/current/sql-copy.html).
COPY_SIGNATURE = b"PGCOPY\n\xff\r\n\x00" + struct.pack(">ii", 0, 0)
COPY_TRAILER = struct.pack(">h", -1)

STATUSES = tuple(get_args(doc.RequestStatus))
RECORD_KEYS = frozenset(doc.RequestRecord.model_fields)
ERROR_MAX_CHARS = 500


class Rejected(Exception):
    """The fast path cannot vouch for this document: take the general one."""


_ESCAPED_QUOTE = re.compile(rb'\\+"')
_RECORDS_KEY = b'"records"'
_WS = b" \t\n\r"


class _Quotes:
    """Counts the quotes of a JSON text that open or close strings (not the escaped ones):
    a position is outside every string when the count before it is even."""

    def __init__(self, body: bytes) -> None:
        self.body = body
        self.escaped: list[int] = []
        self.backslashes = b"\\" in body
        if self.backslashes:
            for match in _ESCAPED_QUOTE.finditer(body):
                if (match.end() - match.start() - 1) % 2:  # an odd run escapes the quote
                    self.escaped.append(match.end() - 1)

    def count(self, start: int, end: int) -> int:
        n = self.body.count(b'"', start, end)
        if self.escaped:
            n -= bisect_left(self.escaped, end) - bisect_left(self.escaped, start)
        return n


@dataclass
class Span:
    """The text between a records array's brackets: body[start:end]."""

    start: int
    end: int


@dataclass
class Prepared:
    document: LeanDocument  # validated, every point's records None where a span holds them
    body: bytes
    quotes: _Quotes
    spans: list[Span | None]  # per point: its records' text, or None (records in document)


def _skip_ws(body: bytes, pos: int) -> int:
    while pos < len(body) and body[pos] in _WS:
        pos += 1
    return pos


def _records_spans(body: bytes, quotes: _Quotes) -> list[tuple[int, int]]:
    """(start, end) of each `"records": [ ... ]` array's contents, in text order. A key named
    records outside a point is found too; the caller checks where each one was."""
    spans = []
    pos = counted_to = count = 0
    while (at := body.find(_RECORDS_KEY, pos)) >= 0:
        count += quotes.count(counted_to, at)
        counted_to = at
        if count % 2:  # inside a string
            pos = at + 1
            continue
        after = _skip_ws(body, at + len(_RECORDS_KEY))
        if after >= len(body) or body[after] != ord(":"):
            pos = at + 1
            continue
        bracket = _skip_ws(body, after + 1)
        if bracket >= len(body) or body[bracket] != ord("["):
            pos = at + 1
            continue
        # Records are flat objects: the first ] outside a string closes the array (if they are
        # not flat, the chunks fail to parse and the general path decides).
        # Quotes counted once each (incrementally), whatever the text holds.
        end, inside = bracket, 0
        while True:
            found = body.find(b"]", end + 1)
            if found < 0:
                raise Rejected("unclosed records array")
            inside += quotes.count(end + 1, found)
            end = found
            if inside % 2 == 0:
                break
        spans.append((bracket + 1, end))
        count, counted_to = 0, end + 1  # outside strings again, as at the start
        pos = counted_to
    return spans


def prepare(body: bytes | str) -> Prepared:
    """Validate everything but the records arrays, exactly as `parse_document` does; raises
    Rejected when the document is better left to the general path."""
    if isinstance(body, str):
        try:
            body = body.encode()
        except UnicodeEncodeError:
            raise Rejected("not UTF-8") from None
    quotes = _Quotes(body)
    found = _records_spans(body, quotes)
    if not found:
        raise Rejected("no records")
    # Two skeletons, byte for byte the document elsewhere: one with a marker where each array
    # was (to check each was a point's records), one with null (validated as the document).
    token = _marker_token()
    marked, nulled, last = bytearray(), bytearray(), 0
    view = memoryview(body)
    for index, (start, end) in enumerate(found):
        marked += view[last : start - 1]
        nulled += view[last : start - 1]
        marked += b'"' + f"{token}{index}".encode() + b'"'
        nulled += b"null"
        last = end + 1
    marked += view[last:]
    nulled += view[last:]
    del view
    try:
        skeleton = orjson.loads(marked)
    except orjson.JSONDecodeError:
        raise Rejected("skeleton") from None
    del marked
    points = skeleton.get("points") if isinstance(skeleton, dict) else None
    if not isinstance(points, list):
        raise Rejected("no points")
    spans: list[Span | None] = []
    seen = 0
    for point in points:
        value = point.get("records") if isinstance(point, dict) else None
        if isinstance(value, str) and value == f"{token}{seen}":
            spans.append(Span(*found[seen]))
            seen += 1
        else:
            spans.append(None)
    if seen != len(found):  # a records array somewhere else than a point's records
        raise Rejected("records outside points")
    del skeleton
    try:
        document = doc.parse_document(bytes(nulled), LeanDocument)
    except doc.DocumentError:
        raise Rejected("invalid skeleton") from None  # the general path names every error
    if len(document.points) != len(spans):
        raise Rejected("points")
    return Prepared(document=document, body=body, quotes=quotes, spans=spans)


def _marker_token() -> str:
    import secrets

    # Unguessable, so no string of the document can pose as a marker.
    return f"records-{secrets.token_hex(16)}-"


def chunks(prepared: Prepared, span: Span) -> Iterator[tuple[list[Any], int, int]]:
    """(records, start, end) for each chunk of ~CHUNK_BYTES of the array: a parsed list of
    records and where its text lies, cut between two records."""
    body, quotes = prepared.body, prepared.quotes
    cur = _skip_ws(body, span.start)
    end_all = span.end
    while cur < end_all:
        cut = end_all
        if end_all - cur > CHUNK_BYTES:
            probe = cur + CHUNK_BYTES
            inside = quotes.count(cur, probe)  # then counted once each, incrementally
            while (brace := body.find(b"}", probe, end_all)) >= 0:
                inside += quotes.count(probe, brace)
                if inside % 2 == 0:
                    cut = brace + 1
                    break
                probe = brace + 1
        text = bytearray(b"[")
        text += memoryview(body)[cur:cut]
        text += b"]"
        try:
            records = orjson.loads(text)
        except orjson.JSONDecodeError:
            raise Rejected("chunk") from None
        del text
        yield records, cur, cut
        cur = _skip_ws(body, cut)
        if cur < end_all:
            if body[cur] != ord(","):
                raise Rejected("cut")
            cur = _skip_ws(body, cur + 1)
            if cur >= end_all:
                raise Rejected("trailing comma")


# --- the cheaper validator -------------------------------------------------------------------

_NONE = type(None)


def _types(values: Sequence[Any]) -> set[type]:
    return set(map(type, values))


def _ints(
    values: Sequence[Any] | None, *, nullable: bool, low: int, high: int, plain: bool
) -> tuple[np.ndarray, Any]:
    """int64 values and a null mask (None when no nulls): strict ints within [low, high].
    `values` None: the field is absent from every record. `plain`: the chunk's text proves
    the values are JSON numbers or nulls (no string, bool, array or object)."""
    if values is None:
        if not nullable:
            raise Rejected("required")
        return _ZEROS_INT, True
    array = None
    if plain:
        try:
            array = np.array(values)
        except ValueError:  # ragged containers
            array = None
    if array is None or array.dtype != np.int64 or array.ndim != 1:  # nulls, floats, ...
        kinds = _types(values)
        if not kinds <= ({int, _NONE} if nullable else {int}):
            raise Rejected("int")  # bool, float, str ...: the model decides
        nulls = None
        if _NONE in kinds:
            nulls = np.fromiter((v is None for v in values), dtype=bool, count=len(values))
            values = [0 if v is None else v for v in values]
        try:
            array = np.array(values, dtype=np.int64)
        except OverflowError:
            raise Rejected("int range") from None
    else:
        nulls = None
    out_of_bounds = len(array) and (array.min() < low or array.max() > high)
    if out_of_bounds and (nulls is None or ((array < low) | (array > high))[~nulls].any()):
        raise Rejected("int bound")
    return array, nulls


def _floats(
    values: Sequence[Any] | None, *, nullable: bool, non_negative: bool, plain: bool
) -> tuple[np.ndarray, Any]:
    if values is None:
        if not nullable:
            raise Rejected("required")
        return _ZEROS_FLOAT, True
    if not plain and not _types(values) <= ({float, int, _NONE} if nullable else {float, int}):
        raise Rejected("float")
    # JSON (orjson) has no NaN or infinity, so NaN here is exactly a null.
    try:
        array = np.array(values, dtype=np.float64)
    except (TypeError, ValueError):  # an object or array among the values
        raise Rejected("float") from None
    if array.ndim != 1:  # every value an array of one shape
        raise Rejected("float")
    nulls = None
    if len(array) and np.isnan(array.min()):  # min is NaN when any value is
        if not nullable:
            raise Rejected("null")
        nulls = np.isnan(array)
    if non_negative and len(array) and (array < 0).any():  # NaN < 0 is False; -0.0 >= 0
        raise Rejected("negative")
    return array, nulls


# An absent field: "all null", whatever the chunk's length (encode reads no value then).
_ZEROS_INT = np.zeros(0, dtype=np.int64)
_ZEROS_FLOAT = np.zeros(0, dtype=np.float64)


@cache
def _status_codes() -> dict[str, int]:
    return {status: code for code, status in enumerate(STATUSES)}


@dataclass
class Columns:
    """One chunk's records, checked, as columns in the table's order (REQUEST_RECORD_FIELDS)."""

    n: int
    values: dict[str, np.ndarray]
    nulls: dict[str, np.ndarray | bool | None]  # a mask; True: all null; None: none
    status: np.ndarray  # codes into STATUSES
    errors: list[bytes | None]  # None where the error is "" (most records)


@dataclass(frozen=True)
class ChunkText:
    """Where a chunk's text lies, and what it says (counted in C over its bytes)."""

    body: bytes
    start: int
    end: int
    quotes: int  # quotes that open or close a string
    words: bool  # 'true' or 'false' anywhere
    escapes: bool  # the document has a backslash somewhere

    def colons(self) -> tuple[int, int]:
        """(every ':', in strings or not; backslash-u003a or -u003A sequences, at least as
        many as the colons written escaped)."""
        body, start, end = self.body, self.start, self.end
        escaped = 0
        if self.escapes:
            escaped = body.count(b"\\u003a", start, end) + body.count(b"\\u003A", start, end)
        return body.count(b":", start, end), escaped


def _column_getter(records: list[dict[str, Any]]) -> Callable[[str], Sequence[Any] | None]:
    """column(name): the records' values of one field, None where no record has it. Records
    that all name the same fields (the usual case) are transposed in C (itemgetter, zip),
    not key by key."""
    first = records[0].keys()
    if len(first) > 1 and first <= RECORD_KEYS and set(map(len, records)) == {len(first)}:
        names = tuple(first)
        try:
            rows = list(map(itemgetter(*names), records))
        except KeyError:
            pass  # records of as many fields, not the same ones
        else:
            # Each record has len(names) fields, all of names: exactly these fields.
            return dict(zip(names, zip(*rows, strict=True), strict=True)).get
    keys = set().union(*records)
    if not keys <= RECORD_KEYS:
        raise Rejected("unknown field")

    def by_key(name: str) -> Sequence[Any] | None:
        return [r.get(name) for r in records] if name in keys else None

    return by_key


INT_FIELDS: tuple[tuple[str, int, int], ...] = (("i", 0, INT32_MAX), ("session", 0, INT32_MAX))
INT_FIELDS += (("turn", 0, INT32_MAX),)
INT_FIELDS += tuple((name, 0, INT32_MAX) for name in ("n_in", "n_out", "cached", "chunks"))
INT_FIELDS += (("http_status", 100, 599),)
FLOAT_FIELDS: tuple[tuple[str, bool], ...] = (("t_sched_ms", False), ("t_send_ms", False))
FLOAT_FIELDS += (("ttft_ms", True),)
FLOAT_FIELDS += (("ttfo_ms", True), ("e2el_ms", True), ("tpot_ms", True))
REQUIRED = frozenset({"i", "t_send_ms"})


def check_records(records: Any, text: ChunkText) -> Columns:
    """Columns of a chunk's records, or Rejected unless each record is one the model takes.

    Duplicate keys (`{"i": 1, "i": 2}`, which a dict keeps once) are found by counting, in
    the text's quotes (below), or else its colons: every colon outside strings separates a
    key from its value, so the text's colons equal the records' keys plus the colons inside
    strings; the only strings with colons here are `error` values (keys and statuses are
    known names)."""
    if type(records) is not list:
        raise Rejected("records")
    n = len(records)
    if not n:
        return Columns(n=0, values={}, nulls={}, status=_ZEROS_INT, errors=[])
    if _types(records) != {dict}:
        raise Rejected("record")
    column = _column_getter(records)
    members = sum(map(len, records))
    statuses = column("status")
    raw_errors = column("error")
    strings = 0
    if statuses is not None:
        strings += n - statuses.count(None)
    if raw_errors is not None:
        strings += n - raw_errors.count(None)
    # JSON numbers and nulls only, outside status and error: no per-value type checks needed.
    # Every string of the text is a key or a value: when its quotes are two for each key the
    # records kept and each status and error, no other value is a string and no key came twice
    # (`{"i": 1, "i": 2}` is kept once). With no true or false in the text either, the other
    # values are numbers, nulls, or containers (which numpy refuses), and need no type checks.
    # (Exact once statuses and errors are checked strings, as they are before acceptance.)
    plain = not text.words and text.quotes == 2 * (members + strings)
    values: dict[str, np.ndarray] = {}
    nulls: dict[str, np.ndarray | bool | None] = {}
    for name, low, high in INT_FIELDS:
        values[name], nulls[name] = _ints(
            column(name), nullable=name not in REQUIRED, low=low, high=high, plain=plain
        )
    for name, non_negative in FLOAT_FIELDS:
        values[name], nulls[name] = _floats(
            column(name), nullable=name not in REQUIRED, non_negative=non_negative, plain=plain
        )
    codes = _status_codes()
    if statuses is None:
        status = np.zeros(n, dtype=np.int64)  # "ok", the default
    else:
        if not set(statuses) <= codes.keys():  # an explicit null too
            raise Rejected("status")
        status = np.fromiter(map(codes.__getitem__, statuses), dtype=np.int64, count=n)
    errors: list[bytes | None] = [None] * n
    colons = 0
    if raw_errors is not None and _types(raw_errors) != {_NONE}:
        if not _types(raw_errors) <= {str, _NONE}:
            raise Rejected("error")
        for index, message in enumerate(raw_errors):
            if message:
                if len(message) > ERROR_MAX_CHARS or "\x00" in message:
                    raise Rejected("error text")
                colons += message.count(":")
                try:
                    errors[index] = message.encode()
                except UnicodeEncodeError:
                    raise Rejected("error encoding") from None
    if not plain:
        text_colons, escaped_colons = text.colons()
        if text_colons + escaped_colons != members + colons:
            raise Rejected("duplicate key")
    return Columns(n=n, values=values, nulls=nulls, status=status, errors=errors)


def chunk_columns(prepared: Prepared, span: Span) -> Iterator[Columns]:
    body, quotes = prepared.body, prepared.quotes
    for records, start, end in chunks(prepared, span):
        text = ChunkText(
            body=body,
            start=start,
            end=end,
            quotes=quotes.count(start, end),
            words=body.find(b"true", start, end) >= 0 or body.find(b"false", start, end) >= 0,
            escapes=quotes.backslashes,
        )
        yield check_records(records, text)


# --- the binary COPY encoder -----------------------------------------------------------------
# Our own encoder, because speed demands it: psycopg's write_row formats one Python tuple at a
# time (about as long as PostgreSQL takes to store it, bench/ingest.py), while a run of records
# of one shape (the same nulls, status and error length) is one numpy structured array, filled
# a column at a time and sent as one buffer.

_BINARY = {"bigint": ">i8", "integer": ">i4", "smallint": ">i2", "double precision": ">f8"}


@dataclass(frozen=True)
class Layout:
    names: tuple[str, ...]  # the COPY columns: point, then REQUEST_RECORD_FIELDS
    types: tuple[str, ...]  # their SQL types


@cache
def _row_dtype(layout: Layout, null_bits: int, status: int, error_len: int) -> np.dtype:
    fields: list[tuple[str, str]] = [("count", ">i2")]
    nullable = _nullable(layout)
    for name, sql in zip(layout.names, layout.types, strict=True):
        fields.append((f"len_{name}", ">i4"))
        if name in nullable and null_bits >> nullable.index(name) & 1:
            continue
        if name == "status":
            fields.append(("val_status", f"S{len(STATUSES[status])}"))
        elif name == "error":
            if error_len:
                fields.append(("val_error", f"S{error_len}"))
        else:
            fields.append((f"val_{name}", _BINARY[sql]))
    return np.dtype(fields)


@cache
def _nullable(layout: Layout) -> tuple[str, ...]:
    return tuple(
        name for name in layout.names if name not in ("point", "i", "t_send_ms", "status", "error")
    )


def encode(layout: Layout, point_id: int, columns: Columns) -> bytes:
    """The binary COPY rows of a chunk's records, in order."""
    n = columns.n
    if not n:
        return b""
    nullable = _nullable(layout)
    shape = np.zeros(n, dtype=np.int64)
    for bit, name in enumerate(nullable):
        mask = columns.nulls.get(name)
        if mask is True:
            shape |= 1 << bit
        elif isinstance(mask, np.ndarray):
            shape |= mask.astype(np.int64) << bit
    shape |= columns.status << len(nullable)
    if any(columns.errors):
        lengths = (len(e) if e else 0 for e in columns.errors)
        shape |= np.fromiter(lengths, dtype=np.int64, count=n) << (len(nullable) + 8)
    # Runs of consecutive records of one shape keep the records' order.
    cuts = np.flatnonzero(np.diff(shape)) + 1
    starts = np.concatenate(([0], cuts))
    stops = np.concatenate((cuts, [n]))
    field_count = len(layout.names)
    out = []
    for start, stop in zip(starts.tolist(), stops.tolist(), strict=True):
        key = int(shape[start])
        null_bits = key & ((1 << len(nullable)) - 1)
        status = (key >> len(nullable)) & 0xFF
        error_len = key >> (len(nullable) + 8)
        dtype = _row_dtype(layout, null_bits, status, error_len)
        rows = np.empty(stop - start, dtype=dtype)
        rows["count"] = field_count
        for name, sql in zip(layout.names, layout.types, strict=True):
            if f"val_{name}" not in (dtype.names or ()):
                rows[f"len_{name}"] = -1 if name != "error" else 0
                continue
            if name == "point":
                rows["len_point"], rows["val_point"] = 8 if sql == "bigint" else 4, point_id
            elif name == "status":
                rows["len_status"] = len(STATUSES[status])
                rows["val_status"] = STATUSES[status].encode()
            elif name == "error":
                rows["len_error"] = error_len
                rows["val_error"] = columns.errors[start:stop]
            else:
                rows[f"len_{name}"] = np.dtype(_BINARY[sql]).itemsize
                rows[f"val_{name}"] = columns.values[name][start:stop]
        out.append(rows.tobytes())
    return b"".join(out)


def copy_records(
    prepared: Prepared,
    point_ids: list[int],
    layout: Layout,
    write: Callable[[bytes], None],
) -> int:
    """Validate, encode and write every span's records (the COPY's framing included);
    returns how many records. Raises Rejected at the first record it cannot vouch for."""
    write(COPY_SIGNATURE)
    total = 0
    for point_id, span in zip(point_ids, prepared.spans, strict=True):
        if span is None:
            continue
        for columns in chunk_columns(prepared, span):
            if columns.n:
                write(encode(layout, point_id, columns))
                total += columns.n
    write(COPY_TRAILER)
    return total


# The columns check_records makes and encode writes (the table's, apps/runs/models.py).
COLUMNS: tuple[str, ...] = ("point", "i", "t_sched_ms", "t_send_ms", "ttft_ms", "ttfo_ms")
COLUMNS += ("e2el_ms", "tpot_ms")
COLUMNS += ("n_in", "n_out", "cached", "chunks", "status", "http_status", "error")


def layout_supported(layout: Layout) -> bool:
    return layout.names == COLUMNS and all(
        sql in _BINARY or (name in ("status", "error") and sql == "varchar")
        for name, sql in zip(layout.names, layout.types, strict=True)
    )
