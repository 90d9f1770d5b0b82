"""The pipelined ingestion path (apps/runs/pipeline.py): a raw document's records checked and
COPYed chunk by chunk, while the general path (parse_document) stays the judge of errors."""

import json

import pytest

from apps.runs import pipeline, services
from apps.runs.models import REQUEST_RECORD_FIELDS, Point, RequestRecord, Run
from apps.runs.services import run_ingest
from workers.results import DocumentError, parse_document

pytestmark = pytest.mark.django_db


def _records(n: int, offset: int = 0) -> list[dict]:
    return [
        {"i": i, "t_sched_ms": i * 10.0, "t_send_ms": i * 10.0 + 0.25, "ttft_ms": 400.0 + i % 97}
        | {"ttfo_ms": 401.5, "e2el_ms": 5100.0 + i % 89 + offset, "tpot_ms": 4.7, "n_in": 20000}
        | {"n_out": 1000 + i, "cached": 12000, "chunks": 999, "status": "ok"}
        for i in range(n)
    ]


def _document(per_point: int = 60) -> dict:
    from tests.factories import document as build
    from tests.factories import point

    points = [
        point(
            c, output_tok_s=100, ttft_p99_ms=500, interactivity=200, records=_records(per_point, c)
        )
        for c in (1, 4, 16)
    ]
    data = build(points=points)
    varied = data["points"][1]["records"]
    # What real records carry besides the usual: failures with messages (quotes, backslashes,
    # colons, non-ASCII), nulls, absent fields, integers where floats go, revision-2 fields.
    varied[3] |= {"status": "http_error", "http_status": 503, "ttft_ms": None, "e2el_ms": None}
    varied[3]["error"] = 'upstream: {"detail": "busy"} \\ naïve ☃ : retry'
    varied[4] |= {"status": "timeout", "error": "", "n_out": None}
    del varied[5]["t_sched_ms"], varied[5]["cached"]
    varied[6] |= {"ttft_ms": 3, "session": 2, "turn": 1}
    varied[7] |= {"status": "truncated", "error": "x" * 500}
    data["points"][2]["records"][10]["error"] = None
    return data


def _stored(run: Run) -> list[tuple]:
    return list(
        RequestRecord.objects.filter(point__run=run)
        .order_by("point__ordinal", "i")
        .values_list("point__ordinal", *REQUEST_RECORD_FIELDS)
    )


def _expected(data: dict) -> list[tuple]:
    """The rows the model's reading of the document gives (workers.results.RequestRecord)."""
    rows = []
    for ordinal, point in enumerate(parse_document(data).points):
        for record in sorted(point.records or [], key=lambda r: r.i):
            values = [getattr(record, name) for name in REQUEST_RECORD_FIELDS]
            values[-1] = values[-1] or ""  # error: "" where none
            rows.append((ordinal, *values))
    return rows


def _counts() -> tuple[int, int, int]:
    return Run.objects.count(), Point.objects.count(), RequestRecord.objects.count()


@pytest.fixture
def chunked(monkeypatch):
    """Small chunks (a point's records span several), and a log of what the pipeline wrote:
    [(point_id, records), ...]."""
    monkeypatch.setattr(pipeline, "CHUNK_BYTES", 2_000)
    written: list[tuple[int, int]] = []
    encode = pipeline.encode

    def logged(layout, point_id, columns):
        written.append((point_id, columns.n))
        return encode(layout, point_id, columns)

    monkeypatch.setattr(pipeline, "encode", logged)
    return written


@pytest.fixture
def pipelined(chunked, monkeypatch):
    """As chunked, with the general path's record insert forbidden."""

    def general_path(*args, **kwargs):
        raise AssertionError("records went through the general path")

    monkeypatch.setattr(services, "_records_insert", general_path)
    return chunked


@pytest.mark.parametrize("ascii_only", [True, False])
def test_the_pipelined_path_stores_exactly_the_rows_of_a_multi_point_document(
    org, pipelined, ascii_only
):
    data = _document()
    body = json.dumps(data, ensure_ascii=ascii_only).encode()
    run = run_ingest(document=body, org=org).run

    assert _stored(run) == _expected(data)
    assert len(_stored(run)) == 180
    point_ids = list(run.points.order_by("ordinal").values_list("id", flat=True))
    assert [pid for pid, _ in pipelined] == sorted(pid for pid, _ in pipelined)
    assert {pid for pid, _ in pipelined} == set(point_ids)
    assert len(pipelined) > 3 * 2  # several chunks a point
    assert sum(n for _, n in pipelined) == 180
    assert "records" not in run.document["points"][0]


def test_it_stores_the_same_rows_as_the_general_path(org, chunked):
    data = _document()
    fast = run_ingest(document=json.dumps(data).encode(), org=org).run
    assert sum(n for _, n in chunked) == 180
    data["idempotency_key"] = "general-path-0001"
    general = run_ingest(document=parse_document(data), org=org).run  # parsed: no pipeline
    assert _stored(fast) == _stored(general)
    assert fast.document == general.document | {"idempotency_key": fast.idempotency_key}


def test_a_bad_record_in_a_later_point_stores_nothing_and_names_its_path(org, pipelined):
    data = _document()
    data["points"][2]["records"][47]["ttft_ms"] = -1
    before = _counts()
    with pytest.raises(DocumentError) as failure:
        run_ingest(document=json.dumps(data).encode(), org=org)
    assert failure.value.errors == [("points[2].records[47].ttft_ms", "must be >= 0")]
    # Points 0 and 1 had been copied when point 2's bad chunk came: rolled back with the rest.
    assert sum(n for _, n in pipelined) >= 120
    assert _counts() == before


@pytest.mark.parametrize(
    ("change", "path", "message"),
    [
        (lambda r: r.update(bogus=1), "points[2].records[30].bogus", "unknown field"),
        (lambda r: r.update(i=-4), "points[2].records[30].i", "must be >= 0"),
        (lambda r: r.update(n_in=2**31), "points[2].records[30].n_in", "must be <= 2147483647"),
        (lambda r: r.update(status="lost"), "points[2].records[30].status", None),
        (lambda r: r.update(http_status=99), "points[2].records[30].http_status", None),
        (lambda r: r.update(error="a\x00b"), "points[2].records[30].error", None),
        (lambda r: r.update(error="x" * 501), "points[2].records[30].error", None),
        (lambda r: r.pop("t_send_ms"), "points[2].records[30].t_send_ms", "required"),
        (lambda r: r.update(t_send_ms=None), "points[2].records[30].t_send_ms", None),
        (lambda r: r.update(n_out=[1]), "points[2].records[30].n_out", None),
        (lambda r: r.update(ttfo_ms={"a": 1}), "points[2].records[30].ttfo_ms", None),
        # A string where a number goes, beside a number where a string goes (as many quotes).
        (lambda r: r.update(error=5, e2el_ms="9"), "points[2].records[30].error", None),
    ],
)
def test_each_kind_of_bad_record_is_the_general_paths_error(org, pipelined, change, path, message):
    data = _document()
    change(data["points"][2]["records"][30])
    before = _counts()
    with pytest.raises(DocumentError) as failure:
        run_ingest(document=json.dumps(data).encode(), org=org)
    with pytest.raises(DocumentError) as general:
        parse_document(json.dumps(data).encode())
    assert failure.value.errors == general.value.errors
    assert failure.value.errors[0][0] == path
    if message:
        assert failure.value.errors[0][1] == message
    assert _counts() == before


def test_a_duplicate_key_in_a_later_record_stores_nothing(org, pipelined):
    body = json.dumps(_document()).encode()
    marker = b'"i": 41, '
    at = body.rindex(marker)  # the last point's record 41
    duplicates = (b'"i": 41, "i": 42, ', b'"i": 41, "\\u0069": 42, ', b'"i": 41, "status": "ok", ')
    for duplicate in duplicates:
        before = _counts()
        with pytest.raises(DocumentError) as failure:
            run_ingest(document=body[:at] + duplicate + body[at + len(marker) :], org=org)
        key = "status" if b"status" in duplicate else "i"
        assert failure.value.errors == [
            (key, "appears more than once in one object (duplicate key); send it once")
        ]
        assert _counts() == before


def test_arrays_for_every_value_of_a_field_are_the_general_paths_errors(org, pipelined):
    data = _document()
    for record in data["points"][2]["records"]:
        record["n_out"], record["ttft_ms"] = [5], [1.5]
    before = _counts()
    with pytest.raises(DocumentError) as failure:
        run_ingest(document=json.dumps(data).encode(), org=org)
    with pytest.raises(DocumentError) as general:
        parse_document(json.dumps(data).encode())
    assert failure.value.errors == general.value.errors
    assert failure.value.errors[0][0] == "points[2].records[0].ttft_ms"
    assert _counts() == before


def test_values_the_fast_checks_leave_to_the_model_are_stored_as_the_model_reads_them(
    org, monkeypatch
):
    # Lax values (an integer written 7.0, a number in a string) are valid for the model but
    # not for the fast checks: the pipeline rolls back, the general path stores. (true for a
    # number is not a number, issue 53: both paths refuse it, below.)
    monkeypatch.setattr(pipeline, "CHUNK_BYTES", 2_000)
    data = _document()
    data["points"][2]["records"][50] |= {"n_in": 7.0, "ttft_ms": "12.5"}
    run = run_ingest(document=json.dumps(data).encode(), org=org).run
    assert _stored(run) == _expected(data)
    row = RequestRecord.objects.get(point__run=run, point__ordinal=2, i=50)
    assert (row.n_in, row.ttft_ms) == (7, 12.5)


def test_true_or_false_for_a_number_is_refused_on_either_path(org, monkeypatch):
    monkeypatch.setattr(pipeline, "CHUNK_BYTES", 2_000)
    data = _document()
    data["points"][2]["records"][50] |= {"tpot_ms": True}
    with pytest.raises(DocumentError) as failure:
        run_ingest(document=json.dumps(data).encode(), org=org)
    assert failure.value.errors == [
        ("points[2].records[50].tpot_ms", "must be a number, not true or false")
    ]


def test_a_replay_of_a_document_with_a_bad_record_is_still_an_error(org, pipelined):
    data = _document()
    run_ingest(document=json.dumps(data).encode(), org=org)
    data["points"][1]["records"][2]["e2el_ms"] = -5
    with pytest.raises(DocumentError) as failure:
        run_ingest(document=json.dumps(data).encode(), org=org)
    assert failure.value.errors == [("points[1].records[2].e2el_ms", "must be >= 0")]


def test_records_named_outside_a_point_are_not_taken_for_a_points(org, monkeypatch):
    # A "records" key in free-form JSON (environment.extra) holds no request records.
    monkeypatch.setattr(pipeline, "CHUNK_BYTES", 2_000)
    data = _document(per_point=12)
    data.setdefault("environment", {})["extra"] = {"records": [{"i": "not a record"}]}
    run = run_ingest(document=json.dumps(data).encode(), org=org).run
    assert _stored(run) == _expected(data)
    assert run.document["environment"]["extra"] == {"records": [{"i": "not a record"}]}


def test_braces_and_brackets_inside_strings_do_not_cut_records(org, pipelined):
    # Chunks are cut after a record's closing brace and arrays end at a bracket, outside
    # strings only: messages full of both (and escaped quotes) land where a cut is sought.
    data = _document()
    for n, record in enumerate(data["points"][1]["records"]):
        record |= {"status": "http_error", "error": ('}, {"i": 1}] \\" ]' * 30)[: 400 + n]}
    run = run_ingest(document=json.dumps(data).encode(), org=org).run
    assert _stored(run) == _expected(data)
    assert len(pipelined) > 3 * 2
