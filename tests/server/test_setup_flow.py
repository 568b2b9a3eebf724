"""`reviewer setup` end to end, as processes over real HTTP: the page posts the manifest to the GitHub
double's web form, GitHub sends the browser back, the code is exchanged once, the credentials are
written owner-only, and `reviewer serve` then runs on them alone — a webhook in, a check run out.
Hostile: no token, a wrong or replayed state, a code used twice, an existing store; and the GitHub
Enterprise Server path (the API under /api/v3, an organisation's form)."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import stat
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit

import aiohttp
import pytest

from tests.support.github_double import GitHubDouble

pytestmark = pytest.mark.slow  # a `reviewer serve` process of its own: `make test-fast` leaves it out


ROOT = Path(__file__).resolve().parent.parent.parent
PUBLIC = "https://reviewer.example.com"


def _env(**values: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "REVIEWER_", "PORT"))}
    return {**env, "PYTHONPATH": str(ROOT), **values}


class _Form(HTMLParser):
    """The page's form, as a browser reads it: its action and its hidden fields."""

    def __init__(self) -> None:
        super().__init__()
        self.action: str | None = None
        self.fields: dict[str, str] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag == "form":
            self.action = values.get("action")
        elif tag == "input" and values.get("name"):
            self.fields[values["name"] or ""] = values.get("value") or ""


@contextmanager
def setup_process(tmp_path: Path, *args: str, **env: str) -> Iterator[tuple[subprocess.Popen, str, list[str]]]:
    """`reviewer setup` running; yields the process, its local page's URL and its stdout so far."""
    proc = subprocess.Popen([sys.executable, "-m", "bot", "setup", *args], cwd=tmp_path, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=_env(PORT="0", REVIEWER_HOST="127.0.0.1", **env))
    lines: list[str] = []
    try:
        for line in proc.stdout:
            lines.append(line)
            if line.strip().startswith("http://127.0.0.1:"):
                break
        else:
            raise AssertionError("setup stopped before listening:\n" + "".join(lines) + proc.stderr.read())
        yield proc, lines[-1].strip(), lines
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)


async def _page(http: aiohttp.ClientSession, url: str) -> tuple[int, str]:
    async with http.get(url, allow_redirects=False) as response:
        return response.status, await response.text()


async def _register_on_github(http: aiohttp.ClientSession, page: str) -> str:
    """Post the page's form as the browser would; GitHub's answer is where it sends the browser."""
    form = _Form()
    form.feed(page)
    assert form.action is not None
    async with http.post(form.action, data=form.fields, allow_redirects=False) as response:
        assert response.status == 302, await response.text()
        return response.headers["Location"]


def _conversions(github: GitHubDouble) -> int:
    return github.count("POST /app-manifests/{code}/conversions")


async def test_setup_registers_the_app_and_serve_runs_on_what_it_wrote(tmp_path, github):
    store = tmp_path / "secrets"
    with setup_process(tmp_path, "--public-url", PUBLIC, "--github-url", github.origin,
                       REVIEWER_SECRETS_DIR=str(store), GITHUB_API_URL=github.url) as (proc, local, printed):
        assert printed[-2].strip().startswith(f"{PUBLIC}/setup?token=")
        async with aiohttp.ClientSession() as http:
            status, page = await _page(http, local)
            assert status == 200
            back = await _register_on_github(http, page)
            status, done = await _page(http, back)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    [posted] = github.manifest_flow.posted
    assert posted["path"] == "/settings/apps/new"
    manifest = posted["manifest"]
    port = urlsplit(local).port
    assert manifest["url"] == PUBLIC and manifest["hook_attributes"] == {"url": f"{PUBLIC}/webhook", "active": True}
    assert manifest["redirect_url"] == f"http://127.0.0.1:{port}/setup/callback"
    assert manifest["default_events"][:4] == ["pull_request", "check_run", "check_suite", "push"]
    assert back.startswith(manifest["redirect_url"] + "?")
    [registration] = github.manifest_flow.by_code.values()
    app = registration.app
    assert status == 200 and "is registered" in done
    assert "Next: install it on the repositories to review: https://github.com/apps/reviewer/installations/new" in out
    where = store / "github-app"
    assert stat.S_IMODE(where.stat().st_mode) == 0o700
    assert {p.name: stat.S_IMODE(p.stat().st_mode) for p in where.iterdir()} == {
        name: 0o600 for name in ("app-id", "private-key", "webhook-secret", "client-id", "client-secret")}
    assert (where / "app-id").read_text() == str(app.id)
    for secret in (registration.pem.splitlines()[1], app.webhook_secret, registration.client_secret):
        assert secret not in out + err + page + done

    # `reviewer serve` with the store and GitHub's address alone: a webhook in, a check run out
    repo = github.add_repo("octo-org/example")
    installation = github.install(app, repo)
    base = repo.commit({"README.md": "# Example\n"})
    repo.commit({"src/a.py": "print(1)\n"}, branch="feature", parent=base)
    pr = repo.open_pull(head="feature", title="Add a")
    serve = subprocess.Popen([sys.executable, "-m", "bot", "serve"], cwd=tmp_path, stderr=subprocess.PIPE, text=True,
                             env=_env(REVIEWER_SECRETS_DIR=str(store), GITHUB_API_URL=github.url, PORT="0",
                                      REVIEWER_ADMIN_TOKEN="quiet-token-0123456789abcdef-0123",
                                      REVIEWER_DATABASE_URL=f"sqlite:///{tmp_path / 'r.db'}"))
    try:
        for line in serve.stderr:
            if line.startswith("{") and json.loads(line)["msg"] == "listening":
                serve_port = json.loads(line)["port"]
                break
        payload = github.payload("pull_request", "opened", installation=installation, pull=pr)
        status, _ = await github.deliver(f"http://127.0.0.1:{serve_port}/webhook", "pull_request", payload,
                                         secret=app.webhook_secret)
        assert status == 202
        for _ in range(2000):  # bounded: until the check run completes
            if [r for r in repo.check_runs.values() if r.status == "completed"]:
                break
            await asyncio.sleep(0.01)
    finally:
        serve.send_signal(signal.SIGTERM)
        serve.communicate(timeout=60)
    [run] = repo.check_runs.values()
    assert (run.status, run.name, run.head_sha) == ("completed", "Reviewer", pr.head_sha)


@pytest.fixture
async def ghes() -> Iterator[GitHubDouble]:
    double = GitHubDouble(api_prefix="/api/v3")
    await double.start()
    try:
        yield double
    finally:
        await double.close()
    assert double.violations == []


async def test_hostile_callbacks_and_the_enterprise_server_path(tmp_path, ghes):
    store = tmp_path / "secrets"
    with setup_process(tmp_path, "--public-url", PUBLIC, "--github-url", ghes.origin, "--org", "acme",
                       REVIEWER_SECRETS_DIR=str(store)) as (proc, local, _):
        origin = local.split("/setup?")[0]
        async with aiohttp.ClientSession() as http:
            for no_token in (f"{origin}/setup", f"{origin}/setup?token=guess"):
                status, page = await _page(http, no_token)
                assert status == 403 and "one-time token" in page
            _, first = await _page(http, local)
            _, second = await _page(http, local)
            states = [parse_qs(urlsplit(_action(p)).query)["state"][0] for p in (first, second)]
            assert _action(first).startswith(f"{ghes.origin}/organizations/acme/settings/apps/new?state=")

            # no state, or one this setup never issued: GitHub is not asked
            for query in ({"code": "c0ffee"}, {"code": "c0ffee", "state": "forged"}):
                status, page = await _page(http, f"{origin}/setup/callback?{urlencode(query)}")
                assert status == 400 and "State does not match" in page
            assert _conversions(ghes) == 0
            # a code GitHub does not know: refused by GitHub, once; sent again, refused here
            status, page = await _page(http, f"{origin}/setup/callback?code=deadbeef&state={states[0]}")
            assert status == 502 and "GitHub answered 404" in page and _conversions(ghes) == 1
            status, page = await _page(http, f"{origin}/setup/callback?code=deadbeef&state={states[1]}")
            assert status == 400 and "Code already used" in page and _conversions(ghes) == 1
            # a state serves one callback
            status, page = await _page(http, f"{origin}/setup/callback?code=other&state={states[0]}")
            assert status == 400 and "State does not match" in page

            _, third = await _page(http, local)
            back = await _register_on_github(http, third)
            forged = re.sub(r"state=[^&]+", "state=forged", back)
            status, _ = await _page(http, forged)
            assert status == 400 and _conversions(ghes) == 1
            status, done = await _page(http, back)
            assert status == 200 and "is registered" in done
            assert _conversions(ghes) == 2
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    [registration] = [r for r in ghes.manifest_flow.by_code.values() if r.converted]
    assert registration.app.owner.login == "acme"
    assert f"{ghes.origin}/apps/reviewer/installations/new" in out
    assert f"GITHUB_API_URL={ghes.origin}/api/v3 reviewer serve" in out
    assert (store / "github-app" / "app-id").read_text() == str(registration.app.id)

    # the store now holds an app: a second setup refuses to replace it
    result = subprocess.run([sys.executable, "-m", "bot", "setup", "--public-url", PUBLIC], cwd=tmp_path,
                            capture_output=True, text=True, timeout=60, env=_env(REVIEWER_SECRETS_DIR=str(store)))
    assert result.returncode == 2
    assert "already holds a GitHub App's credentials (app-id, private-key" in result.stderr


def _action(page: str) -> str:
    form = _Form()
    form.feed(page)
    assert form.action is not None
    return form.action


def test_setup_names_each_setting_it_cannot_use(tmp_path):
    result = subprocess.run([sys.executable, "-m", "bot", "setup", "--github-url", "ghe.example.com", "--org=-x"],
                            cwd=tmp_path, capture_output=True, text=True, timeout=60, env=_env(PORT="http"))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.splitlines() == [
        "reviewer setup: error: --public-url is required (or REVIEWER_PUBLIC_URL): the address GitHub and users "
        "reach the server at, such as https://reviewer.example.com",
        "reviewer setup: error: --github-url: 'ghe.example.com' is not an http(s) address without a path, such as "
        "https://reviewer.example.com",
        "reviewer setup: error: --org: '-x' is not a GitHub organisation login (letters, digits and single hyphens, "
        "at most 39 characters)",
        "reviewer setup: error: REVIEWER_SECRETS_DIR is not set: the secret store the credentials are written to "
        "(the directory `reviewer serve` reads them from)",
        "reviewer setup: error: PORT: 'http' is not an integer from 0 to 65535",
    ]
