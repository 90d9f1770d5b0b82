"""The request-record table partitioned by point ID range on PostgreSQL (apps/runs/partitions.py,
migration 0009)."""

import pytest
from django.db import connection

from apps.runs.models import Point, RequestRecord, Run
from apps.runs.partitions import POINTS_PER_PARTITION
from apps.runs.services import run_ingest

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(
        connection.vendor != "postgresql", reason="SQLite keeps a plain table by design"
    ),
]


def records_partitions(*, parent: str | None = None) -> list[tuple[str, str]]:
    """(partition name, bound expression) of the record table, in order; [] when the table is
    not partitioned (SQLite, or before the migration)."""
    if connection.vendor != "postgresql":
        return []
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.relname, pg_get_expr(c.relpartbound, c.oid) FROM pg_inherits i"
            " JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = to_regclass(%s)"
            " ORDER BY c.relname",
            [parent or RequestRecord._meta.db_table],
        )
        return sorted(cursor.fetchall(), key=lambda row: int(row[0].rsplit("_p", 1)[1]))


def _records_document(n: int) -> dict:
    from tests.factories import document as build
    from tests.factories import point

    records = [
        {"i": i, "t_send_ms": i * 10.0, "ttft_ms": 400.0 + i % 97, "e2el_ms": 5100.0 + i}
        | {"tpot_ms": 4.7, "n_in": 20000, "n_out": 1000, "status": "ok"}
        for i in range(n)
    ]
    return build(points=[point(1, output_tok_s=1, ttft_p99_ms=1, interactivity=1, records=records)])


def _fetch(sql: str, params: list | None = None) -> list[tuple]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params or [])
        return cursor.fetchall()


def _where_rows_are(run: Run) -> dict[str, int]:
    """Partition name -> rows of this run's records there."""
    point_ids = list(run.points.values_list("pk", flat=True))
    return dict(
        _fetch(
            "SELECT tableoid::regclass::text, count(*) FROM runs_requestrecord"
            " WHERE point_id = ANY(%s) GROUP BY 1",
            [point_ids],
        )
    )


def test_the_record_table_is_range_partitioned_by_point():
    assert _fetch(
        "SELECT partstrat, a.attname FROM pg_partitioned_table p"
        " JOIN pg_attribute a ON a.attrelid = p.partrelid AND a.attnum = p.partattrs[0]"
        " WHERE p.partrelid = 'runs_requestrecord'::regclass"
    ) == [("r", "point_id")]
    assert (
        _fetch("SELECT count(*) FROM pg_inherits WHERE inhparent = 'runs_requestrecord'::regclass")[
            0
        ][0]
        >= 2
    )
    primary = _fetch(
        "SELECT pg_get_constraintdef(oid) FROM pg_constraint"
        " WHERE conrelid = 'runs_requestrecord'::regclass AND contype = 'p'"
    )
    assert primary == [("PRIMARY KEY (id, point_id)",)]


def test_records_of_a_new_run_land_in_the_partition_of_their_points(org):
    run = run_ingest(document=_records_document(500), org=org).run
    k = run.points.get().pk // POINTS_PER_PARTITION
    assert _where_rows_are(run) == {f"runs_requestrecord_p{k}": 500}
    assert RequestRecord.objects.filter(point__run=run).count() == 500


def test_a_point_past_the_ranges_made_gets_its_partition_and_the_next_ahead(org):
    far = max(int(n.rsplit("_p", 1)[1]) for n, _ in records_partitions()) + 3
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT setval(pg_get_serial_sequence('runs_point', 'id'), %s)",
            [far * POINTS_PER_PARTITION + 5],
        )
    run = run_ingest(document=_records_document(50), org=org).run

    assert _where_rows_are(run) == {f"runs_requestrecord_p{far}": 50}
    bounds = dict(records_partitions())
    start, end = (far + 1) * POINTS_PER_PARTITION, (far + 2) * POINTS_PER_PARTITION
    assert bounds[f"runs_requestrecord_p{far + 1}"] == f"FOR VALUES FROM ('{start}') TO ('{end}')"


def test_the_orm_deletes_a_runs_records_through_its_points(org):
    run = run_ingest(document=_records_document(30), org=org).run
    Run.objects.filter(pk=run.pk).delete()
    assert not Point.objects.filter(run_id=run.pk).exists()
    assert RequestRecord.objects.count() == 0


@pytest.mark.django_db(transaction=True)
def test_the_migration_converts_a_filled_plain_table_keeping_every_row_and_the_id_sequence(org):
    from django.db.migrations.executor import MigrationExecutor

    def migrate(target: str | None = None) -> None:
        executor = MigrationExecutor(connection)
        executor.loader.build_graph()
        latest = executor.loader.graph.leaf_nodes("runs")[0]
        executor.migrate([("runs", target)] if target else [latest])

    # Ingested with today's models, then the table taken back to plain: a filled plain table
    # (the later migrations' columns do not exist before 0009, so nothing is ingested there).
    run = run_ingest(document=_records_document(40), org=org).run
    migrate("0008_merge_0007_run_labels_0007_run_origin_and_board_rules")
    try:
        assert records_partitions() == []
        rows = "SELECT md5(string_agg(r::text, ',' ORDER BY id)), max(id) FROM runs_requestrecord r"
        before = _fetch(rows)
    finally:
        migrate()

    assert _fetch(rows) == before
    k = run.points.get().pk // POINTS_PER_PARTITION
    assert _where_rows_are(run) == {f"runs_requestrecord_p{k}": 40}
    later = run_ingest(
        document=_records_document(1) | {"idempotency_key": "a-later-run"}, org=org
    ).run
    assert RequestRecord.objects.get(point__run=later).pk == before[0][1] + 1
