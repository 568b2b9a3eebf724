"""`IndexStore` (bot/index/store.py) on SQLite: FTS5 for search.

One database may hold the indexes of many repositories (the server's), or of one (a checkout's,
under its `.git`). File texts are kept LZ4-compressed, because pieces of context are cut from
them; the FTS5 table is contentless (it keeps the word index, not a second copy of the text), so
a removed file's words are taken out with FTS5's `delete` command and the old text. The
tokenizer is `unicode61` with `_` as a letter, so `compute_total` is one word: on generated code
its index is 0.22x the source, where FTS5's trigram tokenizer (substring search) is 1.76x alone
and would break the index's 2x size aim; PostgreSQL, where the trigram index is cheaper, has it
(bot/store/index/postgres.py).

A SQLite index is a file of its own, never the server's database: the server keeps one beside it
(`reviewer.db` → `reviewer-index.sqlite3`, so that a long build never holds the write lock the
webhook intake commits under), and `reviewer context` one under a checkout's `.git`. So its tables
are not among the server's versioned migrations: `connect` makes them (`CREATE ... IF NOT
EXISTS`), and SQLite's file lock keeps two processes doing that at once apart. On PostgreSQL the
index lives in the server's database, and its tables are the migrations'.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence
from pathlib import Path

import lz4.frame

from bot.store.index.model import Definition, Located, Reference, StoredFile

SCHEMA = """
CREATE TABLE IF NOT EXISTS index_repos (
    repo TEXT PRIMARY KEY, commit_sha TEXT NOT NULL, report TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS index_files (
    id INTEGER PRIMARY KEY, repo TEXT NOT NULL, path TEXT NOT NULL, blob TEXT NOT NULL,
    size INTEGER NOT NULL, language TEXT, body BLOB NOT NULL, UNIQUE (repo, path));
CREATE TABLE IF NOT EXISTS index_defs (
    file_id INTEGER NOT NULL, name TEXT NOT NULL, kind TEXT NOT NULL, scope TEXT NOT NULL,
    signature TEXT NOT NULL, start_line INTEGER NOT NULL, end_line INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS index_defs_name ON index_defs (name);
CREATE INDEX IF NOT EXISTS index_defs_file ON index_defs (file_id);
CREATE TABLE IF NOT EXISTS index_refs (
    file_id INTEGER NOT NULL, name TEXT NOT NULL, lines TEXT NOT NULL,
    PRIMARY KEY (file_id, name)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS index_refs_name ON index_refs (name);
CREATE VIRTUAL TABLE IF NOT EXISTS index_search USING fts5 (
    body, content='', tokenize="unicode61 tokenchars '_'");
"""



def connect(path: str | Path) -> sqlite3.Connection:
    """A connection with the index's tables; WAL so that readers do not wait for a build."""
    conn = sqlite3.connect(str(path), timeout=30, check_same_thread=False)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.executescript(SCHEMA)
    return conn


def _pack(text: str) -> bytes:
    return lz4.frame.compress(text.encode("utf-8", errors="surrogateescape"))


def _unpack(body: bytes) -> str:
    return lz4.frame.decompress(body).decode("utf-8", errors="surrogateescape")


def _marks(count: int) -> str:
    return ",".join("?" * count)


class SqliteIndex:
    """`IndexStore` on SQLite (FTS5 for search). Writes are committed by `finish` (or `drop`).

    Look-ups by name are written `CROSS JOIN`, which in SQLite fixes the join order: from the
    names (or the search hits) to their files. Left to itself the planner walks every file of
    the repository in path order to spare a sort, which is 10x slower on a large repository."""

    def __init__(self, conn: sqlite3.Connection, repo: str) -> None:
        self.conn, self.repo = conn, repo

    def lock(self) -> None:
        """Take the file's write lock until `finish` or `drop` commits, so that writers in other
        processes wait their turn instead of planning from rows about to change."""
        if not self.conn.in_transaction:
            self.conn.execute("BEGIN IMMEDIATE")

    def commit(self) -> str | None:
        row = self.conn.execute("SELECT commit_sha FROM index_repos WHERE repo = ?", (self.repo,)).fetchone()
        return row[0] if row else None

    def report(self) -> dict | None:
        row = self.conn.execute("SELECT report FROM index_repos WHERE repo = ?", (self.repo,)).fetchone()
        return json.loads(row[0]) if row else None

    def blobs(self) -> dict[str, str]:
        return dict(self.conn.execute("SELECT path, blob FROM index_files WHERE repo = ?", (self.repo,)))

    def paths(self) -> list[str]:
        return [path for path, in self.conn.execute("SELECT path FROM index_files WHERE repo = ?", (self.repo,))]

    def put(self, files: Iterable[StoredFile]) -> None:
        files = list(files)
        self.remove(f.path for f in files)
        for f in files:
            cur = self.conn.execute(
                "INSERT INTO index_files (repo, path, blob, size, language, body) VALUES (?, ?, ?, ?, ?, ?)",
                (self.repo, f.path, f.blob, f.size, f.symbols.language, _pack(f.text)))
            file_id = cur.lastrowid
            self.conn.execute("INSERT INTO index_search (rowid, body) VALUES (?, ?)", (file_id, f.text))
            self.conn.executemany(
                "INSERT INTO index_defs VALUES (?, ?, ?, ?, ?, ?, ?)",
                [(file_id, d.name, d.kind, d.scope, d.signature, d.start, d.end) for d in f.symbols.definitions])
            self.conn.executemany(
                "INSERT INTO index_refs VALUES (?, ?, ?)",
                [(file_id, name, ",".join(map(str, lines))) for name, lines in f.symbols.references.items()])

    def remove(self, paths: Iterable[str]) -> None:
        for path in paths:
            row = self.conn.execute("SELECT id, body FROM index_files WHERE repo = ? AND path = ?",
                                    (self.repo, path)).fetchone()
            if row is None:
                continue
            file_id, body = row
            self.conn.execute("INSERT INTO index_search (index_search, rowid, body) VALUES ('delete', ?, ?)",
                              (file_id, _unpack(body)))
            for table in ("index_defs", "index_refs"):
                self.conn.execute(f"DELETE FROM {table} WHERE file_id = ?", (file_id,))
            self.conn.execute("DELETE FROM index_files WHERE id = ?", (file_id,))

    def finish(self, commit: str, report: dict) -> None:
        self.conn.execute("INSERT INTO index_repos VALUES (?, ?, ?) ON CONFLICT (repo) DO UPDATE SET "
                          "commit_sha = excluded.commit_sha, report = excluded.report",
                          (self.repo, commit, json.dumps(report)))
        self.conn.commit()

    def drop(self) -> None:
        self.remove(self.blobs())
        self.conn.execute("DELETE FROM index_repos WHERE repo = ?", (self.repo,))
        self.conn.commit()

    def definitions(self, names: Iterable[str], limit: int) -> list[Located]:
        names = sorted(set(names))
        if not names:
            return []
        rows = self.conn.execute(
            "SELECT f.path, d.name, d.kind, d.scope, d.signature, d.start_line, d.end_line FROM index_defs d "
            f"CROSS JOIN index_files f ON f.id = d.file_id WHERE d.name IN ({_marks(len(names))}) AND f.repo = ? "
            "ORDER BY f.path, d.start_line LIMIT ?", (*names, self.repo, limit))
        return [Located(path, Definition(*rest)) for path, *rest in rows]

    def definitions_in(self, path: str) -> list[Definition]:
        rows = self.conn.execute(
            "SELECT d.name, d.kind, d.scope, d.signature, d.start_line, d.end_line FROM index_defs d "
            "JOIN index_files f ON f.id = d.file_id WHERE f.repo = ? AND f.path = ? ORDER BY d.start_line",
            (self.repo, path))
        return [Definition(*row) for row in rows]

    def references(self, names: Iterable[str], limit: int) -> list[Reference]:
        names = sorted(set(names))
        if not names:
            return []
        rows = self.conn.execute(
            "SELECT f.path, r.name, r.lines FROM index_refs r CROSS JOIN index_files f ON f.id = r.file_id "
            f"WHERE r.name IN ({_marks(len(names))}) AND f.repo = ? ORDER BY f.path LIMIT ?",
            (*names, self.repo, limit))
        return [Reference(path, name, tuple(int(n) for n in lines.split(","))) for path, name, lines in rows]

    def text(self, path: str) -> str | None:
        row = self.conn.execute("SELECT body FROM index_files WHERE repo = ? AND path = ?",
                                (self.repo, path)).fetchone()
        return _unpack(row[0]) if row else None

    def search(self, words: Sequence[str], limit: int) -> list[str]:
        """Paths of the files that best match any of `words` (BM25), best first."""
        terms = [w for w in dict.fromkeys(words) if w.replace("_", "").isalnum()]
        if not terms:
            return []
        query = " OR ".join(f'"{t}"' for t in terms)
        rows = self.conn.execute(
            "SELECT f.path FROM index_search s CROSS JOIN index_files f ON f.id = s.rowid "
            "WHERE index_search MATCH ? AND f.repo = ? ORDER BY bm25(index_search) LIMIT ?",
            (query, self.repo, limit))
        return [row[0] for row in rows]
