"""The one place a process's stores are chosen: `stores_for(url)` builds every store the server
keeps in the database at `url`, for either backend, not yet opened.

On PostgreSQL they all share one connection pool, the storage's (`PostgresStorage.db`,
bot/store/postgres/database.py): the sign-in store, the review memory, the learnings, the budgets,
the uploads and the repository index take their connections from it, so a process holds one pool
(procrastinate keeps its own, bot/server/jobs/pg_queue.py). The storage opens it (`Storage.open`, which
migrates) and closes it, so the app opens the storage first (bot/server/app.py); a store used
before that opens and migrates it itself (`Database.ready`), but the index, whose statements block
on a worker thread, needs it open already.

On SQLite each store opens the server's file per use as before, and the repository index has a
file of its own beside it (`index_file`).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from bot.store import check_url, is_postgres, storage_for
from bot.store.budgets import BudgetStore, budget_store
from bot.store.index import postgres_stores, sqlite_stores
from bot.store.learnings import LearningStore, learnings_store
from bot.store.model import Storage
from bot.store.reviews import PostgresReviewMemory, SQLiteReviewMemory, review_memory_for
from bot.store.sqlite.database import sqlite_path
from bot.store.uploads import UploadStore

if TYPE_CHECKING:
    from bot.store.index.postgres import PostgresIndex
    from bot.store.index.sqlite import SqliteIndex
    from bot.store.signin.postgres import PostgresAuthStore
    from bot.store.signin.sqlite import SqliteAuthStore

IndexOpener = Callable[[str], AbstractContextManager["SqliteIndex | PostgresIndex"]]


@dataclass
class Stores:
    """Every store of one process, in one database."""

    url: str
    storage: Storage
    signin: SqliteAuthStore | PostgresAuthStore
    memory: SQLiteReviewMemory | PostgresReviewMemory
    learnings: LearningStore
    budgets: BudgetStore
    uploads: UploadStore
    indexes: IndexOpener  # a repository's index, opened for one use (from a worker thread)


def index_file(url: str) -> str:
    """The SQLite file of the repository indexes, beside the server's database (`reviewer.db` →
    `reviewer-index.sqlite3`), so that a build's long writes never hold the lock that the webhook
    intake commits under."""
    database = sqlite_path(url)
    stem = database[:-3] if database.endswith(".db") else database
    return stem + "-index.sqlite3"


def stores_for(url: str) -> Stores:
    """The process's stores in the database at `url`, not yet opened (ValueError for a URL no
    backend takes)."""
    check_url(url)
    storage = storage_for(url)
    if is_postgres(url):
        from bot.store.postgres import PostgresStorage
        from bot.store.signin.postgres import PostgresAuthStore

        assert isinstance(storage, PostgresStorage)
        db = storage.db
        return Stores(url, storage, PostgresAuthStore(db), review_memory_for(url, db), learnings_store(url, db),
                      budget_store(url, db=db), UploadStore(url, db=db), postgres_stores(db))
    from bot.store.signin.sqlite import SqliteAuthStore

    return Stores(url, storage, SqliteAuthStore(sqlite_path(url)), review_memory_for(url), learnings_store(url),
                  budget_store(url), UploadStore(url), sqlite_stores(index_file(url)))
