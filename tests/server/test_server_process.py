"""`reviewer serve` as a process: refusing to start, serving, and finishing work after a SIGKILL."""

from __future__ import annotations

import asyncio
import json
import signal
import socket
import subprocess
import sys

import aiohttp
import pytest

from tests.support.process_support import env, start, states
from tests.support.server_support import SECRET, Recorder, pr_payload, running_server, sign

pytestmark = pytest.mark.slow  # `reviewer serve` processes of their own: `make test-fast` leaves them out

# A server whose job handler never returns: what it accepted is stored but never finished.
STUCK_SERVER = """
import asyncio
from bot.server import logging as log
from bot.server.admin_reload import AdminConfigHolder
from bot.server.app import make_app
from bot.server.metrics import Metrics
from bot.server.process import serve
from bot.server.settings import load_settings

async def never_returns(job):
    await asyncio.Event().wait()

log.configure()
metrics = Metrics()
asyncio.run(serve(load_settings(), AdminConfigHolder(None, metrics), metrics, make_app, lambda context: never_returns))
"""


async def _post(port: int, event: str, payload: dict, delivery: str) -> int:
    body = json.dumps(payload).encode()
    headers = {"Content-Type": "application/json", "X-GitHub-Event": event, "X-GitHub-Delivery": delivery,
               "X-Hub-Signature-256": sign(body)}
    async with aiohttp.ClientSession() as http:
        async with http.post(f"http://127.0.0.1:{port}/webhook", data=body, headers=headers) as response:
            return response.status


async def test_work_accepted_before_a_sigkill_is_finished_after_a_restart(tmp_path):
    db = tmp_path / "reviewer.db"
    environment = env(GITHUB_WEBHOOK_SECRET=SECRET, PORT="0", REVIEWER_DATABASE_URL=f"sqlite:///{db}",
                      REVIEWER_WORKERS="1")
    proc, port, _ = start(["-c", STUCK_SERVER], environment, tmp_path)
    try:
        assert await _post(port, "pull_request", pr_payload(1, "a" * 40), "one") == 202
        assert await _post(port, "pull_request", pr_payload(2, "b" * 40), "two") == 202
        for _ in range(1000):  # bounded: until "one" has started and "two" waits for the one worker
            if states(db) == {"one": "running", "two": "queued"}:
                break
            await asyncio.sleep(0.01)
        assert states(db) == {"one": "running", "two": "queued"}
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        proc.stderr.close()

    recorder = Recorder()
    async with running_server(tmp_path, recorder) as server:  # same database file
        await server.wait_state("one", "done")
        await server.wait_state("two", "done")
    assert sorted(recorder.ids()) == ["one", "two"]
    assert {job.delivery_id: job.attempt for job in recorder.jobs} == {"one": 2, "two": 1}


def test_serve_refuses_to_start_without_a_webhook_secret(tmp_path):
    result = subprocess.run([sys.executable, "-m", "bot", "serve"], env=env(), cwd=tmp_path,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert "GITHUB_WEBHOOK_SECRET is not set" in result.stderr
    assert not (tmp_path / "reviewer.db").exists()


def test_serve_refuses_to_start_without_the_app_id_or_an_rsa_key(tmp_path, app_private_key):
    result = subprocess.run([sys.executable, "-m", "bot", "serve"], env=env(GITHUB_WEBHOOK_SECRET=SECRET), cwd=tmp_path,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "reviewer serve: error: GITHUB_APP_ID is not set" in result.stderr
    assert "reviewer serve: error: GITHUB_PRIVATE_KEY is not set" in result.stderr
    not_rsa = app_private_key.replace("MII", "AAA", 1)
    result = subprocess.run([sys.executable, "-m", "bot", "serve"], cwd=tmp_path, capture_output=True, text=True,
                            env=env(GITHUB_WEBHOOK_SECRET=SECRET, GITHUB_APP_ID="1", GITHUB_PRIVATE_KEY=not_rsa),
                            timeout=60)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.splitlines() == ["reviewer serve: error: GITHUB_PRIVATE_KEY: the key is not a valid PEM "
                                          "private key: its content does not decode"]
    assert not (tmp_path / "reviewer.db").exists()


def test_a_port_in_use_is_one_line_and_a_failure(tmp_path, app_private_key):
    with socket.socket() as taken:
        taken.bind(("0.0.0.0", 0))
        taken.listen()
        port = taken.getsockname()[1]
        environment = env(GITHUB_WEBHOOK_SECRET=SECRET, GITHUB_APP_ID="1", GITHUB_PRIVATE_KEY=app_private_key,
                   REVIEWER_ADMIN_TOKEN="t0ken-for-quiet-0123456789abcdef", PORT=str(port))
        result = subprocess.run([sys.executable, "-m", "bot", "serve"], cwd=tmp_path, capture_output=True, text=True,
                                env=environment, timeout=60)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    errors = [line for line in result.stderr.splitlines() if not line.startswith("{")]  # the rest: JSON log lines
    assert errors == [f"reviewer serve: error: cannot listen on port {port} (PORT): Address already in use"]
    logged = [json.loads(line)["msg"] for line in result.stderr.splitlines() if line.startswith("{")]
    assert "server started" not in logged and "server stopped" not in logged  # said before anything started
    assert not (tmp_path / "reviewer.db").exists()  # nor was the store opened


def test_serve_refuses_to_start_with_an_invalid_admin_config(tmp_path, app_private_key):
    admin = tmp_path / "admin.yaml"
    admin.write_text("defaults:\n  enabled: maybe\n")
    result = subprocess.run([sys.executable, "-m", "bot", "serve"], cwd=tmp_path, capture_output=True, text=True,
                            env=env(GITHUB_WEBHOOK_SECRET=SECRET, REVIEWER_ADMIN_CONFIG=str(admin),
                                     GITHUB_APP_ID="1", GITHUB_PRIVATE_KEY=app_private_key), timeout=60)
    assert result.returncode == 1
    assert f"the admin configuration {admin} is invalid" in result.stderr
    assert f"{admin}:2:12: type:" in result.stderr


async def test_serve_answers_logs_json_lines_and_never_a_secret(tmp_path, app_private_key):
    admin_token = "admin-token-5f0e8c1a-0123456789abcdef"
    installation_token = "ghs_" + "Q" * 36
    key_file = tmp_path / "app.pem"
    key_file.write_text(app_private_key)
    config = tmp_path / "reviewer.env"
    config.write_text(f"GITHUB_WEBHOOK_SECRET='{SECRET}'\nREVIEWER_ADMIN_TOKEN={admin_token}\n"
                      f"GITHUB_PRIVATE_KEY_PATH={key_file}\nGITHUB_APP_ID=12345\n"
                      f"REVIEWER_DATABASE_URL=sqlite:///{tmp_path / 'r.db'}\nPORT=0\n")
    proc, port, lines = start(["-m", "bot", "serve", "--config", str(config)], env(), tmp_path)
    try:
        async with aiohttp.ClientSession() as http:
            async with http.get(f"http://127.0.0.1:{port}/healthz") as response:
                assert response.status == 200
            # a forged delivery whose headers carry the secrets: refused, and none of it logged
            body = json.dumps({"token": installation_token}).encode()
            forged = {"Content-Type": "application/json", "X-GitHub-Event": "push",
                      "X-GitHub-Delivery": "forged", "X-Hub-Signature-256": sign(body, "guess"),
                      "Authorization": f"token {installation_token}"}
            async with http.post(f"http://127.0.0.1:{port}/webhook", data=body, headers=forged) as response:
                assert response.status == 401
        assert await _post(port, "push", {"ref": "refs/heads/main", "note": admin_token}, "pushed") == 202
        for _ in range(1000):
            if states(tmp_path / "r.db").get("pushed") == "ignored":
                break
            await asyncio.sleep(0.01)
    finally:
        proc.send_signal(signal.SIGTERM)
        _, rest = proc.communicate(timeout=30)
    assert proc.returncode == 0
    log = "".join(lines) + rest
    records = [json.loads(line) for line in log.splitlines()]  # every line is one JSON object
    assert any(r["msg"] == "webhook refused: missing or wrong X-Hub-Signature-256" for r in records)
    assert any(r["msg"].startswith("delivery ignored") and r.get("delivery") == "pushed" for r in records)
    assert not any("REVIEWER_ADMIN_TOKEN is not set" in r["msg"] for r in records)
    for secret in (SECRET, admin_token, installation_token, app_private_key.splitlines()[1]):
        assert secret not in log
