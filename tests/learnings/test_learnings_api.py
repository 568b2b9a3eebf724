"""The learnings API through the real server (`reviewer serve`'s app, its SQLite or PostgreSQL
store): `reviewer learnings list|add|show|edit|rm` against it end to end, then its refusals —
bodies that break a rule, callers without the permission, grants narrowed to accounts (hostile:
a holder of `learnings:write` on `acme*` must neither see nor touch another account's learnings)."""

from __future__ import annotations

import asyncio
import json
import time

import aiohttp

from bot.auth.sessions import Session, create_session
from bot.commands.cli import main
from bot.server.signin.routes import SIGNIN_STORE
from tests.support.console_support import console_server
from tests.support.oidc_support import ADMIN_TOKEN, connector_doc, put_connector

ACCESS = """\
access:
  roles:
    admin:  {allow: ["*"]}
    acme:   {allow: ["learnings:read", "learnings:write"], accounts: ["acme*"]}
    reader: {allow: ["learnings:read"]}
"""


async def reviewer(capsys, *argv: str) -> tuple[int, str, str]:
    code = await asyncio.to_thread(main, ["learnings", *argv])
    out, err = capsys.readouterr()
    return code, out, err


async def test_the_cli_lists_adds_shows_edits_and_removes_through_the_server(
        tmp_path, capsys, monkeypatch, database_url):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("REVIEWER_TOKEN", ADMIN_TOKEN)
    async with console_server(tmp_path, admin_yaml=ACCESS, database_url=database_url) as server:
        url = ["--server", server.url]
        code, out, _ = await reviewer(capsys, "list", *url)
        assert (code, out) == (0, "No learnings.\n")
        code, out, err = await reviewer(capsys, "add", *url, "--repo", "acme/app", "--kind", "suppress",
                                        "--rule", "no-print", "--path", "src/**", "Use logging instead of print().")
        assert code == 0, err
        learning_id = out.split()[1]
        assert out.startswith(f"Added: {learning_id}  suppress  acme/app src/**  rule no-print")
        code, out, _ = await reviewer(capsys, "add", *url, "--account", "acme", "--kind", "guide",
                                      "We use tabs in Makefiles.")
        guide_id = out.split()[1]
        code, out, _ = await reviewer(capsys, "list", *url, "--repo", "acme/app", "--format", "json")
        assert code == 0 and [x["id"] for x in json.loads(out)["items"]] == [guide_id, learning_id]
        code, out, _ = await reviewer(capsys, "list", *url, "--repo", "acme/web")
        assert code == 0 and out.split()[0] == guide_id and learning_id not in out
        code, out, _ = await reviewer(capsys, "show", *url, learning_id)
        assert code == 0 and "by admin-token" in out, out
        code, out, err = await reviewer(capsys, "edit", *url, learning_id, "--rule", "", "--category", "style",
                                        "--every-path")
        assert code == 0, err
        assert out.startswith(f"Changed: {learning_id}  suppress  acme/app  category style")
        code, out, _ = await reviewer(capsys, "rm", *url, learning_id)
        assert code == 0 and out.startswith(f"Deleted: {learning_id}")
        status, audit = await _call(server, "GET", "/v1/audit", ADMIN_TOKEN)
        assert status == 200
        done = [(e["action"], e["target"], e["account"]) for e in audit["entries"] if e["action"].startswith("learning.")]
        assert done == [("learning.delete", f"learnings/{learning_id}", "acme"),
                        ("learning.change", f"learnings/{learning_id}", "acme"),
                        ("learning.add", f"learnings/{guide_id}", "acme"),
                        ("learning.add", f"learnings/{learning_id}", "acme")]  # newest first
        assert all(e["actor"] == "break-glass token" for e in audit["entries"] if e["action"].startswith("learning."))
        code, _, err = await reviewer(capsys, "rm", *url, learning_id)
        assert code == 1 and f"answered 404 (NotFound: no learning {learning_id})" in err
        code, out, err = await reviewer(capsys, "add", *url, "--account", "acme", "--kind", "suppress",
                                        "--path", "src/[", "text")
        assert (code, out) == (1, "")
        assert "/scope/paths/0: glob-syntax" in err and "(the body): required" in err


async def _call(server, method: str, path: str, token: str | None, body=None, *,
                content_type: str = "application/json") -> tuple[int, dict]:
    headers = {"Content-Type": content_type}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    data = body if isinstance(body, bytes) else None if body is None else json.dumps(body).encode()
    async with aiohttp.ClientSession() as http:
        async with http.request(method, server.url + path, data=data, headers=headers) as response:
            return response.status, await response.json()


async def _token(server, roles: list[str]) -> str:
    await put_connector(server, connector_doc("mock", "http://127.0.0.1:9", server.url))
    now = time.time()
    return await create_session(server.app[SIGNIN_STORE], Session("dana@example.com", "mock", roles, now, now + 3600))


def _body(account: str, **extra) -> dict:
    return {"scope": {"account": account, "repository": "app"}, "kind": "guide", "text": "Prefer pathlib.", **extra}


async def test_bodies_are_checked_field_by_field(tmp_path):
    async with console_server(tmp_path, admin_yaml=ACCESS) as server:
        status, answer = await _call(server, "POST", "/v1/learnings", ADMIN_TOKEN,
                                     {"scope": {"account": "acme", "paths": ["**", 3]}, "kind": "maybe",
                                      "text": " ", "id": "mine", "source": {"url": "javascript:alert(1)"}})
        assert status == 422 and answer["reason"] == "Invalid"
        fields = {(c["field"], c["reason"]) for c in answer["details"]["causes"]}
        assert {("/id", "read-only"), ("/kind", "enum"), ("/scope/paths/1", "type"),
                ("/source/url", "pattern")} <= fields
        assert any(c["field"] == "/text" for c in answer["details"]["causes"])
        status, answer = await _call(server, "POST", "/v1/learnings", ADMIN_TOKEN, b"{nope")
        assert status == 400 and answer["kind"] == "Status"
        status, _ = await _call(server, "POST", "/v1/learnings", ADMIN_TOKEN, b"a: b", content_type="text/yaml")
        assert status == 415
        status, _ = await _call(server, "POST", "/v1/learnings", ADMIN_TOKEN, b"x" * (70 * 1024))
        assert status == 413
        status, made = await _call(server, "POST", "/v1/learnings", ADMIN_TOKEN, _body("acme"))
        assert status == 201 and made["source"]["author"]
        status, answer = await _call(server, "PATCH", f"/v1/learnings/{made['id']}", ADMIN_TOKEN,
                                     {"scope": {"account": "other"}, "created": "2020-01-01T00:00:00Z"})
        assert status == 422 and {c["field"] for c in answer["details"]["causes"]} == {"/scope/account", "/created"}
        status, answer = await _call(server, "GET", "/v1/learnings?repository=app", ADMIN_TOKEN)
        assert status == 400 and "needs `account`" in answer["message"]
        status, answer = await _call(server, "GET", "/v1/learnings?kind=maybe", ADMIN_TOKEN)
        assert status == 400 and "`kind`" in answer["message"]


async def test_a_narrowed_grant_reaches_only_its_accounts_learnings(tmp_path):
    async with console_server(tmp_path, admin_yaml=ACCESS) as server:
        _, theirs = await _call(server, "POST", "/v1/learnings", ADMIN_TOKEN, _body("other"))
        _, ours = await _call(server, "POST", "/v1/learnings", ADMIN_TOKEN, _body("acme-corp"))
        acme, reader = await _token(server, ["acme"]), await _token(server, ["reader"])

        status, listed = await _call(server, "GET", "/v1/learnings", acme)
        assert status == 200 and [x["id"] for x in listed["items"]] == [ours["id"]]
        status, _ = await _call(server, "GET", "/v1/learnings?account=other", acme)
        assert status == 403
        for method, body in (("GET", None), ("PATCH", {"text": "mine now"}), ("DELETE", None)):
            status, answer = await _call(server, method, f"/v1/learnings/{theirs['id']}", acme, body)
            assert status == 404 and answer["message"] == f"no learning {theirs['id']}", method
        status, answer = await _call(server, "POST", "/v1/learnings", acme, _body("other"))
        assert status == 403 and "on account other" in answer["message"]
        status, changed = await _call(server, "PATCH", f"/v1/learnings/{ours['id']}", acme, {"text": "Use pathlib."})
        assert status == 200 and changed["text"] == "Use pathlib."

        status, listed = await _call(server, "GET", "/v1/learnings", reader)
        assert status == 200 and len(listed["items"]) == 2
        status, answer = await _call(server, "DELETE", f"/v1/learnings/{theirs['id']}", reader)
        assert status == 403 and "learnings:write" in answer["message"]
        status, _ = await _call(server, "POST", "/v1/learnings", reader, _body("acme"))
        assert status == 403
        for token in (None, "not-a-token"):
            status, _ = await _call(server, "GET", "/v1/learnings", token)
            assert status == 401
        status, _ = await _call(server, "GET", f"/v1/learnings/{theirs['id']}", ADMIN_TOKEN)
        assert status == 200  # untouched
