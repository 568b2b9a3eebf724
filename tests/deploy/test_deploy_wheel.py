"""The wheel the container image installs, installed into a clean virtual environment and run as
the image's entrypoint would: `reviewer --version`, `reviewer serve` against the GitHub double (a
webhook in, a check run out) and `reviewer serve --no-workers` + `reviewer worker` on PostgreSQL.

Containers cannot run on the development machines, so this is the image minus Debian's layer:
the wheel is built from the files the Dockerfile copies (the build context .dockerignore lets
through), with the command its first stage runs, and installed from it and PyPI (pip's cache)
alone. The processes run outside the repository with no PYTHONPATH: what they import is what the
wheel holds (templates, app.yml, schemas included). Marked `slow`.

The wheel is built anew each run; its dependencies are installed once per set of declared
requirements and kept (tests/support/wheel_venv.py says how): the venv each run makes holds the
wheel and sees nothing but what it declares.
"""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import pytest

from tests.support import wheel_venv
from tests.support.github_double import GitHubDouble

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def image_venv(tmp_path_factory) -> Path:
    """A new venv holding the wheel built from the image's build context (wheel_venv.image_venv)."""
    return wheel_venv.image_venv(tmp_path_factory.mktemp("image"))


class Process:
    """A `reviewer` command from the venv, its JSON log drained on a thread."""

    def __init__(self, venv: Path, args: list[str], cwd: Path, **env: str) -> None:
        self.proc = subprocess.Popen([str(venv / "bin" / "reviewer"), *args], cwd=cwd, text=True,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                     env=wheel_venv.clean_env(venv, PORT="0", REVIEWER_HOST="127.0.0.1", **env))
        self.lines: list[str] = []
        self.port: int | None = None
        self.listening = threading.Event()
        threading.Thread(target=self._drain, daemon=True).start()
        if not self.listening.wait(120) or self.port is None:
            self.stop()
            raise AssertionError(f"{args} stopped before listening:\n" + "".join(self.lines))

    def _drain(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append(line)
            if line.startswith("{") and json.loads(line).get("msg") == "listening":
                self.port = json.loads(line)["port"]
                self.listening.set()
        self.listening.set()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout=90)


@pytest.fixture
def processes() -> Iterator[list[Process]]:
    started: list[Process] = []
    yield started
    for process in started:
        process.stop()


def test_the_installed_command_reports_the_packages_version(image_venv, tmp_path):
    out = wheel_venv.run(image_venv / "bin" / "reviewer", "--version", cwd=tmp_path)
    version = wheel_venv.run(image_venv / "bin" / "python", "-c", "from importlib import metadata; print(metadata.version('reviewer'))",
                   cwd=tmp_path).strip()
    assert out.strip() == f"reviewer {version}" and version != "unknown (not installed)"
    # the installed package is the wheel's, not this checkout's
    where = wheel_venv.run(image_venv / "bin" / "python", "-c", "import bot; print(bot.__file__)", cwd=tmp_path)
    assert str(image_venv) in where


def _world(github: GitHubDouble, app_private_key: str):
    from cryptography.hazmat.primitives import serialization
    key = serialization.load_pem_private_key(app_private_key.encode(), password=None)
    public = key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    app = github.add_app(public.decode())
    repo = github.add_repo("octo-org/example")
    installation = github.install(app, repo)
    base = repo.commit({"README.md": "# Example\n", ".reviewer.yaml": "feedback: standard\n"})
    repo.commit({"src/a.py": "print(1)\n"}, branch="feature", parent=base)
    return app, repo, installation, repo.open_pull(head="feature", title="Add a")


def _app_env(app, app_private_key: str, github: GitHubDouble, database_url: str) -> dict[str, str]:
    return {"GITHUB_APP_ID": str(app.id), "GITHUB_PRIVATE_KEY": app_private_key, "GITHUB_WEBHOOK_SECRET": app.webhook_secret,
            "GITHUB_API_URL": github.url, "REVIEWER_DATABASE_URL": database_url, "REVIEWER_ADMIN_TOKEN": "quiet-token-0123456789abcdef-0123"}


async def _reviewed(github: GitHubDouble, web_url: str, app, repo, installation, pr) -> None:
    payload = github.payload("pull_request", "opened", installation=installation, pull=pr)
    status, _ = await github.deliver(f"{web_url}/webhook", "pull_request", payload, secret=app.webhook_secret)
    assert status == 202
    for _ in range(3000):  # bounded: until the check run completes
        if any(run.status == "completed" for run in repo.check_runs.values()):
            break
        await asyncio.sleep(0.01)
    [run] = repo.check_runs.values()
    assert (run.name, run.status, run.conclusion, run.head_sha) == ("Reviewer", "completed", "success", pr.head_sha)


async def _status(url: str) -> tuple[int, str]:
    async with aiohttp.ClientSession() as http, http.get(url) as response:
        return response.status, await response.text()


async def test_serve_from_the_wheel_takes_a_webhook_and_posts_a_check_run(image_venv, tmp_path, github, app_private_key,
                                                                         processes):
    app, repo, installation, pr = _world(github, app_private_key)
    serve = Process(image_venv, ["serve"], tmp_path,
                    **_app_env(app, app_private_key, github, f"sqlite:///{tmp_path / 'reviewer.db'}"))
    processes.append(serve)
    for path, words in (("/", "The GitHub App is configured"), ("/console/login", "Sign in"),
                        ("/console/static/console.css", "{"), ("/readyz", '"status": "ok"'), ("/livez", "ok")):
        status, text = await _status(serve.url + path)
        assert status == 200 and words in text, (path, status, text[:200])
    await _reviewed(github, serve.url, app, repo, installation, pr)
    assert serve.stop() == 0


async def test_web_and_worker_from_the_wheel_share_postgresql(image_venv, tmp_path, github, app_private_key, pg_url,
                                                              processes):
    app, repo, installation, pr = _world(github, app_private_key)
    env = _app_env(app, app_private_key, github, pg_url)
    web = Process(image_venv, ["serve", "--no-workers"], tmp_path, **env)
    processes.append(web)
    worker = Process(image_venv, ["worker"], tmp_path, **env)
    processes.append(worker)
    assert (await _status(worker.url + "/readyz"))[0] == 200
    assert (await _status(worker.url + "/"))[0] == 404  # a worker serves the probes and metrics only
    await _reviewed(github, web.url, app, repo, installation, pr)
    assert worker.stop() == 0 and web.stop() == 0
