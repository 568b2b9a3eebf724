"""The admin API through real HTTP: `reviewer serve`'s app with its real settings, GitHub the double."""

from __future__ import annotations

import asyncio
import sqlite3

import aiohttp

from tests.support.app_support import World, running_app
from tests.support.server_support import Recorder, running_server, wait_for

TOKEN = "admin-token-for-tests-0123456789abcdef"
ADMIN = """\
providers:
  openai: {type: openai, baseUrl: 'https://api.openai.com/v1', apiKey: 'secret://openai/api-key'}
defaults:
  feedback: minimal
  rules:
    - id: no-secrets
      rule: Never commit credentials.
accounts:
  octo-org:
    requireSuggestedFix: true
    ignore: ['**/*.lock']
"""
CONFIG = """\
models:
  review: openai/gpt-4o
approve: true
rules:
  - id: python-style
    rule: Functions have type hints.
    paths: ["**/*.py"]
"""
INSTALLATION_ROUTE = "GET /repos/{owner}/{repo}/installation"


async def _get(world: World, path: str, token: str | None = TOKEN) -> tuple[int, dict, str]:
    headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
    async with aiohttp.ClientSession() as http:
        async with http.get(world.url + path, headers=headers) as response:
            text = await response.text()
            return response.status, await response.json(), text


def _app(tmp_path, github, github_app, app_private_key, **extra):
    return running_app(tmp_path, github, github_app, app_private_key, admin_yaml=ADMIN,
                       REVIEWER_ADMIN_TOKEN=TOKEN, **extra)


async def test_a_valid_config_gives_effective_values_and_their_sources(tmp_path, github, github_app, app_private_key):
    async with _app(tmp_path, github, github_app, app_private_key) as world:
        world.repo.commit({".reviewer.yaml": CONFIG, "src/app.py": "x = 1\n"})
        status, body, text = await _get(world, "/api/config/octo-org/example")
    assert status == 200, body
    assert (body["repository"], body["ref"], body["configFile"]) == ("octo-org/example", "main", ".reviewer.yaml")
    assert body["valid"] is True and body["errors"] == []
    effective = body["effective"]
    assert effective["models"] == {"review": "openai/gpt-4o", "fallback": None}
    assert (effective["feedback"], effective["approve"], effective["requireSuggestedFix"]) == ("minimal", True, True)
    assert [(r["id"], r["source"]) for r in effective["rules"]] == [("no-secrets", "instance"),
                                                                    ("python-style", "repository")]
    assert effective["ignore"][0]["pattern"] == "**/*.lock"
    assert effective["providers"]["openai"]["apiKey"] == "secret"
    sources = body["sources"]
    assert sources["models.review"] == "repository" and sources["approve"] == "repository"
    assert sources["feedback"] == "instance" and sources["requireSuggestedFix"] == "account"
    assert sources["rules"] == "instance+repository" and sources["enabled"] == "default"
    assert "secret://openai" not in text and TOKEN not in text and app_private_key.splitlines()[1] not in text


async def test_an_invalid_config_lists_every_error_with_its_position(tmp_path, github, github_app, app_private_key):
    bad = "feedback: loud\nrules:\n  - id: Bad_Id\n    rule: x\nmodels:\n  review: elsewhere/model\n"
    async with _app(tmp_path, github, github_app, app_private_key) as world:
        world.repo.commit({".reviewer.yml": bad})
        status, body, _ = await _get(world, "/api/config/octo-org/example")
    assert status == 200 and body["valid"] is False and body["configFile"] == ".reviewer.yml"
    assert [(e["line"], e["column"], e["pointer"], e["code"]) for e in body["errors"]] == [
        (1, 11, "/feedback", "enum"), (3, 9, "/rules/0/id", "pattern"),
        (6, 11, "/models/review", "undeclared-provider")]
    assert all(e["message"] for e in body["errors"])
    # an invalid file is not applied: what shows is the admin layers alone
    assert [r["id"] for r in body["effective"]["rules"]] == ["no-secrets"]
    assert body["sources"]["feedback"] == "instance"


async def test_no_config_file_means_the_admin_layers_and_defaults(tmp_path, github, github_app, app_private_key):
    async with _app(tmp_path, github, github_app, app_private_key) as world:
        world.repo.commit({"README.md": "hi\n"})
        status, body, _ = await _get(world, "/api/config/octo-org/example")
    assert status == 200 and body["configFile"] is None and body["valid"] is True
    assert body["effective"]["approve"] is False and body["sources"]["approve"] == "default"


async def test_two_config_files_or_a_huge_one_are_errors_not_failures(tmp_path, github, github_app, app_private_key):
    async with _app(tmp_path, github, github_app, app_private_key) as world:
        world.repo.commit({".reviewer.yaml": CONFIG, ".reviewer.yml": CONFIG})
        status, body, _ = await _get(world, "/api/config/octo-org/example")
        assert status == 200 and body["valid"] is False
        assert [e["code"] for e in body["errors"]] == ["both-config-files"]
        world.repo.commit({".reviewer.yaml": "# padding\n" * 120_000, ".reviewer.yml": None})  # over 1 MB
        status, body, _ = await _get(world, "/api/config/octo-org/example")
        assert status == 200 and body["valid"] is False and body["configFile"] == ".reviewer.yaml"
        assert [(e["line"], e["code"]) for e in body["errors"]] == [(1, "too-large")]


async def test_without_an_admin_file_the_repository_file_stands_alone(tmp_path, github, github_app, app_private_key):
    async with running_app(tmp_path, github, github_app, app_private_key, REVIEWER_ADMIN_TOKEN=TOKEN) as world:
        world.repo.commit({".reviewer.yaml": "approve: true\nrules:\n  - id: a\n    rule: b\n"})
        status, body, _ = await _get(world, "/api/config/octo-org/example")
    assert status == 200 and body["valid"] is True and body["effective"]["providers"] == {}
    assert body["sources"]["approve"] == "repository" and body["sources"]["feedback"] == "default"


async def test_a_known_installation_spares_the_lookup_on_github(tmp_path, github, github_app, app_private_key):
    async with _app(tmp_path, github, github_app, app_private_key) as world:
        world.repo.commit({"README.md": "hi\n"})
        assert (await _get(world, "/api/config/octo-org/example"))[0] == 200
        assert github.count(INSTALLATION_ROUTE) == 1  # nothing recorded yet: GitHub is asked
        payload = github.payload("installation", "created", installation=world.installation)
        assert (await world.deliver("installation", payload, "d-installed"))[0] == 202
        await wait_for(lambda: _recorded(world, world.installation.id))
        await wait_for(lambda: _done(world, "d-installed"))  # its job indexes the repository meanwhile
        before = len(github.calls)
        status, body, _ = await _get(world, "/api/config/OCTO-ORG/Example")  # names are case-insensitive
        assert status == 200 and body["repository"] == "octo-org/example"
        assert sorted(c.route for c in github.calls[before:]) == [  # the token is cached too
            "GET /repos/{owner}/{repo}", "GET /repos/{owner}/{repo}/contents/{path}",
            "GET /repos/{owner}/{repo}/contents/{path}"]


async def _recorded(world: World, installation_id: int) -> bool:
    def read() -> bool:
        with sqlite3.connect(world.tmp / "reviewer.db") as db:
            return db.execute("SELECT 1 FROM installations WHERE id = ?", (installation_id,)).fetchone() is not None
    return await asyncio.to_thread(read)


async def _done(world: World, delivery_id: str) -> bool:
    def read() -> bool:
        with sqlite3.connect(world.tmp / "reviewer.db") as db:
            row = db.execute("SELECT state FROM deliveries WHERE delivery_id = ?", (delivery_id,)).fetchone()
            return row is not None and row[0] == "done"
    return await asyncio.to_thread(read)


async def test_not_installed_is_404_even_when_the_store_still_says_so(tmp_path, github, github_app, app_private_key):
    async with _app(tmp_path, github, github_app, app_private_key) as world:
        github.add_repo("octo-org/elsewhere").commit({"README.md": "hi\n"})
        status, body, _ = await _get(world, "/api/config/octo-org/elsewhere")
        assert status == 404 and "not installed on octo-org/elsewhere" in body["message"]
        assert (await _get(world, "/api/config/octo-org/absent"))[0] == 404
        # the store learns of the installation, then the repository is removed without an event
        payload = github.payload("installation", "created", installation=world.installation)
        await world.deliver("installation", payload)
        await wait_for(lambda: _recorded(world, world.installation.id))
        world.installation.repositories.clear()
        asked = github.count(INSTALLATION_ROUTE)
        assert (await _get(world, "/api/config/octo-org/example"))[0] == 404
        assert github.count(INSTALLATION_ROUTE) == asked + 1  # the stale record was checked with GitHub


async def test_a_token_is_required(tmp_path, github, github_app, app_private_key):
    async with _app(tmp_path, github, github_app, app_private_key) as world:
        for token in (None, "wrong", ""):
            status, body, _ = await _get(world, "/api/config/octo-org/example", token=token)
            assert (status, body) == (401, {"message": "Unauthorized"})
    assert github.calls == []  # a refused request costs GitHub nothing


async def test_without_a_configured_token_everyone_is_refused(tmp_path, github, github_app, app_private_key):
    async with running_app(tmp_path, github, github_app, app_private_key) as world:
        assert (await _get(world, "/api/config/octo-org/example", token="anything"))[0] == 401


async def test_without_github_credentials_the_answer_says_so(tmp_path):
    async with running_server(tmp_path, Recorder(), REVIEWER_ADMIN_TOKEN=TOKEN) as server:
        async with server.http.get(server.url + "/api/config/octo-org/example",
                                   headers={"Authorization": f"Bearer {TOKEN}"}) as response:
            assert response.status == 503
            assert "GITHUB_APP_ID" in (await response.json())["message"]


async def test_github_failing_is_a_readable_502(tmp_path, github, github_app, app_private_key):
    async with _app(tmp_path, github, github_app, app_private_key) as world:
        github.secondary_rate_limit("GET /repos/{owner}/{repo}", retry_after=3600)
        status, body, _ = await _get(world, "/api/config/octo-org/example")
        assert status == 502
        assert body["message"].startswith("GitHub answered 403 to GET /repos/{owner}/{repo}: ")
        assert "secondary rate limit" in body["message"]


async def test_a_name_github_cannot_have_is_400(tmp_path, github, github_app, app_private_key):
    async with _app(tmp_path, github, github_app, app_private_key) as world:
        for path in ("/api/config/-octo/example", "/api/config/octo-org/two%20words", "/api/config/o/" + "r" * 101):
            status, body, _ = await _get(world, path)
            assert status == 400 and "not a GitHub repository name" in body["message"], path
    assert github.calls == []
