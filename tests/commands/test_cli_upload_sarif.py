"""`reviewer upload-sarif` against a small server double on loopback that records what it is sent:
the recorded body, decoded by the server's own reader (bot/analyzers/upload.py), is the test. The
command runs as a process of its own, forked from an interpreter that has imported it
(tests/support/warm_command.py)."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from aiohttp import web

from bot.analyzers.model import Problem
from bot.analyzers.upload import Upload, decode_upload, error_body
from bot.commands.upload_sarif import BUSY_ATTEMPTS
from tests.support.analyzers_support import SHA, load, ruff_sarif
from tests.support.warm_command import warm_bot

ROOT = Path(__file__).resolve().parent.parent.parent
RUFF = shutil.which("ruff", path=str(Path(sys.executable).parent))
TOKEN = "rvw_test_token_0123456789abcdef"


class Double:
    """POST /v1/repos/{owner}/{repo}/code-scanning/sarifs, answering as told; every request kept."""

    def __init__(self) -> None:
        self.requests: list[dict] = []
        self.busy = 0  # answers 503 with Retry-After before the next ones
        self.answer: tuple[int, dict] = (202, {"id": "47177e22-5596-11eb-80a1-c1e54ef945c6",
                                               "url": "http://double/v1/repos/o/r/code-scanning/sarifs/47177e22"})
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)

    async def handle(self, request: web.Request) -> web.Response:
        self.requests.append({"path": request.path, "headers": dict(request.headers), "body": await request.json()})
        if self.busy:  # the server is reading as many uploads as it takes
            self.busy -= 1
            return web.json_response({"message": "busy; try again in 0 s"}, status=503, headers={"Retry-After": "0"})
        status, body = self.answer
        return web.json_response(body, status=status)

    def _serve(self) -> None:
        asyncio.set_event_loop(self.loop)
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/v1/repos/{owner}/{repo}/code-scanning/sarifs", self.handle)
        self.runner = web.AppRunner(app, access_log=None)
        self.loop.run_until_complete(self.runner.setup())
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        self.loop.run_until_complete(site.start())
        self.url = f"http://127.0.0.1:{self.runner.addresses[0][1]}"
        self.ready.set()
        self.loop.run_forever()

    def __enter__(self) -> Double:
        self.thread.start()
        self.ready.wait(10)
        return self

    def __exit__(self, *_: object) -> None:
        asyncio.run_coroutine_threadsafe(self.runner.cleanup(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


@pytest.fixture
def double():
    with Double() as server:
        yield server


def cli(cwd: Path, *args: str, token: str | None = TOKEN, config_home: Path | None = None,
        extra_env: dict | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("REVIEWER_", "GITHUB_"))}
    env["PYTHONPATH"] = str(ROOT)
    env["XDG_CONFIG_HOME"] = str(config_home or cwd / "no-config")
    if token:
        env["REVIEWER_TOKEN"] = token
    env.update(extra_env or {})
    return subprocess.run([*warm_bot("upload-sarif"), "upload-sarif", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


def received(double: Double) -> Upload:
    [request] = double.requests
    upload = decode_upload(request["body"])
    assert isinstance(upload, Upload), upload
    return upload


@pytest.mark.skipif(RUFF is None, reason="ruff is not installed beside this Python")
def test_ruffs_real_sarif_round_trips_through_the_upload(tmp_path, double):
    document = ruff_sarif(tmp_path, {"pkg/mod.py": "import os\n\n\ndef f(x):\n    return x == None\n"}, RUFF)
    (tmp_path / "ruff.sarif").write_text(json.dumps(document))
    done = cli(tmp_path, "ruff.sarif", "--repo", "octo/app", "--commit", SHA, "--ref", "refs/pull/9/head",
               "--server", double.url + "/")
    assert done.returncode == 0, done.stderr
    assert "id 47177e22-5596-11eb-80a1-c1e54ef945c6" in done.stdout and TOKEN not in done.stdout + done.stderr
    [request] = double.requests
    assert request["path"] == "/v1/repos/octo/app/code-scanning/sarifs"
    assert request["headers"]["Authorization"] == f"Bearer {TOKEN}"
    upload = received(double)
    assert (upload.commit_sha, upload.ref, upload.pull_number, upload.tools) == (SHA, "refs/pull/9/head", 9, ("ruff",))
    assert {(r.path, r.rule_id, r.start_line) for r in upload.results} >= {("pkg/mod.py", "F401", 1),
                                                                          ("pkg/mod.py", "E711", 5)}
    assert request["body"]["checkout_uri"] == tmp_path.resolve().as_uri()


def test_codeql_and_semgrep_samples_round_trip(tmp_path, double):
    (tmp_path / "codeql.sarif").write_text(json.dumps(load("codeql-python.sarif")))
    done = cli(tmp_path, "codeql.sarif", "--repo", "octo/app", "--commit", SHA, "--ref", "refs/heads/main",
               "--server", double.url, "--tool-name", "CodeQL")
    assert done.returncode == 0, done.stderr
    upload = received(double)
    assert upload.tool_name == "CodeQL" and [r.severity for r in upload.results] == ["important", "nit", "blocking"]


def test_rdjsonl_and_checkstyle_are_converted_before_the_upload(tmp_path, double):
    (tmp_path / "lint.jsonl").write_text(json.dumps(
        {"message": "unused", "location": {"path": str(tmp_path / "src/a.go"), "range": {"start": {"line": 3}}},
         "severity": "WARNING", "source": {"name": "golangci-lint"}, "code": {"value": "unused"}}) + "\n")
    (tmp_path / "checkstyle.xml").write_text('<checkstyle><file name="src/A.java"><error line="2" severity="error" '
                                             'message="bad" source="Rule"/></file></checkstyle>')
    for name, fmt in (("lint.jsonl", "rdjsonl"), ("checkstyle.xml", "checkstyle")):
        done = cli(tmp_path, name, "--format", fmt, "--repo", "o/r", "--commit", SHA, "--ref", "refs/heads/x",
                   "--server", double.url)
        assert done.returncode == 0, done.stderr
    first, second = (decode_upload(r["body"]) for r in double.requests)
    assert [(r.tool, r.rule_id, r.path, r.start_line) for r in first.results] == [("golangci-lint", "unused",
                                                                                  "src/a.go", 3)]
    assert [(r.tool, r.rule_id, r.level) for r in second.results] == [("checkstyle", "Rule", "error")]


def test_the_token_and_server_of_reviewer_login_are_used(tmp_path, double):
    config = tmp_path / "config"
    (config / "reviewer").mkdir(parents=True)
    (config / "reviewer" / "session.json").write_text(json.dumps({"server": double.url, "token": "session-token"}))
    (tmp_path / "r.sarif").write_text(json.dumps(load("semgrep.sarif")))
    done = cli(tmp_path, "r.sarif", "--repo", "o/r", "--commit", SHA, "--ref", "refs/heads/x", token=None,
               config_home=config)
    assert done.returncode == 0, done.stderr
    assert double.requests[0]["headers"]["Authorization"] == "Bearer session-token"
    other = cli(tmp_path, "r.sarif", "--repo", "o/r", "--commit", SHA, "--ref", "refs/heads/x", token=None,
                config_home=config, extra_env={"REVIEWER_SERVER": "http://127.0.0.1:1"})
    assert other.returncode == 2 and "no token for http://127.0.0.1:1" in other.stderr


def test_an_upload_the_server_would_refuse_is_refused_here_and_not_sent(tmp_path, double):
    document = load("semgrep.sarif")
    document["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] = "../../x.py"
    (tmp_path / "bad.sarif").write_text(json.dumps(document))
    done = cli(tmp_path, "bad.sarif", "--repo", "o/r", "--commit", SHA, "--ref", "refs/heads/x", "--server", double.url)
    assert done.returncode == 1 and double.requests == []
    assert "/sarif/runs/0/results/0/locations/0/physicalLocation/artifactLocation/uri: uri-outside-repository" in \
        done.stderr
    short = cli(tmp_path, "bad.sarif", "--repo", "o/r", "--commit", "abc", "--ref", "refs/heads/x",
                "--server", double.url)
    assert short.returncode == 1 and "/commit_sha: pattern" in short.stderr and double.requests == []


def test_the_servers_refusal_is_shown_with_its_problems(tmp_path, double):
    (tmp_path / "r.sarif").write_text(json.dumps(load("semgrep.sarif")))
    double.answer = (422, error_body([Problem("/commit_sha", "unknown-commit", "no repository knows this commit")]))
    done = cli(tmp_path, "r.sarif", "--repo", "o/r", "--commit", SHA, "--ref", "refs/heads/x", "--server", double.url)
    assert done.returncode == 1
    assert "answered 422: the SARIF upload is refused: no repository knows this commit" in done.stderr
    assert "/commit_sha: unknown-commit" in done.stderr
    double.answer = (401, {"error": {"message": "invalid token"}})
    denied = cli(tmp_path, "r.sarif", "--repo", "o/r", "--commit", SHA, "--ref", "refs/heads/x", "--server", double.url)
    assert denied.returncode == 1 and "answered 401: invalid token" in denied.stderr and TOKEN not in denied.stderr


def test_a_busy_server_is_asked_again_after_the_time_it_names(tmp_path, double):
    (tmp_path / "r.sarif").write_text(json.dumps(load("semgrep.sarif")))
    double.busy = 2
    done = cli(tmp_path, "r.sarif", "--repo", "o/r", "--commit", SHA, "--ref", "refs/heads/x", "--server", double.url)
    assert done.returncode == 0, done.stderr
    assert len(double.requests) == 3 and done.stderr.count("is busy (503): trying again in 0 s") == 2
    double.requests.clear()
    double.busy = 100  # it stays busy: given up after a bounded number of attempts, with its message
    done = cli(tmp_path, "r.sarif", "--repo", "o/r", "--commit", SHA, "--ref", "refs/heads/x", "--server", double.url)
    assert done.returncode == 1 and "answered 503: busy; try again in 0 s" in done.stderr
    assert len(double.requests) == BUSY_ATTEMPTS


@pytest.mark.parametrize("args, words", [
    (["missing.sarif", "--repo", "o/r"], "cannot read missing.sarif"),
    (["r.sarif", "--repo", "not-a-repo"], "is not OWNER/REPO"),
    (["r.sarif", "--repo", "o/r", "--server", "http://127.0.0.1:1"], "cannot reach"),
])
def test_usage_unreadable_files_and_unreachable_servers_exit_2(tmp_path, args, words):
    (tmp_path / "r.sarif").write_text(json.dumps(load("semgrep.sarif")))
    done = cli(tmp_path, *args, "--commit", SHA, "--ref", "refs/heads/x")
    assert done.returncode == 2 and words in done.stderr


def test_without_a_token_nothing_is_sent(tmp_path, double):
    (tmp_path / "r.sarif").write_text(json.dumps(load("semgrep.sarif")))
    done = cli(tmp_path, "r.sarif", "--repo", "o/r", "--commit", SHA, "--ref", "refs/heads/x", "--server", double.url,
               token=None)
    assert done.returncode == 2 and "set REVIEWER_TOKEN" in done.stderr and double.requests == []


def test_the_ref_comes_from_github_ref_else_the_branch(tmp_path, double):
    (tmp_path / "r.sarif").write_text(json.dumps(load("semgrep.sarif")))
    done = cli(tmp_path, "r.sarif", "--repo", "o/r", "--commit", SHA, "--server", double.url,
               extra_env={"GITHUB_REF": "refs/pull/3/merge"})
    assert done.returncode == 0, done.stderr
    subprocess.run(["git", "init", "-q", "-b", "feature/x", str(tmp_path)], check=True)
    done = cli(tmp_path, "r.sarif", "--repo", "o/r", "--commit", SHA, "--server", double.url)
    assert done.returncode == 0, done.stderr
    assert [r["body"]["ref"] for r in double.requests] == ["refs/pull/3/merge", "refs/heads/feature/x"]
