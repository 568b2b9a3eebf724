"""A SQLite database with the latest schema and no rows, for the tests of what the app and its stores
do rather than of how they migrate (those take `empty_database_url`, or a file of their own).

Opening a store on a new file runs every migration, about 5 ms of CPU; the ordinary tests open some
2,000 of them a run. Each process migrates one file once and copies it where a test's database goes:
the same bytes a store opening a new file would make, as `pg_migrated_url` is for PostgreSQL."""

from __future__ import annotations

import atexit
import functools
import shutil
import tempfile
from pathlib import Path

from bot.store.sqlite.migrations import migrate_file


def migrated_sqlite(path: Path) -> str:
    """`sqlite:///{path}`, the file made migrated and empty unless it is there already (a test that
    restarts the app on its database keeps what the database holds)."""
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)  # as the store makes it
        shutil.copyfile(_template(), path)
    return f"sqlite:///{path}"


@functools.cache
def _template() -> Path:
    folder = tempfile.mkdtemp(prefix="reviewer-migrated-")
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    path = Path(folder) / "reviewer.db"
    migrate_file(str(path))
    return path
