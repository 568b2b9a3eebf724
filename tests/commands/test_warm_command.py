"""tests/support/warm_command.py, which the doctor and upload-sarif tests run their command through:
a warm run answers as `python -m bot` does (the same output, errors and exit status for the same
arguments, environment and working directory), a signal sent to it reaches the command, and a
run whose process is killed takes the command with it."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

from tests.support.warm_command import warm_bot

ROOT = Path(__file__).resolve().parent.parent.parent
SHA = "0123456789abcdef0123456789abcdef01234567"
BOUND = 60  # seconds any one step may take on a loaded machine


def _env(**values: str) -> dict[str, str]:
    kept = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "REVIEWER_"))}
    return {**kept, "PYTHONPATH": str(ROOT), **values}


def test_a_warm_run_answers_as_python_m_bot_does(tmp_path):
    (tmp_path / "config.yaml").write_text("database_url: sqlite:///reviewer.db\n")
    env = _env(GITHUB_APP_ID="17", GITHUB_WEBHOOK_SECRET="a-webhook-secret-of-the-test")
    said = {}
    for args in (["doctor", "--config", "config.yaml"], ["doctor", "--config", "missing.yaml"], ["doctor", "--nope"]):
        cold = subprocess.run([sys.executable, "-m", "bot", *args], cwd=tmp_path, env=env, capture_output=True,
                              text=True, timeout=BOUND)
        warm = subprocess.run([*warm_bot("doctor"), *args], cwd=tmp_path, env=env, capture_output=True,
                              text=True, timeout=BOUND)
        assert (warm.returncode, warm.stdout, warm.stderr) == (cold.returncode, cold.stdout, cold.stderr), args
        said[args[-1]] = (warm.returncode, warm.stdout + warm.stderr)
    assert said["config.yaml"][0] == 1 and "github-app" in said["config.yaml"][1]  # the environment's app id is read
    assert said["missing.yaml"][0] != 0 and "missing.yaml" in said["missing.yaml"][1]  # the caller's directory
    assert said["--nope"][0] == 2 and "unrecognized arguments: --nope" in said["--nope"][1]


def _hanging_upload(tmp_path: Path, listener: socket.socket) -> tuple[subprocess.Popen[bytes], socket.socket]:
    """An upload sent to a server that takes the connection and never answers: (the run, the connection)."""
    sarif = tmp_path / "r.sarif"
    sarif.write_text(json.dumps({"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "t"}}, "results": []}]}))
    server = f"http://127.0.0.1:{listener.getsockname()[1]}"
    run = subprocess.Popen([*warm_bot("upload-sarif"), "upload-sarif", str(sarif), "--server", server, "--repo", "o/r",
                            "--commit", SHA, "--ref", "refs/heads/main"], cwd=tmp_path,
                           env=_env(REVIEWER_TOKEN="a-token-of-the-test"), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    listener.settimeout(BOUND)
    conn, _ = listener.accept()
    conn.settimeout(BOUND)
    return run, conn


def _until_closed(conn: socket.socket) -> None:
    """Read what the command sent until its side of the connection closes (it has ended)."""
    while conn.recv(65536):
        pass


def test_a_signal_reaches_the_command_and_its_status_is_the_runs(tmp_path):
    with socket.create_server(("127.0.0.1", 0)) as listener:
        run, conn = _hanging_upload(tmp_path, listener)
        with conn:
            run.send_signal(signal.SIGTERM)
            _until_closed(conn)
        assert run.wait(BOUND) == -signal.SIGTERM


def test_a_run_killed_outright_takes_its_command_along(tmp_path):
    with socket.create_server(("127.0.0.1", 0)) as listener:
        run, conn = _hanging_upload(tmp_path, listener)
        with conn:
            run.kill()
            assert run.wait(BOUND) == -signal.SIGKILL
            _until_closed(conn)  # the server saw the client go and killed the command
