"""A scratch PostgreSQL database for the benches that measure the real database.

Each bench runs `python bench/<name>.py`; this sets Django up against $DATABASE_URL (or a
local default), creates a throwaway test database beside it and drops it afterwards, so a
bench never touches data anyone keeps.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DB = "postgres://postgres@127.0.0.1:5432/inferboard_bench"


@contextlib.contextmanager
def scratch_postgres(bench: str) -> Iterator[None]:
    """Django set up on a fresh PostgreSQL test database for the body, dropped at the end."""
    sys.path.insert(0, str(ROOT))
    os.environ["DATABASE_URL"] = os.environ.get("DATABASE_URL", DEFAULT_DB)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "apps.settings")
    import django

    django.setup()
    from django.db import connection

    if connection.vendor != "postgresql":
        sys.exit(f"bench/{bench} measures PostgreSQL: set DATABASE_URL to a postgres:// URL")
    test_name = connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        yield
    finally:
        connection.creation.destroy_test_db(test_name, verbosity=0)
