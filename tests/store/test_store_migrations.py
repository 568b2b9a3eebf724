"""The store's schema on both backends: its version, a newer one refused, and a database a release
before a migration left, migrated with its rows kept."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import pytest

from bot.events.jobs import ReviewResult
from bot.store import storage_for
from bot.store.model import SchemaTooNew, Storage
from bot.store.postgres import migrations as pg_migrations
from bot.store.sqlite import migrations as sqlite_migrations
from tests.store.rows import attempt_of, finished, incoming, queue_delivery


async def test_the_schema_is_versioned_and_a_newer_one_refused(empty_database_url: str):
    storage = storage_for(empty_database_url)
    await storage.open()
    latest = sqlite_migrations.LATEST if empty_database_url.startswith("sqlite") else pg_migrations.LATEST
    try:
        assert await storage.schema_version() == latest
        await _bump_version(storage, latest + 1)
    finally:
        await storage.close()
    again = storage_for(empty_database_url)
    with pytest.raises(SchemaTooNew, match=rf"schema version {latest + 1}, newer than this version of Reviewer knows"):
        await again.open()


async def _bump_version(storage: Storage, version: int) -> None:
    """What a newer release's migration leaves behind."""
    from bot.store.postgres import PostgresStorage
    from bot.store.sqlite import SQLiteStorage
    if isinstance(storage, SQLiteStorage):
        import sqlite3
        with sqlite3.connect(storage.path) as conn:
            conn.execute("INSERT INTO schema_version (version) VALUES (?)", (version,))
    elif isinstance(storage, PostgresStorage):
        await storage.db.execute("INSERT INTO schema_version (version) VALUES (%s)", (version,))


async def test_a_database_of_the_previous_release_gains_the_timeline(empty_database_url: str):
    """Migration 3 on a database at version 2 (no delivery_timeline yet) keeps its deliveries."""
    async def before(storage: Storage) -> None:
        await storage.deliveries.accept(incoming("before"))
        await _run(storage, "DROP TABLE delivery_timeline")
        await _run(storage, "ALTER TABLE deliveries DROP COLUMN queued_at")  # what migration 5 adds
        await _undo_review_outcome(storage)
    again = await _reopened_from(empty_database_url, 3, before)
    try:
        await again.timeline.write(attempt_of("before", 1, "done"))
        assert [e.attempt for e in await again.timeline.attempts("before")] == [1]
        assert await again.deliveries.delivery("before") is not None
    finally:
        await again.close()


async def test_a_database_at_version_4_gains_queued_at(empty_database_url: str):
    """Migration 5 (and those after it) on a database at version 4: its rows keep what they had,
    with no queued time; rows queued from then on get one."""
    async def before(storage: Storage) -> None:
        await queue_delivery(storage, "old")
        await _run(storage, "ALTER TABLE deliveries DROP COLUMN queued_at")
        await _undo_review_outcome(storage)
    again = await _reopened_from(empty_database_url, 5, before)
    try:
        old = await again.deliveries.delivery("old")
        assert (old["state"], old["job_key"], old["queued_at"]) == ("queued", "octo/app#1", None)
        await queue_delivery(again, "new")
        assert (await again.deliveries.delivery("new"))["queued_at"] is not None
    finally:
        await again.close()


async def test_a_database_at_version_6_gains_the_review_outcome(empty_database_url: str):
    """Migration 8 on a database of the release before it: its deliveries keep their state, with
    no review outcome, and show as before; jobs finished from then on record theirs."""
    async def before(storage: Storage) -> None:
        await queue_delivery(storage, "old")
        assert await storage.deliveries.start("old") is not None
        await storage.deliveries.finish(["old"], "done")
        await _undo_review_outcome(storage)
    again = await _reopened_from(empty_database_url, 7, before)
    try:
        old = await again.deliveries.delivery("old")
        assert (old["state"], old["review_outcome"], old["review_reason"]) == ("done", None, None)
        assert [r["delivery_id"] for r in await again.deliveries.recent(state="done")] == ["old"]
        await finished(again, "new", ReviewResult("failed", "no-usable-answer"), pr=2)
        assert [r["delivery_id"] for r in await again.deliveries.recent(state="failed")] == ["new"]
    finally:
        await again.close()


async def _undo_review_outcome(storage: Storage) -> None:
    """What migration 8 adds, and migrations 11 and 13 after it."""
    await _run(storage, "ALTER TABLE deliveries DROP COLUMN review_outcome")
    await _run(storage, "ALTER TABLE deliveries DROP COLUMN review_reason")
    await _run(storage, "ALTER TABLE deliveries DROP COLUMN traceparent")
    await _run(storage, "DROP TABLE budget_usage")
    for column in ("source", "rule", "start_line", "end_line"):  # 13: where each posted finding came from
        await _run(storage, f"ALTER TABLE review_findings DROP COLUMN {column}")


async def _reopened_from(empty_database_url: str, version: int, undo: Callable[[Storage], Awaitable[None]]) -> Storage:
    """A database as a release before migration `version` left it (`undo` takes back what that
    migration and later ones made, after writing rows), opened again: migrated to the latest."""
    storage = storage_for(empty_database_url)
    await storage.open()
    try:
        await undo(storage)
        await _run(storage, f"DELETE FROM schema_version WHERE version >= {version}")
    finally:
        await storage.close()
    again = storage_for(empty_database_url)
    await again.open()
    latest = sqlite_migrations.LATEST if empty_database_url.startswith("sqlite") else pg_migrations.LATEST
    assert latest >= version and await again.schema_version() == latest
    return again


async def _run(storage: Storage, statement: str) -> None:
    from bot.store.postgres import PostgresStorage
    from bot.store.sqlite import SQLiteStorage
    if isinstance(storage, SQLiteStorage):
        import sqlite3
        with sqlite3.connect(storage.path) as conn:
            conn.execute(statement)
    elif isinstance(storage, PostgresStorage):
        await storage.db.execute(statement)
