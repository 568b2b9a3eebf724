"""`reviewer learnings` against a small double of the learnings API, served over loopback HTTP.

The double serves the API's pinned shapes (docs: the learnings API draft; bodies checked by
`bot.learnings.body`, errors as `Status` objects) and records every request, so the tests see what
the command sent, with which token, and what it printed.
"""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from bot.commands.cli import main
from bot.commands.session import save_session
from bot.learnings.body import causes, new_learning, patched_learning
from bot.learnings.model import Learning, Scope, Source, from_json

TOKEN = "token-of-alice"
NOW = datetime(2025, 5, 1, 12, 0, tzinfo=UTC)


def status(code: int, reason: str, message: str, found=None) -> web.Response:
    body: dict[str, Any] = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                            "reason": reason, "code": code, "message": message}
    if found:
        body["details"] = {"causes": causes(found)}
    return web.json_response(body, status=code)


class LearningsDouble:
    def __init__(self) -> None:
        self.learnings: dict[str, Learning] = {}
        self.requests: list[tuple[str, str, dict[str, str], Any]] = []
        self.next_id = 1
        self.redirect_to: str | None = None

    def app(self) -> web.Application:
        app = web.Application(middlewares=[self.record])
        app.router.add_route("*", "/v1/learnings", self.collection)
        app.router.add_route("*", "/v1/learnings/{id}", self.one)
        return app

    @web.middleware
    async def record(self, request: web.Request, handler):
        body = await request.json() if request.can_read_body else None
        self.requests.append((request.method, request.path_qs, dict(request.headers), body))
        if self.redirect_to:
            raise web.HTTPFound(self.redirect_to + request.path_qs)
        if request.headers.get("Authorization") != f"Bearer {TOKEN}":
            return web.Response(status=401, headers={"WWW-Authenticate": "Bearer"})
        return await handler(request)

    async def collection(self, request: web.Request) -> web.Response:
        if request.method == "GET":
            q = request.query
            items = [x for x in self.learnings.values()
                     if ("account" not in q or x.scope.account.lower() == q["account"].lower())
                     and ("repository" not in q or x.scope.covers_repository(x.scope.account, q["repository"]))
                     and ("kind" not in q or x.kind == q["kind"])]
            return web.json_response({"items": [x.to_json() for x in reversed(items)]})
        learning, found = new_learning(await request.json(), id=f"{self.next_id:016x}", created=NOW, author="alice")
        if learning is None:
            return status(422, "Invalid", "the learning is invalid", found)
        self.next_id += 1
        self.learnings[learning.id] = learning
        return web.json_response(learning.to_json(), status=201, headers={"Location": f"/v1/learnings/{learning.id}"})

    async def one(self, request: web.Request) -> web.Response:
        learning = self.learnings.get(request.match_info["id"])
        if learning is None:
            return status(404, "NotFound", f"no learning {request.match_info['id']}")
        if request.method == "DELETE":
            del self.learnings[learning.id]
        elif request.method == "PATCH":
            changed, found = patched_learning(learning, await request.json())
            if changed is None:
                return status(422, "Invalid", "the change is invalid", found)
            self.learnings[learning.id] = learning = changed
        return web.json_response(learning.to_json())


@pytest.fixture
async def double(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    monkeypatch.delenv("REVIEWER_TOKEN", raising=False)
    monkeypatch.delenv("REVIEWER_SERVER", raising=False)
    fake = LearningsDouble()
    server = TestServer(fake.app(), host="127.0.0.1")
    await server.start_server()
    fake.url = str(server.make_url("")).rstrip("/")
    yield fake
    await server.close()


async def reviewer(capsys, *argv: str) -> tuple[int, str, str]:
    code = await asyncio.to_thread(main, ["learnings", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def seed(fake: LearningsDouble, *learnings: Learning) -> None:
    for learning in learnings:
        fake.learnings[learning.id] = learning


SUPPRESS = Learning("00000000000000aa", Scope("octo", "app", ("src/cli/**",)), "suppress",
                    "Use logging instead of print().", NOW, rule="no-print",
                    source=Source("https://github.com/octo/app/pull/7#discussion_r1", "alice"))
GUIDE = Learning("00000000000000bb", Scope("octo"), "guide", "We use tabs in Makefiles.", NOW)


async def test_list_with_filters_in_text_and_json(double, capsys, monkeypatch):
    monkeypatch.setenv("REVIEWER_TOKEN", TOKEN)
    seed(double, SUPPRESS, GUIDE, Learning("00000000000000cc", Scope("other"), "guide", "x", NOW))
    code, out, _ = await reviewer(capsys, "list", "--server", double.url, "--repo", "octo/app")
    assert code == 0 and double.requests[-1][1] == "/v1/learnings?account=octo&repository=app"
    assert out.splitlines() == ["00000000000000bb  guide  octo/*  -  We use tabs in Makefiles.",
                                "00000000000000aa  suppress  octo/app src/cli/**  rule no-print  "
                                "Use logging instead of print()."]
    code, out, _ = await reviewer(capsys, "list", "--server", double.url, "--account", "OCTO", "--kind", "guide",
                                  "--format", "json")
    assert code == 0 and json.loads(out) == {"items": [GUIDE.to_json()]}
    assert double.requests[-1][1] == "/v1/learnings?account=OCTO&kind=guide"
    code, out, _ = await reviewer(capsys, "list", "--server", double.url, "--account", "nobody")
    assert (code, out) == (0, "No learnings.\n")


async def test_add_show_edit_and_rm(double, capsys, monkeypatch):
    monkeypatch.setenv("REVIEWER_TOKEN", TOKEN)
    code, out, _ = await reviewer(capsys, "add", "--server", double.url, "--repo", "octo/app", "--kind", "suppress",
                                  "--rule", "no-print", "--path", "src/**", "--path", "bin/**",
                                  "--source-url", "https://example.com/decision", "Use logging instead of print().")
    assert code == 0 and out.startswith("Added: 0000000000000001  suppress  octo/app src/**,bin/**  rule no-print")
    method, _, headers, body = double.requests[-1]
    assert method == "POST" and headers["Authorization"] == f"Bearer {TOKEN}"
    assert body == {"scope": {"account": "octo", "repository": "app", "paths": ["src/**", "bin/**"]},
                    "kind": "suppress", "text": "Use logging instead of print().", "rule": "no-print",
                    "source": {"url": "https://example.com/decision"}}
    code, out, _ = await reviewer(capsys, "show", "--server", double.url, "0000000000000001")
    assert code == 0 and "created 2025-05-01T12:00:00Z by alice (https://example.com/decision)" in out
    code, out, _ = await reviewer(capsys, "edit", "--server", double.url, "0000000000000001", "--rule", "",
                                  "--category", "style", "--every-path")
    assert code == 0 and double.requests[-1][3] == {"rule": None, "category": "style", "scope": {"paths": []}}
    assert out.startswith("Changed: 0000000000000001  suppress  octo/app  category style")
    code, out, _ = await reviewer(capsys, "rm", "--server", double.url, "0000000000000001", "--format", "json")
    assert code == 0 and json.loads(out)["id"] == "0000000000000001" and double.learnings == {}
    assert double.requests[-1][:2] == ("DELETE", "/v1/learnings/0000000000000001")


async def test_refusals_are_printed_with_their_causes(double, capsys, monkeypatch):
    monkeypatch.setenv("REVIEWER_TOKEN", TOKEN)
    code, out, err = await reviewer(capsys, "add", "--server", double.url, "--account", "octo", "--kind", "suppress",
                                    "--path", "src/[", "text")
    assert (code, out) == (1, "")
    assert err.splitlines() == [
        "reviewer learnings: error: POST /v1/learnings answered 422 (Invalid: the learning is invalid)",
        "  /scope/paths/0: glob-syntax: `scope.paths[0]`: is not a valid doublestar glob: unclosed '[' at offset 4; "
        "got string 'src/['",
        "  (the body): required: the body: a `suppress` learning names the `rule` or the `category` of the findings "
        "it leaves out"]
    code, _, err = await reviewer(capsys, "rm", "--server", double.url, "../../admin")
    assert code == 1 and "answered 404 (NotFound: no learning ../../admin)" in err
    assert double.requests[-1][1] == "/v1/learnings/..%2F..%2Fadmin"  # the id stays one path segment
    monkeypatch.setenv("REVIEWER_TOKEN", "wrong")
    code, _, err = await reviewer(capsys, "list", "--server", double.url)
    assert code == 1 and "answered 401 (no details)" in err


@pytest.mark.parametrize("argv, message", [
    (["add", "x"], "say where the learning applies"),
    (["add", "x", "--repo", "octo/app", "--account", "octo"], "say where the learning applies"),
    (["add", "x", "--repo", "octo"], "--repo must be OWNER/NAME"),
    (["list", "--repo", "octo/app", "--account", "other"], "name two accounts"),
    (["edit", "id"], "nothing to change"),
    (["edit", "id", "--path", "a", "--every-path"], "contradict"),
    (["list", "--server", "ftp://x"], "--server must be an http:// or https:// URL"),
])
async def test_usage_errors_send_nothing(double, capsys, monkeypatch, argv, message):
    monkeypatch.setenv("REVIEWER_TOKEN", TOKEN)
    if "--server" not in argv:
        argv = [*argv, "--server", double.url]
    code, _, err = await reviewer(capsys, *argv)
    assert code == 2 and message in err and double.requests == []


async def test_the_session_of_reviewer_login_is_used_for_its_server_only(double, capsys, tmp_path):
    session = tmp_path / "reviewer" / "session.json"
    save_session(session, {"server": double.url + "/", "token": TOKEN, "username": "alice"})
    code, _, _ = await reviewer(capsys, "list")  # no --server: the session's
    assert code == 0 and double.requests[-1][2]["Authorization"] == f"Bearer {TOKEN}"
    other = LearningsDouble()
    evil = TestServer(other.app(), host="127.0.0.1")
    await evil.start_server()
    try:
        code, _, err = await reviewer(capsys, "list", "--server", str(evil.make_url("")))
        assert code == 2 and "the session in" in err and "is for " + double.url in err
        assert TOKEN not in err and other.requests == []
    finally:
        await evil.close()
    assert len(double.requests) == 1


async def test_a_redirect_is_not_followed_so_the_token_stays_home(double, capsys, monkeypatch):
    monkeypatch.setenv("REVIEWER_TOKEN", TOKEN)
    elsewhere = LearningsDouble()
    server = TestServer(elsewhere.app(), host="127.0.0.1")
    await server.start_server()
    try:
        double.redirect_to = str(server.make_url("")).rstrip("/")
        code, _, err = await reviewer(capsys, "list", "--server", double.url)
        assert code == 2 and "answered 302, a redirect to" in err and "not followed" in err
        assert elsewhere.requests == []
    finally:
        await server.close()


async def test_without_credentials_or_a_server(double, capsys, monkeypatch):
    code, _, err = await reviewer(capsys, "list", "--server", double.url)
    assert code == 2 and "not signed in: run `reviewer login --server URL`, or set REVIEWER_TOKEN" in err
    monkeypatch.setenv("REVIEWER_TOKEN", TOKEN)
    code, _, err = await reviewer(capsys, "list")
    assert code == 2 and "no server: pass --server URL" in err
    await double_closed_port_check(capsys)


async def test_reviewer_server_names_the_server_as_for_upload_sarif(double, capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("REVIEWER_TOKEN", TOKEN)
    monkeypatch.setenv("REVIEWER_SERVER", double.url + "/")
    seed(double, GUIDE)
    code, out, _ = await reviewer(capsys, "list")
    assert code == 0 and "We use tabs in Makefiles." in out
    assert double.requests[-1][2]["Authorization"] == f"Bearer {TOKEN}"
    monkeypatch.delenv("REVIEWER_TOKEN")  # a session for another server is not sent to REVIEWER_SERVER's
    save_session(tmp_path / "reviewer" / "session.json", {"server": "http://127.0.0.1:9", "token": "other-token"})
    code, _, err = await reviewer(capsys, "list")
    assert code == 2 and "is for http://127.0.0.1:9, not " + double.url in err and len(double.requests) == 1


async def double_closed_port_check(capsys):
    code, _, err = await reviewer(capsys, "list", "--server", "http://127.0.0.1:9")
    assert code == 2 and "cannot reach http://127.0.0.1:9" in err


async def test_what_a_hostile_server_sends_cannot_drive_the_terminal(double, capsys, monkeypatch):
    monkeypatch.setenv("REVIEWER_TOKEN", TOKEN)
    hostile = from_json({**GUIDE.to_json(), "text": "fine\x1b[2J\x1b]0;pwned\x07 \u202eevil"})
    seed(double, hostile)
    code, out, _ = await reviewer(capsys, "list", "--server", double.url)
    assert code == 0 and "\x1b" not in out and "\x07" not in out and "\u202e" not in out
    assert "fine\\x1b[2J\\x1b]0;pwned\\x07 \\u202eevil" in out
    code, out, _ = await reviewer(capsys, "show", "--server", double.url, GUIDE.id)
    assert code == 0 and "\x1b" not in out
