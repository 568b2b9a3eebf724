"""`REVIEWER_HOST` / `--host`: where `reviewer serve` and `reviewer worker` listen (bot/server/listen.py)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import aiohttp
import pytest

from bot.server.settings import SettingsError, load_settings
from tests.support.server_support import SECRET

pytestmark = pytest.mark.slow  # a `reviewer serve` process of its own: `make test-fast` leaves it out


ROOT = Path(__file__).resolve().parent.parent.parent


def _env(**values: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "REVIEWER_", "PORT"))}
    return {**env, "PYTHONPATH": str(ROOT), **values}


def test_the_default_is_every_ipv4_address_and_the_flag_wins_over_the_environment():
    assert load_settings({"GITHUB_WEBHOOK_SECRET": "s"}).host == "0.0.0.0"
    assert load_settings({"GITHUB_WEBHOOK_SECRET": "s", "REVIEWER_HOST": "::"}).host == "::"
    assert load_settings({"GITHUB_WEBHOOK_SECRET": "s", "REVIEWER_HOST": "[::1]"}).host == "::1"
    assert load_settings({"GITHUB_WEBHOOK_SECRET": "s", "REVIEWER_HOST": "reviewer.internal"}).host == "reviewer.internal"
    assert load_settings({"GITHUB_WEBHOOK_SECRET": "s", "REVIEWER_HOST": "::"}, host="127.0.0.1").host == "127.0.0.1"


@pytest.mark.parametrize("value", ["http://0.0.0.0", "0.0.0.0:8080", "a b", "1.2.3.999", "::g", "host/path", "-x"])
def test_a_value_that_is_no_address_names_the_setting_and_the_rule(value):
    with pytest.raises(SettingsError) as error:
        load_settings({"GITHUB_WEBHOOK_SECRET": "s", "REVIEWER_HOST": value})
    [problem] = error.value.problems
    assert problem.startswith(f"REVIEWER_HOST: {value!r} is not an IP address or a host name")
    with pytest.raises(SettingsError) as error:
        load_settings({"GITHUB_WEBHOOK_SECRET": "s"}, host=value)
    assert error.value.problems[0].startswith("--host: ")


def _serve(tmp_path: Path, app_private_key: str, *args: str, **env: str) -> tuple[subprocess.Popen, dict]:
    command = [sys.executable, "-m", "bot", "serve", *args]
    proc = subprocess.Popen(command, cwd=tmp_path, stderr=subprocess.PIPE, text=True, env=_env(
        GITHUB_WEBHOOK_SECRET=SECRET, GITHUB_APP_ID="1", GITHUB_PRIVATE_KEY=app_private_key, PORT="0",
        REVIEWER_ADMIN_TOKEN="quiet-token-0123456789abcdef-0123", REVIEWER_DATABASE_URL=f"sqlite:///{tmp_path / 'r.db'}", **env))
    lines = []
    for line in proc.stderr:
        lines.append(line)
        if line.startswith("{") and json.loads(line)["msg"] == "listening":
            return proc, json.loads(line)
    proc.wait()
    raise AssertionError("the server stopped before listening:\n" + "".join(lines))


async def _answers(url: str) -> bool:
    try:
        async with aiohttp.ClientSession() as http, http.get(url, timeout=aiohttp.ClientTimeout(total=10)) as response:
            return response.status == 200
    except aiohttp.ClientConnectionError:
        return False


def _stop(proc: subprocess.Popen) -> None:
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=60)
    assert proc.returncode == 0


async def test_serve_listens_on_ipv6_when_told_and_the_flag_wins(tmp_path, app_private_key):
    proc, listening = _serve(tmp_path, app_private_key, REVIEWER_HOST="::")
    try:
        port = listening["port"]
        assert listening["host"] == "::"
        assert await _answers(f"http://[::1]:{port}/healthz")
        assert not await _answers(f"http://127.0.0.1:{port}/healthz")  # asyncio's IPv6 sockets are IPv6-only
    finally:
        _stop(proc)
    proc, listening = _serve(tmp_path, app_private_key, "--host", "127.0.0.1", REVIEWER_HOST="::")
    try:
        port = listening["port"]
        assert await _answers(f"http://127.0.0.1:{port}/healthz")
        assert not await _answers(f"http://[::1]:{port}/healthz")
    finally:
        _stop(proc)


def test_an_address_not_of_this_machine_is_one_line_naming_the_setting(tmp_path, app_private_key):
    result = subprocess.run([sys.executable, "-m", "bot", "worker"], cwd=tmp_path, capture_output=True, text=True,
                            timeout=60, env=_env(GITHUB_WEBHOOK_SECRET=SECRET, GITHUB_APP_ID="1",
                                                 GITHUB_PRIVATE_KEY=app_private_key, REVIEWER_HOST="a b",
                                                 REVIEWER_DATABASE_URL="postgresql://u@127.0.0.1/x"))
    assert result.returncode == 2
    assert result.stderr.startswith("reviewer worker: error: REVIEWER_HOST: 'a b' is not an IP address")
    result = subprocess.run([sys.executable, "-m", "bot", "serve", "--host", "192.0.2.1"], cwd=tmp_path,
                            capture_output=True, text=True, timeout=60,
                            env=_env(GITHUB_WEBHOOK_SECRET=SECRET, GITHUB_APP_ID="1", GITHUB_PRIVATE_KEY=app_private_key,
                                     REVIEWER_ADMIN_TOKEN="quiet-token-0123456789abcdef-0123", PORT="0",
                                     REVIEWER_DATABASE_URL=f"sqlite:///{tmp_path / 'r.db'}"))
    assert result.returncode == 1 and "Traceback" not in result.stderr
    errors = [line for line in result.stderr.splitlines() if not line.startswith("{")]
    assert errors == ["reviewer serve: error: cannot listen on port 0 (PORT) of 192.0.2.1 (REVIEWER_HOST): "
                      "Cannot assign requested address"]

