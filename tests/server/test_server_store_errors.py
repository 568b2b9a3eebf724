"""`reviewer serve` on a PostgreSQL it cannot use says why, at once, as a JSON log line and the
command's one-line refusal: a missing database, a wrong password and an unreachable server are
told apart (a role with a password on a cluster of the test's own, which asks TCP clients for
one), and no line of the driver's own reaches stderr raw."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.support.postgres_support import with_password_role
from tests.support.process_support import env
from tests.support.server_support import SECRET

PASSWORD = "serve-db-password-81d2"


def _serve(tmp_path, private_key: str, url: str) -> tuple[int, list[dict], list[str]]:
    """A `reviewer serve` that should refuse to start: (exit code, its JSON lines, its other lines)."""
    result = subprocess.run([sys.executable, "-m", "bot", "serve"], cwd=tmp_path, capture_output=True, text=True,
                            timeout=120, env=env(GITHUB_WEBHOOK_SECRET=SECRET, GITHUB_APP_ID="1",
                                                 GITHUB_PRIVATE_KEY=private_key, PORT="0",
                                                 REVIEWER_ADMIN_TOKEN="quiet-token-0123456789abcdef-0123", REVIEWER_DATABASE_URL=url))
    lines = result.stderr.splitlines()
    logged = [json.loads(line) for line in lines if line.startswith("{")]
    return result.returncode, logged, [line for line in lines if not line.startswith("{")]


def _refusal(logged: list[dict]) -> dict:
    [line] = [entry for entry in logged if entry["level"] == "error"]
    assert "server started" not in [entry["msg"] for entry in logged]
    return line


def test_a_missing_database_a_wrong_password_and_a_stopped_server_are_told_apart(tmp_path, app_private_key,
                                                                                 pg_cluster):
    url = with_password_role(pg_cluster, "reviewer", PASSWORD)
    where = f"127.0.0.1:{pg_cluster.port}"

    code, logged, other = _serve(tmp_path, app_private_key, url.format(PASSWORD).rsplit("/", 1)[0] + "/nowhere")
    refusal = _refusal(logged)
    assert code == 1 and refusal["reason"] == "missing-database"
    assert f"the database 'nowhere' does not exist on PostgreSQL at {where}" in refusal["msg"]
    assert refusal["database"] == f"postgresql://reviewer:***@{where}/nowhere"
    assert other == [f"reviewer serve: error: the store postgresql://reviewer:***@{where}/nowhere: "
                     f"{refusal['msg'].split('not starting: ', 1)[1]}"]  # no raw driver line besides it

    code, logged, other = _serve(tmp_path, app_private_key, url.format("not-the-password"))
    refusal = _refusal(logged)
    assert code == 1 and refusal["reason"] == "wrong-password" and len(other) == 1
    assert f"PostgreSQL at {where} refused the password of the role 'reviewer'" in refusal["msg"]
    assert "not-the-password" not in json.dumps(logged) + "".join(other)

    pg_cluster.stop()
    code, logged, other = _serve(tmp_path, app_private_key, url.format(PASSWORD))
    refusal = _refusal(logged)
    assert code == 1 and refusal["reason"] == "unreachable" and len(other) == 1
    assert f"PostgreSQL at {where} cannot be reached: the connection was refused" in refusal["msg"]
    assert PASSWORD not in json.dumps(logged) + "".join(other)
