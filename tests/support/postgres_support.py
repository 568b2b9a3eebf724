"""Real PostgreSQL for the tests: the server at REVIEWER_TEST_POSTGRES_URL (default the local one),
else a throwaway cluster started with initdb/pg_ctl when PostgreSQL's binaries are installed, else
a skip that says why (a failure when REVIEWER_TEST_REQUIRE_POSTGRES=1, as in CI).

Each test run gets its own database, created here and dropped at the end; each test that asks for
`pg_url` gets it with an empty `public` schema.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest

DEFAULT_URL = "postgresql://postgres@127.0.0.1:5432/postgres"


def _reachable(url: str) -> str | None:
    """None when a connection works, else why not."""
    try:
        with psycopg.connect(url, connect_timeout=3):
            return None
    except psycopg.Error as exc:
        return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def _binaries() -> tuple[str, str] | None:
    initdb, pg_ctl = shutil.which("initdb"), shutil.which("pg_ctl")
    if initdb and pg_ctl:
        return initdb, pg_ctl
    for folder in sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True):
        if (folder / "initdb").exists() and (folder / "pg_ctl").exists():
            return str(folder / "initdb"), str(folder / "pg_ctl")
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Cluster:
    """A throwaway PostgreSQL cluster of our own (trust auth, on 127.0.0.1), for tests that restart it."""

    def __init__(self, root: Path, binaries: tuple[str, str]) -> None:
        self.root, (self.initdb, self.pg_ctl) = root, binaries
        self.port = free_port()
        self.data = root / "data"

    @property
    def url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def _run(self, *args: str) -> None:
        user = {}
        if os.geteuid() == 0:  # PostgreSQL refuses to run as root: run as its own system user
            user = {"user": "postgres"}
            shutil.chown(self.root, "postgres")
        subprocess.run(args, check=True, capture_output=True, timeout=120, **user)  # type: ignore[call-overload]

    def init(self) -> None:
        self._run(self.initdb, "-D", str(self.data), "-U", "postgres", "-A", "trust", "--no-sync")

    def start(self) -> None:
        opts = f"-p {self.port} -c listen_addresses=127.0.0.1 -c unix_socket_directories={self.root} -c fsync=off"
        self._run(self.pg_ctl, "-D", str(self.data), "-o", opts, "-l", str(self.root / "log"), "-w", "start")

    def stop(self, mode: str = "fast") -> None:
        self._run(self.pg_ctl, "-D", str(self.data), "-m", mode, "-w", "stop")


@contextmanager
def throwaway_cluster() -> Iterator[Cluster]:
    binaries = _binaries()
    if binaries is None:
        raise RuntimeError("PostgreSQL's initdb and pg_ctl are not installed")
    root = Path(tempfile.mkdtemp(prefix="reviewer-pg-"))
    os.chmod(root, 0o755)
    cluster = Cluster(root, binaries)
    try:
        cluster.init()
        cluster.start()
        yield cluster
    finally:
        try:
            cluster.stop("immediate")
        except Exception:  # already stopped
            pass
        shutil.rmtree(root, ignore_errors=True)


def unavailable(reason: str) -> None:
    """Skip saying why, or fail when the run requires PostgreSQL."""
    if os.environ.get("REVIEWER_TEST_REQUIRE_POSTGRES") == "1":
        pytest.fail(f"PostgreSQL is required (REVIEWER_TEST_REQUIRE_POSTGRES=1): {reason}", pytrace=False)
    pytest.skip(f"no PostgreSQL: {reason}")


def with_database(url: str, name: str) -> str:
    return urlunsplit(urlsplit(url)._replace(path=f"/{name}"))


@contextmanager
def fresh_database(server_url: str) -> Iterator[str]:
    """A database of its own on the server, dropped afterwards; yields its URL."""
    name = f"reviewer_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
        # a commit returns before its WAL reaches the disk: what a crash of the server would lose
        # is nothing a test keeps, and hundreds of tests committing at once no longer queue on
        # the disk's flushes (each transaction is still atomic and isolated)
        conn.execute(f'ALTER DATABASE "{name}" SET synchronous_commit = off')
    try:
        yield with_database(server_url, name)
    finally:
        with psycopg.connect(server_url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


# What a database's schema is made of, as one digest: its tables' columns, indexes, constraints,
# functions, triggers, enum types, extensions and the versions it was migrated through. Two
# databases with one digest hold one schema.
FINGERPRINT = """
SELECT md5(coalesce(string_agg(x, E'\\n' ORDER BY x), '')) FROM (
  SELECT 'c ' || table_name || '.' || column_name || ' ' || data_type || ' ' || coalesce(column_default, '')
         || ' ' || is_nullable FROM information_schema.columns WHERE table_schema = 'public'
  UNION ALL SELECT 'i ' || indexdef FROM pg_indexes WHERE schemaname = 'public'
  UNION ALL SELECT 'k ' || conrelid::regclass || '.' || conname || ' ' || pg_get_constraintdef(oid)
            FROM pg_constraint WHERE connamespace = 'public'::regnamespace
  UNION ALL SELECT 'f ' || p.oid::regprocedure || ' ' || md5(p.prosrc) FROM pg_proc p
            WHERE p.pronamespace = 'public'::regnamespace
  UNION ALL SELECT 't ' || tgrelid::regclass || '.' || tgname FROM pg_trigger WHERE NOT tgisinternal
  UNION ALL SELECT 'y ' || t.typname || ' ' || e.enumlabel FROM pg_enum e JOIN pg_type t ON t.oid = e.enumtypid
  UNION ALL SELECT 'e ' || extname FROM pg_extension
  UNION ALL SELECT 'v ' || version FROM schema_version
) AS parts(x)
"""


def fingerprint(conn: psycopg.Connection) -> str:
    if conn.execute("SELECT to_regclass('schema_version') IS NULL").fetchone() == (True,):
        return "no schema_version"
    row = conn.execute(FINGERPRINT).fetchone()
    assert row is not None
    return str(row[0])


class Migrated:
    """This run's database holding the schema a migration from nothing makes, emptied of rows for
    each test: what a store opened on a new database sees, without dropping and creating every
    table again for each of the hundreds of tests that open one (0.2 s of PostgreSQL's CPU each).

    A test may change the schema (drop a table, add a function, leave a half-made migration): the
    schema's fingerprint is compared with the one a fresh migration made, and on any difference the
    database is emptied and migrated from nothing again."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.made: str | None = None  # the fingerprint of a freshly migrated schema
        self.emptying = ""  # the statements that empty it, one round trip (the schema's tables are the fingerprint's)

    def _migrate_from_nothing(self, conn: psycopg.Connection) -> None:
        from bot.store.postgres.migrations import migrate
        conn.execute("DROP SCHEMA public CASCADE")
        conn.execute("CREATE SCHEMA public")
        migrate(conn, "the tests' database")
        self.made = fingerprint(conn)
        tables = conn.execute("SELECT quote_ident(tablename) FROM pg_tables WHERE schemaname = 'public'"
                              " AND tablename <> 'schema_version' ORDER BY 1").fetchall()
        sequences = conn.execute("SELECT quote_ident(sequencename) FROM pg_sequences WHERE schemaname = 'public'"
                                 " ORDER BY 1").fetchall()
        # DELETE, not TRUNCATE: no new files for PostgreSQL to make and sync; no foreign-key triggers.
        self.emptying = "".join(["SET LOCAL session_replication_role = replica;",
                                 *(f"DELETE FROM {table};" for (table,) in tables),
                                 *(f"ALTER SEQUENCE {sequence} RESTART;" for (sequence,) in sequences)])

    def emptied(self) -> str:
        """The database's URL, its schema as a fresh migration makes it and no row in any table but
        the schema's version."""
        with psycopg.connect(self.url, autocommit=True) as conn:
            if self.made is None or fingerprint(conn) != self.made:
                self._migrate_from_nothing(conn)
                return self.url
            with conn.transaction():
                conn.execute(self.emptying.encode())  # several statements: no parameters, the simple protocol
        return self.url


def reset(url: str) -> None:
    """Empty the database: every table (ours and the job queue's) goes."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DROP SCHEMA public CASCADE")
        conn.execute("CREATE SCHEMA public")


def with_password_role(cluster: Cluster, role: str, password: str) -> str:
    """On a cluster of the test's own: a role with a password owning a database of its name, and
    TCP clients asked for passwords from now on (scram-sha-256; the local socket stays trusted).
    The role's URL, with `{}` where the password goes."""
    with psycopg.connect(cluster.url, autocommit=True) as conn:
        conn.execute(f"CREATE ROLE {role} LOGIN PASSWORD '{password}'")
        conn.execute(f"CREATE DATABASE {role} OWNER {role}")
        (cluster.data / "pg_hba.conf").write_text("local all all trust\nhost all all 127.0.0.1/32 scram-sha-256\n")
        conn.execute("SELECT pg_reload_conf()")
    return f"postgresql://{role}:{{}}@127.0.0.1:{cluster.port}/{role}"
