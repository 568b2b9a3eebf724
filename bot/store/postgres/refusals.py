"""What a failed connection to PostgreSQL means, said apart: a server that does not answer
(StoreUnavailable: worth trying again) from one that answered and refused (StoreRefused: a missing
database, a wrong password, an unknown role, an address its rules keep out — trying again will not
help, and the message says what to change).

libpq reports a refusal as text (`FATAL:  database "x" does not exist`), with no SQLSTATE on the
exception, so the server's own words are read here, in one place. A server whose messages are
translated (`lc_messages`) still reads as refused, with its first line quoted. The URL's password
never appears: the place is host, port, database and role, from the URL itself.

`connect_once(url)` opens one connection and closes it: the pool (bot/store/postgres/database.py)
calls it before it opens, so that a process that cannot use its database says why at once, in one
line, instead of after the pool's retries and their raw log lines; `reviewer doctor` reads the
schema's version through it too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import psycopg
from psycopg.conninfo import conninfo_to_dict

from bot.store.model import StoreError, StoreRefused, StoreUnavailable

CONNECT_TIMEOUT = 5  # seconds (libpq's whole seconds) the one connection may take


@dataclass(frozen=True)
class Place:
    """Where a URL points, without its password."""

    host: str
    port: str
    database: str
    role: str

    @property
    def server(self) -> str:
        return f"{self.host}:{self.port}"


def place_of(url: str) -> Place:
    try:
        parts = conninfo_to_dict(url)
    except psycopg.ProgrammingError:
        parts = {}
    role = str(parts.get("user") or "(the login's name)")
    return Place(host=str(parts.get("host") or "localhost"), port=str(parts.get("port") or "5432"),
                 database=str(parts.get("dbname") or role), role=role)


_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("missing-database", re.compile(r'database "[^"]*" does not exist')),
    ("wrong-password", re.compile(r"password authentication failed|no password supplied")),
    ("unknown-role", re.compile(r'role "[^"]*" does not exist')),
    ("not-allowed", re.compile(r"no pg_hba\.conf entry|not permitted to log in|too many connections")),
)


def refusal(exc: BaseException, url: str) -> StoreError:
    """The StoreError a failed connection to `url` means (StoreRefused or StoreUnavailable)."""
    text = str(exc)
    place = place_of(url)
    for reason, pattern in _PATTERNS:
        if pattern.search(text):
            return StoreRefused(reason, _refused(reason, place, text))
    said = re.search(r"(?:FATAL|ERROR):\s+(.+)", text)
    if said:
        return StoreRefused("refused", f"PostgreSQL at {place.server} refused the connection to the database "
                                       f"{place.database!r} as {place.role!r}: {said.group(1).strip()}")
    return StoreUnavailable(f"PostgreSQL at {place.server} cannot be reached: {_why_unreachable(text)}")


def _refused(reason: str, place: Place, text: str) -> str:
    if reason == "missing-database":
        return (f"the database {place.database!r} does not exist on PostgreSQL at {place.server}: create it "
                f"(`createdb {place.database}`, or CREATE DATABASE as an administrator) or correct the "
                "database's name in REVIEWER_DATABASE_URL")
    if reason == "wrong-password":
        return (f"PostgreSQL at {place.server} refused the password of the role {place.role!r}: correct the "
                "password in REVIEWER_DATABASE_URL (postgresql://ROLE:PASSWORD@HOST:PORT/DATABASE)")
    if reason == "unknown-role":
        return (f"the role {place.role!r} does not exist on PostgreSQL at {place.server}: create it (CREATE ROLE "
                f"{place.role} LOGIN PASSWORD '...') or correct the role in REVIEWER_DATABASE_URL")
    said = re.search(r"(?:FATAL|ERROR):\s+([^\n]+)", text)
    return (f"PostgreSQL at {place.server} does not let the role {place.role!r} into the database "
            f"{place.database!r} from here: {said.group(1).strip() if said else 'refused'} (its pg_hba.conf, the "
            "role's LOGIN, or its connection limit)")


def _why_unreachable(text: str) -> str:
    if "Connection refused" in text:
        return "the connection was refused (is PostgreSQL running, and listening on that address and port?)"
    if "timeout expired" in text or "timed out" in text:
        return f"no answer within {CONNECT_TIMEOUT} s (a firewall, or the wrong address)"
    if "resolve host" in text or "translate host name" in text or "Name or service not known" in text:
        return "the host name does not resolve"
    first = next((line.strip() for line in text.splitlines() if line.strip()), "no answer")
    return re.sub(r"^connection failed:\s*", "", first)


async def connect_once(url: str) -> int | None:
    """Connect to `url` once and read the schema's version (None: no schema yet, a database `serve`
    would migrate); StoreRefused or StoreUnavailable when it cannot be used."""
    try:
        async with await psycopg.AsyncConnection.connect(url, autocommit=True, prepare_threshold=None,
                                                         connect_timeout=CONNECT_TIMEOUT,
                                                         application_name="reviewer check") as conn:
            cursor = await conn.execute("SELECT to_regclass('schema_version') IS NOT NULL")
            row = await cursor.fetchone()
            if not row or not row[0]:
                return None
            cursor = await conn.execute("SELECT coalesce(max(version), 0) FROM schema_version")
            row = await cursor.fetchone()
            return int(row[0]) if row else 0
    except psycopg.OperationalError as exc:
        raise refusal(exc, url) from exc
