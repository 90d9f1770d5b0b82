"""Moving the runs app's schema back and forth, for tests of its data migrations."""

from __future__ import annotations

from django.db import connection
from django.db.migrations.executor import MigrationExecutor


def migrate_runs(target: str | None = None) -> None:
    """The runs app at migration `target`, or at its latest when None."""
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    latest = executor.loader.graph.leaf_nodes("runs")[0]
    executor.migrate([("runs", target)] if target else [latest])
