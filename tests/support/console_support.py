"""Helpers for the console tests: a server with the break-glass token, sessions made through the
sign-in store's own API (`create_session`), failed deliveries, and form tokens read from pages."""

from __future__ import annotations

import re
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import aiohttp
from aiohttp import web

from bot.auth.guard import BREAK_GLASS
from bot.auth.sessions import Session, create_session
from bot.events.jobs import Handler
from bot.server.app import make_app
from bot.server.context import ServerContext
from bot.server.signin.cookies import SESSION_COOKIE
from bot.server.signin.routes import SIGNIN_STORE
from tests.support.oidc_support import ADMIN_TOKEN, connector_doc, put_connector
from tests.support.server_support import Recorder, Server, pr_payload, running_server, settings_for

ACCESS_YAML = """\
access:
  roles:
    admin:   {allow: ["*"]}
    auditor: {allow: ["config:read", "deliveries:read"], accounts: ["acme*"]}
    watcher: {allow: ["connectors:read"]}  # connectors belong to no one account: never narrowed
    writer:  {allow: ["connectors:read", "connectors:write", "deliveries:read", "deliveries:write"]}
  mfa:
    required: ["config:write"]
"""


@asynccontextmanager
async def console_server(tmp_path: Path, recorder: Recorder | None = None, admin_yaml: str = ACCESS_YAML,
                         database_url: str | None = None, **extra: str) -> AsyncIterator[Server]:
    """The server with the console; `database_url` (the `database_url` fixture: SQLite, then
    PostgreSQL) picks its storage, else the SQLite file in `tmp_path`."""
    path = tmp_path / "admin.yaml"
    path.write_text(admin_yaml)
    env = {"REVIEWER_ADMIN_TOKEN": ADMIN_TOKEN, "REVIEWER_ADMIN_CONFIG": str(path), **extra}
    if database_url:
        env["REVIEWER_DATABASE_URL"] = database_url
    async with running_server(tmp_path, recorder or Recorder(), **env) as server:
        yield server


async def session_for(server: Server, roles: list[str], username: str = "dana@example.com",
                      connector: str = "mock") -> aiohttp.ClientSession:
    """A browser holding a session with `roles` (made as a sign-in makes one)."""
    if connector != BREAK_GLASS:  # a session lasts only while its connector is there and ready
        await put_connector(server, connector_doc(connector, "http://127.0.0.1:9", server.url))
    now = time.time()
    token = await create_session(server.app[SIGNIN_STORE], Session(username, connector, roles, now, now + 3600))
    jar = aiohttp.CookieJar(unsafe=True)
    jar.update_cookies({SESSION_COOKIE: token}, aiohttp.client.URL(server.url))
    return aiohttp.ClientSession(cookie_jar=jar, headers={"Origin": server.url})


def csrf_of(html: str) -> str:
    found = re.search(r'name="csrf" value="([0-9a-f]{64})"', html)
    assert found, "the page carries no CSRF token"
    return found.group(1)


async def failed_delivery(server: Server, recorder: Recorder, delivery: str, repo: str = "acme/app",
                          why: str = "the model answered 500") -> dict:
    recorder.fail[delivery] = why
    status, _ = await server.post("pull_request", pr_payload(7, "a" * 40, repo=repo), delivery)
    assert status == 202
    return await server.wait_state(delivery, "failed")


@asynccontextmanager
async def serving(app: web.Application) -> AsyncIterator[str]:
    """`app` on 127.0.0.1; yields its URL."""
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        yield f"http://127.0.0.1:{runner.addresses[0][1]}"
    finally:
        await runner.cleanup()


@asynccontextmanager
async def server_with(tmp_path: Path, handler_for: Callable[[ServerContext], Handler],
                      database_url: str | None = None, **extra: str) -> AsyncIterator[Server]:
    """A server whose job handler is made from the server's context (it may make HTTP calls)."""
    path = tmp_path / "admin.yaml"
    path.write_text(ACCESS_YAML)
    env = {"REVIEWER_ADMIN_TOKEN": ADMIN_TOKEN, "REVIEWER_ADMIN_CONFIG": str(path), **extra}
    if database_url:
        env["REVIEWER_DATABASE_URL"] = database_url
    app = make_app(settings_for(tmp_path, **env), handler_for)
    async with serving(app) as url, aiohttp.ClientSession() as http:
        yield Server(url, app, http)
