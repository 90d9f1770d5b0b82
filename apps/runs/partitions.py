"""The request-record table's partitions on PostgreSQL: ranges of point IDs, made ahead.

Partitioned by point ID range, not by time: every read of records is by point (a run's page,
its exports, significance on /compare/), so a read touches one partition; point IDs grow with
time anyway, so old partitions hold old runs; and the COPY path needs no timestamp column it
does not have. A range holds POINTS_PER_PARTITION points whatever their records (a run has a
handful of points, a point up to ~100,000 records: docs/scaling.md has the sizes).

The width is fixed once the table has partitions (names and bounds derive from it): a new
width would overlap the ranges already attached. SQLite keeps a plain table; every function
here does nothing there.
"""

from collections.abc import Iterable

from django.db import connection, transaction
from django.db.backends.utils import CursorWrapper

from apps.runs.models import RequestRecord

POINTS_PER_PARTITION = 10_000
# pg_advisory_xact_lock key: two ingestions reaching a new range create its partition once.
_LOCK_KEY = 0x1B_0C0D


def partition_name(parent: str, index: int) -> str:
    return f"{parent}_p{index}"


def records_partitions_ensure(*, point_ids: Iterable[int]) -> None:
    """Make sure the partitions for these point IDs, and the next range, exist.

    Called by ingestion before records are copied in. The next range is made ahead so that
    the point that opens it finds it there; creating one takes only a SHARE UPDATE EXCLUSIVE
    lock on the parent (ATTACH PARTITION, not CREATE TABLE ... PARTITION OF, which would take
    ACCESS EXCLUSIVE and stop every read of records until the ingestion commits).
    """
    if connection.vendor != "postgresql":
        return
    ids = list(point_ids)
    if not ids:
        return
    first, last = min(ids) // POINTS_PER_PARTITION, max(ids) // POINTS_PER_PARTITION + 1
    parent = RequestRecord._meta.db_table
    wanted = [partition_name(parent, k) for k in range(first, last + 1)]
    with connection.cursor() as cursor:
        if len(_attached(cursor, parent, wanted)) == len(wanted):
            return  # the common case: one catalog read, no lock
        if not _partitioned(cursor, parent):
            return  # a database migrated back before 0009: one plain table takes every row
        with transaction.atomic():
            partitions_create(cursor, parent=parent, indexes=range(first, last + 1))


def partitions_create(
    cursor: CursorWrapper, *, parent: str, indexes: Iterable[int], named: str | None = None
) -> None:
    """Create and attach the missing partitions `indexes` of `parent` (in a transaction),
    named after `named` (the name the parent will have, where it is built under another)."""
    cursor.execute("SELECT pg_advisory_xact_lock(%s)", [_LOCK_KEY])
    indexes = list(indexes)
    named = named or parent
    attached = _attached(cursor, parent, [partition_name(named, k) for k in indexes])
    for k in indexes:
        name = partition_name(named, k)
        if name in attached:
            continue
        start, end = k * POINTS_PER_PARTITION, (k + 1) * POINTS_PER_PARTITION
        cursor.execute(
            f'CREATE TABLE "{name}" (LIKE "{parent}" INCLUDING DEFAULTS INCLUDING CONSTRAINTS)'
        )
        cursor.execute(
            f'ALTER TABLE "{parent}" ATTACH PARTITION "{name}" FOR VALUES FROM ({start}) TO ({end})'
        )


def _partitioned(cursor: CursorWrapper, table: str) -> bool:
    cursor.execute("SELECT 1 FROM pg_partitioned_table WHERE partrelid = to_regclass(%s)", [table])
    return cursor.fetchone() is not None


def _attached(cursor: CursorWrapper, parent: str, names: list[str]) -> set[str]:
    cursor.execute(
        "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid"
        " WHERE i.inhparent = to_regclass(%s) AND c.relname = ANY(%s)",
        [parent, names],
    )
    return {row[0] for row in cursor.fetchall()}
