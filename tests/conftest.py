"""Fixtures shared by the whole suite. Keep each one small and generic; put the rest beside its tests."""

from __future__ import annotations

import atexit
import functools
import gc
import logging
import os
import sys
import types
from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING

import pytest

from tests.support import postgres_support

# The rest of tests/support (the app, the doubles: 1.5 s of imports) is imported where a fixture
# needs it: pytest-xdist's controller loads this file before it starts the workers, and runs no test.
if TYPE_CHECKING:
    from bot.store.model import Storage
    from tests.support.chat_double import ChatDouble
    from tests.support.github_double import App, GitHubDouble
    from tests.support.saml_support import SamlIdP

# The cyclic collector runs after 10,000 net allocations instead of 700: a test process holds every
# collected test and the app's modules, and the tests allocate a great deal (documents parsed by
# the thousand, 100,000 SARIF results), so the default passes took 6% of the tests' CPU, and
# their full passes over the heap most of it; the peak memory stays the same (575 MB over
# tests/app, analyzers, auth and documents). Only this process: the app's own processes keep
# Python's defaults.
gc.set_threshold(10_000, 10, 10)

# The tests talk to their doubles over plain HTTP on 127.0.0.1 and never to a TLS server, yet every
# process that imports aiohttp's connector builds its verifying SSL context at once, reading the
# system's certificate bundle: 87 ms of each worker's and each command run by a test (about 140 a
# run), against 4 ms with no bundle to read. The test processes and their children read none.
os.environ.setdefault("SSL_CERT_FILE", os.devnull)


def _leave_at_once() -> None:
    """A pytest-xdist worker's last step: its results are with the controller, its output flushed;
    what is left is the interpreter's teardown of a heap of every collected test and the app's
    modules, 1 to 2 s a worker, during which the controller waits for it before it can print the
    summary (3.2 s from the last test to the summary on tests/expr and tests/plan, 0.4 s without)."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(0)


# Registered at the workers' start, so it runs after the handlers registered later (atexit runs
# the last registered first): the suite's own clean-ups have all run when the process leaves.
if os.environ.get("PYTEST_XDIST_WORKER"):
    atexit.register(_leave_at_once)


@pytest.fixture(scope="session")
def app_private_key() -> str:
    """A GitHub App private key (PEM), made fresh for this test run: no key is ever committed."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption()).decode()


@pytest.fixture
async def github() -> AsyncIterator[GitHubDouble]:
    """The GitHub double, started on 127.0.0.1; the test fails if the app broke GitHub's REST description."""
    from tests.support.app_support import started_github
    async with started_github() as double:
        yield double


@pytest.fixture
def github_app(github: GitHubDouble, app_private_key: str) -> App:
    """The app, registered with the double under the public half of `app_private_key`."""
    from tests.support.app_support import registered_app
    return registered_app(github, app_private_key)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """The URL of a PostgreSQL server for this run (see tests/support/postgres_support.py)."""
    url = os.environ.get("REVIEWER_TEST_POSTGRES_URL", postgres_support.DEFAULT_URL)
    why = postgres_support._reachable(url)
    if why is None:
        yield url
        return
    try:
        with postgres_support.throwaway_cluster() as cluster:
            yield cluster.url
    except Exception as exc:  # no binaries, or initdb failed
        from bot.store import redact_url
        postgres_support.unavailable(f"{redact_url(url)} is unreachable ({why}), and no throwaway cluster: {exc}")


@pytest.fixture(scope="session")
def postgres_database(postgres_server: str) -> Iterator[str]:
    """This run's own database, created at the first use and dropped at the end."""
    with postgres_support.fresh_database(postgres_server) as url:
        yield url


@pytest.fixture
def pg_cluster() -> Iterator[postgres_support.Cluster]:
    """A throwaway PostgreSQL cluster of the test's own, for tests that stop and start it."""
    try:
        with postgres_support.throwaway_cluster() as cluster:
            yield cluster
            return
    except RuntimeError as exc:  # no initdb/pg_ctl here
        postgres_support.unavailable(str(exc))


@pytest.fixture
def pg_url(postgres_database: str) -> str:
    """This run's database, emptied for the test."""
    postgres_support.reset(postgres_database)
    return postgres_database


@pytest.fixture(scope="session")
def pg_migrated(postgres_database: str) -> postgres_support.Migrated:
    return postgres_support.Migrated(postgres_database)


@pytest.fixture
def pg_migrated_url(pg_migrated: postgres_support.Migrated) -> str:
    """This run's database with the latest schema and no rows (postgres_support.Migrated): what a
    store opening a new database makes of it, for tests of what the store does, not how it migrates."""
    return pg_migrated.emptied()


@pytest.fixture(params=["sqlite", "postgres"])
def database_url(request, tmp_path) -> str:
    """Each storage test runs on both backends: one conformance suite. The database comes migrated
    and emptied (pg_migrated_url; tests/support/sqlite_template.py), as a store opened on a new
    database would make it."""
    if request.param == "sqlite":
        from tests.support.sqlite_template import migrated_sqlite
        return migrated_sqlite(tmp_path / "reviewer.db")
    return request.getfixturevalue("pg_migrated_url")


@pytest.fixture(params=["sqlite", "postgres"])
def empty_database_url(request, tmp_path) -> str:
    """Both backends with nothing in the database, not even a schema's version: for the tests of
    migrations and of what a store makes on a database that has never been opened."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'reviewer.db'}"
    return request.getfixturevalue("pg_url")


@pytest.fixture
async def storage(database_url: str) -> AsyncIterator[Storage]:
    """An opened (migrated) storage on each backend."""
    from bot.store import storage_for
    opened = storage_for(database_url)
    await opened.open()
    try:
        yield opened
    finally:
        await opened.close()


@pytest.fixture
def model_key(monkeypatch) -> str:
    """The model provider's key (tests/support/review_support.py's API_KEY) in the variable its admin file names."""
    from tests.support.review_support import API_KEY, KEY_VAR
    monkeypatch.setenv(KEY_VAR, API_KEY)
    return API_KEY


@pytest.fixture
def no_key_in_logs(caplog, model_key: str) -> Iterator[None]:
    """The provider's API key never reaches a log line (the app's or a library's) during the test."""
    caplog.set_level(logging.DEBUG)
    yield
    assert model_key not in caplog.text


@pytest.fixture
async def chat(model_key: str) -> AsyncIterator[ChatDouble]:
    """The chat double (an OpenAI-style provider on 127.0.0.1) that refuses a request without the
    model key; the test fails if a tool conversation was one OpenAI would refuse."""
    from tests.support.chat_double import ChatDouble
    double = await ChatDouble(api_key=model_key).start()
    try:
        yield double
    finally:
        await double.close()
    assert double.violations == [], double.violations


@pytest.fixture
def xmlsec() -> None:
    """The SAML tests need Debian's xmlsec1 binary: skipped (saying why) without it, unless CI
    demands it (tests/support/saml_support.py `require_xmlsec`)."""
    from tests.support.saml_support import require_xmlsec  # pysaml2 is loaded only by the SAML tests
    require_xmlsec()


@pytest.fixture
async def saml_idp() -> AsyncIterator[SamlIdP]:
    """The SAML identity-provider double (tests/support/saml_support.py) with its defaults, serving
    on 127.0.0.1 for the test; a test that needs other options makes its own."""
    from tests.support.saml_support import SamlIdP
    idp = SamlIdP()
    async with idp.serving():
        yield idp


@functools.cache
def process_helpers() -> tuple[object, ...]:
    """What makes a test a process test (marked `slow`): it drives Chromium, or starts the app's
    processes through the helpers of tests/support (`make test` runs these on workers of their own)."""
    from tests.support import browser_support, process_support, scale_support
    return (browser_support.chromium, scale_support.Proc, scale_support.web, scale_support.worker,
            process_support.start)


def _calls_a_process_helper(function: object) -> bool:
    """Whether the test's code, or a function of its own module it calls, names a process_helpers() one."""
    code = getattr(function, "__code__", None)
    if code is None:
        return False
    scope = getattr(function, "__globals__", {})
    todo, seen = [code], set()
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        todo += [const for const in current.co_consts if isinstance(const, types.CodeType)]  # lambdas, inner defs
        for name in current.co_names:
            value = scope.get(name)
            if any(value is helper for helper in process_helpers()):
                return True
            if isinstance(value, types.FunctionType) and value.__module__ == scope.get("__name__"):
                todo.append(value.__code__)
    return False


def pytest_collection_finish(session: pytest.Session) -> None:
    """What collection made (every test module, item and fixture definition, and the app's modules)
    lives until the process ends: frozen out of the cyclic collector, its passes no longer walk it,
    nor does the full pass pytest makes at the end of each process."""
    gc.freeze()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test that stops and starts a PostgreSQL cluster of its own (`pg_cluster`), drives a browser
    or starts the app's processes is slow (a module can also say so with `pytestmark`)."""
    for item in items:
        if "pg_cluster" in getattr(item, "fixturenames", ()) or _calls_a_process_helper(getattr(item, "function", None)):
            item.add_marker(pytest.mark.slow)
