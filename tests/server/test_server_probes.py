"""`GET /livez` (the process) and `GET /readyz` (started, the store reachable, the schema this
release's) beside `/healthz`, on a web server and on a worker (bot/server/probes.py)."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import aiohttp
import psycopg
from aiohttp import web

from bot.server.app import make_app
from bot.store.sqlite.migrations import LATEST, MIGRATIONS
from tests.support.server_support import Recorder, Server, running_server, settings_for, wait_for


@asynccontextmanager
async def running_worker(tmp_path: Path, database_url: str) -> AsyncIterator[Server]:
    """`reviewer worker`'s application: jobs, /healthz, /metrics and the probes only."""
    app = make_app(settings_for(tmp_path, REVIEWER_DATABASE_URL=database_url), lambda context: Recorder(),
                   role="worker")
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        async with aiohttp.ClientSession() as http:
            yield Server(f"http://127.0.0.1:{runner.addresses[0][1]}", app, http)
    finally:
        await runner.cleanup()


async def _get(http: aiohttp.ClientSession, url: str) -> tuple[int, dict]:
    async with http.get(url) as response:
        return response.status, await response.json()


async def test_a_started_server_is_live_and_ready(tmp_path):
    async with running_server(tmp_path, Recorder()) as server:
        assert await _get(server.http, server.url + "/livez") == (200, {"status": "ok"})
        assert await _get(server.http, server.url + "/readyz") == (200, {"status": "ok", "store": "ok", "schema": LATEST})


async def test_a_database_with_another_schema_is_not_ready_and_the_process_stays_live(tmp_path):
    async with running_server(tmp_path, Recorder()) as server:
        with sqlite3.connect(tmp_path / "reviewer.db") as conn:  # a newer release took the database over
            conn.execute("INSERT INTO schema_version (version) VALUES (?)", (LATEST + 1,))
        status, body = await _get(server.http, server.url + "/readyz")
        assert status == 503 and body["reason"] == (f"the database has schema version {LATEST + 1}, "
                                                    f"newer than this release's {LATEST}")
        with sqlite3.connect(tmp_path / "reviewer.db") as conn:  # a database whose migrations did not run
            conn.execute("DELETE FROM schema_version WHERE version >= ?", (LATEST,))
        previous = MIGRATIONS[-2][0]  # the version before the latest (numbers may skip)
        status, body = await _get(server.http, server.url + "/readyz")
        assert status == 503 and body["reason"] == (f"the database has schema version {previous}; "
                                                    f"the migrations to {LATEST} have not run")
        assert (await _get(server.http, server.url + "/livez"))[0] == 200


async def test_postgresql_away_makes_web_and_worker_unready_but_live_then_ready_again(tmp_path, pg_cluster):
    async with (running_server(tmp_path, Recorder(), REVIEWER_DATABASE_URL=pg_cluster.url) as web_server,
                running_worker(tmp_path, pg_cluster.url) as worker):
        assert (await worker.http.get(worker.url + "/webhook")).status == 404  # a worker takes no deliveries
        for server in (web_server, worker):
            assert (await _get(server.http, server.url + "/readyz"))[0] == 200
        pg_cluster.stop("immediate")
        for server in (web_server, worker):
            status, body = await _get(server.http, server.url + "/readyz")
            assert (status, body["reason"]) == (503, "the store is unreachable")
            assert (await _get(server.http, server.url + "/livez"))[0] == 200
        pg_cluster.start()

        async def ready() -> bool:
            return all([(await _get(s.http, s.url + "/readyz"))[0] == 200 for s in (web_server, worker)])
        await wait_for(ready, timeout=30)
        with psycopg.connect(pg_cluster.url) as conn:
            conn.execute("INSERT INTO schema_version (version) VALUES (%s)", (LATEST + 1,))
        status, body = await _get(worker.http, worker.url + "/readyz")
        assert status == 503 and "newer than this release's" in body["reason"]
