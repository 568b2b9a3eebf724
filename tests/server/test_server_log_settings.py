"""`REVIEWER_LOG_LEVEL` and `REVIEWER_ACCESS_LOG` on a real `reviewer serve` process: a bad value
stops it naming the setting; WARNING leaves the information lines out while the access log, when
on, still writes one JSON line per request, without the query, a cookie or a token."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import aiohttp
import pytest

from bot.server.settings import SettingsError, load_settings
from tests.support.app_support import installed
from tests.support.process_support import a_bug_found, app_env, start
from tests.support.review_support import API_KEY
from tests.support.server_support import SECRET

ROOT = Path(__file__).resolve().parent.parent.parent


def _env(**values: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "REVIEWER_", "PORT"))}
    return {**env, "PYTHONPATH": str(ROOT), **values}


def test_the_settings_read_a_level_and_a_switch_and_name_a_bad_value():
    settings = load_settings({"GITHUB_WEBHOOK_SECRET": SECRET, "REVIEWER_LOG_LEVEL": "warning",
                              "REVIEWER_ACCESS_LOG": "yes"})
    assert (settings.log_level, settings.access_log) == ("WARNING", True)
    default = load_settings({"GITHUB_WEBHOOK_SECRET": SECRET})
    assert (default.log_level, default.access_log) == ("INFO", False)
    with pytest.raises(SettingsError) as raised:
        load_settings({"GITHUB_WEBHOOK_SECRET": SECRET, "REVIEWER_LOG_LEVEL": "verbose", "REVIEWER_ACCESS_LOG": "2"})
    assert raised.value.problems == [
        "REVIEWER_LOG_LEVEL: 'verbose' is not a log level (one of DEBUG, INFO, WARNING, ERROR)",
        "REVIEWER_ACCESS_LOG: '2' is neither on (1, true, yes, on) nor off (0, false, no, off)"]


def test_serve_refuses_a_bad_log_level_naming_it(tmp_path, app_private_key):
    result = subprocess.run([sys.executable, "-m", "bot", "serve"], cwd=tmp_path, capture_output=True, text=True,
                            env=_env(GITHUB_WEBHOOK_SECRET=SECRET, GITHUB_APP_ID="1", GITHUB_PRIVATE_KEY=app_private_key,
                                     REVIEWER_LOG_LEVEL="TRACE"), timeout=60)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.splitlines()[-1] == ("reviewer serve: error: REVIEWER_LOG_LEVEL: 'TRACE' is not a log level "
                                              "(one of DEBUG, INFO, WARNING, ERROR)")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def test_warning_hides_information_and_the_access_log_tells_each_request(tmp_path, app_private_key):
    port = _free_port()
    token = "admin-token-for-the-access-log-7c1d"
    env = _env(GITHUB_WEBHOOK_SECRET=SECRET, GITHUB_APP_ID="1", GITHUB_PRIVATE_KEY=app_private_key,
               REVIEWER_ADMIN_TOKEN=token, REVIEWER_LOG_LEVEL="WARNING", REVIEWER_ACCESS_LOG="1",
               REVIEWER_HOST="127.0.0.1", PORT=str(port), REVIEWER_DATABASE_URL=f"sqlite:///{tmp_path / 'r.db'}")
    proc = subprocess.Popen([sys.executable, "-m", "bot", "serve"], env=env, cwd=tmp_path, stderr=subprocess.PIPE,
                            text=True)
    base = f"http://127.0.0.1:{port}"
    try:
        async with aiohttp.ClientSession() as http:
            for _ in range(3000):  # until it listens (bounded: the process may be slow to start)
                try:
                    async with http.get(base + "/livez") as response:
                        if response.status == 200:
                            break
                except aiohttp.ClientConnectionError:
                    await asyncio.sleep(0.02)
            async with http.get(base + "/v1/audit?actor=ann&state=query-secret-4411",
                                headers={"Authorization": f"Bearer {token}", "User-Agent": "audit-test/1.0"}) as response:
                assert response.status == 400  # `state` is not one of its filters
            async with http.get(base + "/console/", headers={"Cookie": "reviewer_session=cookie-secret-9d2e"},
                                allow_redirects=False) as response:
                assert response.status == 303
            async with http.get(base + "/no/such/page") as response:
                assert response.status == 404
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0
    records = [json.loads(line) for line in err.splitlines() if line.startswith("{")]
    access = [r for r in records if r["logger"] == "reviewer.access"]
    others = [r for r in records if r["logger"] != "reviewer.access"]
    assert not [r for r in others if r["level"] in ("info", "debug")], others  # WARNING: no "listening", no "started"
    requests = {(r["method"], r["path"], r["status"]) for r in access}
    assert {("GET", "/v1/audit", 400), ("GET", "/console/", 303), ("GET", "/no/such/page", 404)} <= requests
    line = next(r for r in access if r["path"] == "/v1/audit")
    assert (line["ip"], line["agent"], line["level"]) == ("127.0.0.1", "audit-test/1.0", "info")
    assert isinstance(line["duration_ms"], float)
    for secret in (token, "query-secret-4411", "cookie-secret-9d2e", "actor=ann"):
        assert secret not in err


async def test_debug_shows_each_step_of_a_delivery_and_its_job_and_never_a_secret_or_the_prompt(
        tmp_path, github, github_app, app_private_key, chat):
    """REVIEWER_LOG_LEVEL=DEBUG on a real `reviewer serve` that reviews a pull request: the delivery
    stored, queued, its job started, routed to its step, each GitHub and model call (method, path,
    status), the job done — and none of the secrets, the installation token or what the model was
    sent."""
    world = installed(tmp_path, github, github_app)
    pr, extra = a_bug_found(world, chat)
    environment = app_env(world, app_private_key, f"sqlite:///{tmp_path / 'r.db'}", REVIEWER_LOG_LEVEL="DEBUG",
                          REVIEWER_ADMIN_TOKEN="debug-admin-token-2b7f0e9c-0123456789", **extra)
    proc, port, _ = start(["-m", "bot", "serve"], environment, tmp_path)
    world.url = f"http://127.0.0.1:{port}"
    try:
        assert (await world.opened(pr, delivery_id="debug-delivery-1"))[0] == 202
        run = await world.completed_run(pr)
    finally:
        proc.send_signal(signal.SIGTERM)
        rest = await asyncio.to_thread(proc.stderr.read)
        proc.wait(timeout=60)
    assert run.conclusion == "failure"  # the review found BUG
    lines = [json.loads(line) for line in rest.splitlines()]  # every line JSON
    mine = [line for line in lines if line.get("delivery") == "debug-delivery-1"]
    steps = [line["msg"] for line in mine]
    for step in ("delivery stored", "delivery queued", "job started", "step review", "job done"):
        assert step in steps, steps
    calls = [(line["call"], line["method"], line["path"], line["status"]) for line in mine if "call" in line]
    assert ("github", "POST", f"/repos/{world.repo.full_name}/check-runs", 201) in calls, calls
    assert ("model", "POST", "/v1/chat/completions", 200) in calls, calls
    assert ("github", "POST", f"/repos/{world.repo.full_name}/pulls/{pr.number}/reviews", 200) in calls, calls
    assert all(line["level"] == "debug" for line in mine if "call" in line)
    assert github.tokens  # the job used an installation token
    for secret in (world.app.webhook_secret, API_KEY, "debug-admin-token-2b7f0e9c-0123456789", *github.tokens):
        assert secret not in rest
    assert "PRIVATE KEY" not in rest
    assert "def ratio(a, b)" not in rest and "Division by zero" not in rest  # the diff sent, the model's answer
