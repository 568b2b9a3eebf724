"""`IndexStore` (bot/index/store.py) on PostgreSQL: full-text search (`tsvector`, GIN) with a trigram index (pg_trgm)
for names the text-search parser splits, through psycopg 3.

The same tables as the SQLite form, one database for every repository (rows keyed by `repo`):
the server's, whose migrations make them (bot.store.postgres.migrations, version 6).
PostgreSQL compresses large texts itself (TOAST), so bodies are stored as text. The text-search
configuration is `simple` (no stemming: code is not English), and since its parser cuts
`compute_total` into `compute` and `total`, a name is searched as a phrase, and also by the
trigram index as a substring, which finds it inside a longer name (`computeTotalAmount`).
It is used where a PostgreSQL URL is given.

In the server the index is read and written on a connection of the process's pool, from the
worker thread its work runs on (bot/store/postgres/threaded.py's `ThreadConn`); opened alone (a
test, a command), on a connection of its own (`BlockingConn`). Either way one connection serves one
opening from start to end, so the advisory lock `lock` takes is held by the transaction that
`finish` commits.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any, Protocol

import psycopg

from bot.store import migrate_database_blocking
from bot.store.index.model import Definition, Located, Reference, StoredFile


def connect_pg(url: str, *, schema: bool = True) -> psycopg.Connection:
    """A connection to the index's database, brought first to the latest schema (the server's
    migrations, under their lock: `bot.store.migrate_database_blocking`; SchemaTooNew for a schema
    a newer release made). `schema=False` when this process has done that already: once per
    process is enough, and the migrations' lock is then not taken for every open."""
    if schema:
        migrate_database_blocking(url)
    return psycopg.connect(url)


class Statements(Protocol):
    """What the index needs of its connection: `ThreadConn` (the pool's) or `BlockingConn`."""

    def execute(self, sql: str, params: Sequence[Any] | None = None) -> Any: ...

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> Any: ...

    def commit(self) -> None: ...


class BlockingConn:
    """psycopg's blocking connection, for an index opened alone."""

    def __init__(self, conn: psycopg.Connection) -> None:
        self.conn = conn

    def execute(self, sql: str, params: Sequence[Any] | None = None) -> Any:
        return self.conn.execute(sql, params)

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        with self.conn.cursor() as cursor:
            cursor.executemany(sql, list(rows))

    def commit(self) -> None:
        self.conn.commit()


class PostgresIndex:
    """`IndexStore` on PostgreSQL. Writes are committed by `finish` (or `drop`)."""

    def __init__(self, conn: Statements | psycopg.Connection, repo: str) -> None:
        self.conn: Statements = BlockingConn(conn) if isinstance(conn, psycopg.Connection) else conn
        self.repo = repo

    def lock(self) -> None:
        """Hold the repository until `finish` or `drop` commits: two processes updating one
        repository take turns (else both insert the same paths and collide on UNIQUE(repo, path))."""
        self.conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (self.repo,))

    def commit(self) -> str | None:
        row = self.conn.execute("SELECT commit_sha FROM index_repos WHERE repo = %s", (self.repo,)).fetchone()
        return row[0] if row else None

    def report(self) -> dict | None:
        row = self.conn.execute("SELECT report FROM index_repos WHERE repo = %s", (self.repo,)).fetchone()
        return row[0] if row else None

    def blobs(self) -> dict[str, str]:
        return dict(self.conn.execute("SELECT path, blob FROM index_files WHERE repo = %s", (self.repo,)).fetchall())

    def paths(self) -> list[str]:
        rows = self.conn.execute("SELECT path FROM index_files WHERE repo = %s", (self.repo,)).fetchall()
        return [path for path, in rows]

    def put(self, files: Iterable[StoredFile]) -> None:
        files = list(files)
        self.remove(f.path for f in files)
        for f in files:
            row = self.conn.execute("INSERT INTO index_files (repo, path, blob, size, language, body) "
                                    "VALUES (%s, %s, %s, %s, %s, %s) RETURNING id",
                                    (self.repo, f.path, f.blob, f.size, f.symbols.language,
                                     f.text.replace("\0", ""))).fetchone()
            assert row is not None
            file_id = row[0]
            self.conn.executemany("INSERT INTO index_defs VALUES (%s, %s, %s, %s, %s, %s, %s)",
                                  [(file_id, d.name, d.kind, d.scope, d.signature, d.start, d.end)
                                   for d in f.symbols.definitions])
            self.conn.executemany("INSERT INTO index_refs VALUES (%s, %s, %s)",
                                  [(file_id, name, list(lines)) for name, lines in f.symbols.references.items()])

    def remove(self, paths: Iterable[str]) -> None:
        paths = list(paths)
        if paths:  # definitions and references go with their file (ON DELETE CASCADE)
            self.conn.execute("DELETE FROM index_files WHERE repo = %s AND path = ANY(%s)", (self.repo, paths))

    def finish(self, commit: str, report: dict) -> None:
        self.conn.execute("INSERT INTO index_repos VALUES (%s, %s, %s) ON CONFLICT (repo) DO UPDATE SET "
                          "commit_sha = excluded.commit_sha, report = excluded.report",
                          (self.repo, commit, json.dumps(report)))
        self.conn.commit()

    def drop(self) -> None:
        self.conn.execute("DELETE FROM index_files WHERE repo = %s", (self.repo,))
        self.conn.execute("DELETE FROM index_repos WHERE repo = %s", (self.repo,))
        self.conn.commit()

    def definitions(self, names: Iterable[str], limit: int) -> list[Located]:
        rows = self.conn.execute(
            "SELECT f.path, d.name, d.kind, d.scope, d.signature, d.start_line, d.end_line FROM index_defs d "
            "JOIN index_files f ON f.id = d.file_id WHERE d.name = ANY(%s) AND f.repo = %s "
            "ORDER BY f.path, d.start_line LIMIT %s", (sorted(set(names)), self.repo, limit)).fetchall()
        return [Located(path, Definition(*rest)) for path, *rest in rows]

    def definitions_in(self, path: str) -> list[Definition]:
        rows = self.conn.execute(
            "SELECT d.name, d.kind, d.scope, d.signature, d.start_line, d.end_line FROM index_defs d "
            "JOIN index_files f ON f.id = d.file_id WHERE f.repo = %s AND f.path = %s ORDER BY d.start_line",
            (self.repo, path)).fetchall()
        return [Definition(*row) for row in rows]

    def references(self, names: Iterable[str], limit: int) -> list[Reference]:
        rows = self.conn.execute(
            "SELECT f.path, r.name, r.lines FROM index_refs r JOIN index_files f ON f.id = r.file_id "
            "WHERE r.name = ANY(%s) AND f.repo = %s ORDER BY f.path LIMIT %s",
            (sorted(set(names)), self.repo, limit)).fetchall()
        return [Reference(path, name, tuple(lines)) for path, name, lines in rows]

    def text(self, path: str) -> str | None:
        row = self.conn.execute("SELECT body FROM index_files WHERE repo = %s AND path = %s",
                                (self.repo, path)).fetchone()
        return row[0] if row else None

    def search(self, words: Sequence[str], limit: int) -> list[str]:
        """Paths of the files that best match any of `words`: full-text rank first, then files
        that hold a word only inside a longer name (trigram index)."""
        terms = [w for w in dict.fromkeys(words) if w.replace("_", "").isalnum()]
        if not terms:
            return []
        query = " || ".join(["phraseto_tsquery('simple', %s)"] * len(terms))
        ranked = [row[0] for row in self.conn.execute(
            f"SELECT path FROM index_files, ({'SELECT ' + query}) AS q(query) WHERE repo = %s AND words @@ q.query "
            "ORDER BY ts_rank(words, q.query) DESC, path LIMIT %s", (*terms, self.repo, limit)).fetchall()]
        if len(ranked) >= limit:
            return ranked
        patterns = ["%" + t.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%" for t in terms]
        more = [row[0] for row in self.conn.execute(
            "SELECT path FROM index_files WHERE repo = %s AND body LIKE ANY(%s) AND NOT path = ANY(%s) "
            "ORDER BY path LIMIT %s", (self.repo, patterns, ranked, limit - len(ranked))).fetchall()]
        return ranked + more
