"""`reviewer doctor`: a good configuration passes, and each broken item of a bad one is named on its
own line with exit 1 — a bad key, a missing database, a wrong password (a role with a password on
a PostgreSQL cluster of the test's own, which asks for passwords), a provider that is down, a secret
store that cannot be read — against real PostgreSQL, the model double and the GitHub double over
HTTP, the command run as a process, as an operator runs it (forked from an interpreter that has
imported it: tests/support/warm_command.py). No line ever shows a secret."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from bot.server.settings import MIN_ADMIN_TOKEN_CHARS
from tests.support.chat_double import ChatDouble
from tests.support.postgres_support import with_database, with_password_role
from tests.support.warm_command import warm_bot

ROOT = Path(__file__).resolve().parent.parent.parent
MODEL_KEY = "sk-doctor-model-key-0f3c9a"
ADMIN_TOKEN = "doctor-admin-token-5b1e77c2a9d04f18"
WEBHOOK_SECRET = "doctor-webhook-secret-77aa"
PASSWORD = "doctor-db-password-c4e1"


def _env(**values: str) -> dict[str, str]:
    kept = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "REVIEWER_", "PORT", "DOCTOR_"))}
    return {**kept, "PYTHONPATH": str(ROOT), **values}


async def doctor(*args: str, **env: str) -> tuple[int, dict[str, tuple[str, str]], str]:
    """The command as a process: (exit code, check name → (level, detail), the whole output)."""
    proc = await asyncio.create_subprocess_exec(*warm_bot("doctor"), "doctor", *args, env=_env(**env),
                                                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), 120)
    text = out.decode()
    checks = {}
    for line in text.splitlines():
        level, rest = line.split(" ", 1)
        name, detail = rest.split(": ", 1)
        assert level in ("ok", "warn", "fail"), line
        checks[name] = (level, detail)
    assert "Traceback" not in err.decode(), err.decode()
    return proc.returncode or 0, checks, text + err.decode()


@pytest.fixture
async def model():
    double = await ChatDouble(api_key=MODEL_KEY).start()
    double.answer("reviewer-model")
    yield double
    await double.close()


def _good(tmp_path: Path, app_private_key: str, model: ChatDouble, **extra: str) -> dict[str, str]:
    """A configuration `serve` would run with: every check ok."""
    key = tmp_path / "app.pem"
    key.write_text(app_private_key)
    store = tmp_path / "secrets"
    (store / "model").mkdir(parents=True)
    (store / "model" / "api-key").write_text(MODEL_KEY)
    admin = tmp_path / "admin.yaml"
    admin.write_text(f"providers:\n  local:\n    type: openai\n    baseUrl: {model.base_url}\n"
                     "    apiKey: secret://model/api-key\n    timeout: 5\n"
                     "defaults:\n  models: {review: local/reviewer-model}\n")
    return {"GITHUB_APP_ID": "4242", "GITHUB_PRIVATE_KEY_PATH": str(key), "GITHUB_WEBHOOK_SECRET": WEBHOOK_SECRET,
            "REVIEWER_DATABASE_URL": f"sqlite:///{tmp_path / 'data' / 'reviewer.db'}",
            "REVIEWER_ADMIN_CONFIG": str(admin), "REVIEWER_SECRETS_DIR": str(store),
            "REVIEWER_PUBLIC_URL": "https://reviewer.example.com", "REVIEWER_ADMIN_TOKEN": ADMIN_TOKEN, "PORT": "0",
            **extra}


def _no_secret_in(text: str, *secrets: str) -> None:
    for secret in (MODEL_KEY, ADMIN_TOKEN, WEBHOOK_SECRET, PASSWORD, *secrets):
        assert secret not in text
    assert "PRIVATE KEY" not in text


async def test_a_good_configuration_passes_every_check(tmp_path, app_private_key, model):
    code, checks, text = await doctor(**_good(tmp_path, app_private_key, model))
    assert code == 0, text
    assert {name: level for name, (level, _) in checks.items()} == {
        "settings": "ok", "github-app": "ok", "webhook-secret": "ok", "database": "ok", "admin-config": "ok",
        "provider local": "ok", "secret-store": "ok", "public-url": "ok", "admin-token": "ok", "listen": "ok"}
    assert checks["github-app"][1].startswith("app id 4242 (from the environment), an RSA private key of 2048 bits")
    assert "the file does not exist yet; serve creates it" in checks["database"][1]
    assert checks["provider local"][1] == f"{model.base_url}: 1 model(s) listed"
    assert checks["secret-store"][1].endswith("readable, 1 secret(s): model")
    assert model.listings == 1 and model.requests == []  # asked once, and no completion (no tokens spent)
    _no_secret_in(text, app_private_key)


async def test_the_same_from_a_config_file_and_on_postgresql(tmp_path, app_private_key, model, pg_url):
    values = _good(tmp_path, app_private_key, model, REVIEWER_DATABASE_URL=pg_url)
    config = tmp_path / "reviewer.env"
    config.write_text("".join(f"{key}={value}\n" for key, value in values.items()))
    code, checks, text = await doctor("--config", str(config))
    assert code == 0, text
    assert checks["settings"] == ("ok", f"read from the environment and {config}")
    assert checks["github-app"][1].startswith(f"app id 4242 (from {config})")
    assert checks["database"][1].endswith("answers, with no schema yet: serve creates it (version "
                                          f"{checks['database'][1].rsplit(' ', 1)[1]}")


async def test_a_break_glass_token_shorter_than_serve_takes_fails_its_check(tmp_path, app_private_key, model):
    short = "s" * (MIN_ADMIN_TOKEN_CHARS - 1)
    code, checks, text = await doctor(**{**_good(tmp_path, app_private_key, model), "REVIEWER_ADMIN_TOKEN": short})
    assert code == 1 and checks["settings"][0] == "ok"
    assert checks["admin-token"] == ("fail", f"REVIEWER_ADMIN_TOKEN: the break-glass token has "
                                             f"{MIN_ADMIN_TOKEN_CHARS - 1} characters; it must have at least "
                                             f"{MIN_ADMIN_TOKEN_CHARS} (make one with `openssl rand -hex 32`)")
    _no_secret_in(text, app_private_key, short)


async def test_each_broken_item_is_named_on_its_own_line(tmp_path, app_private_key, model, postgres_server):
    good = _good(tmp_path, app_private_key, model)
    not_rsa = ec.generate_private_key(ec.SECP256R1()).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()).decode()
    (tmp_path / "ec.pem").write_text(not_rsa)
    not_a_folder = tmp_path / "secrets.txt"
    not_a_folder.write_text("not a directory")
    missing = with_database(postgres_server, "reviewer_doctor_no_such_database")
    admin = tmp_path / "admin-env-key.yaml"  # its key from the environment: the store is the broken one here
    admin.write_text(Path(good["REVIEWER_ADMIN_CONFIG"]).read_text().replace("secret://model/api-key",
                                                                             "env://DOCTOR_MODEL_KEY"))
    base_url = model.base_url
    await model.close()  # the provider is down
    code, checks, text = await doctor(**{**good, "GITHUB_PRIVATE_KEY_PATH": str(tmp_path / "ec.pem"),
                                         "REVIEWER_DATABASE_URL": missing, "REVIEWER_SECRETS_DIR": str(not_a_folder),
                                         "REVIEWER_ADMIN_CONFIG": str(admin), "DOCTOR_MODEL_KEY": MODEL_KEY})
    assert code == 1
    failed = {name: detail for name, (level, detail) in checks.items() if level == "fail"}
    assert set(failed) == {"github-app", "database", "provider local", "secret-store"}, text
    assert "GITHUB_PRIVATE_KEY_PATH: the key is a EC key, not RSA" in failed["github-app"]
    assert "the database 'reviewer_doctor_no_such_database' does not exist on PostgreSQL at" in failed["database"]
    assert failed["provider local"] == f"no answer from {base_url}/models: Connection refused"
    assert f"REVIEWER_SECRETS_DIR {not_a_folder} cannot be read: Not a directory" == failed["secret-store"]
    assert checks["webhook-secret"][0] == checks["admin-config"][0] == "ok"  # the rest is still checked
    _no_secret_in(text, not_rsa)


async def test_a_provider_that_is_down_is_said_so(tmp_path, app_private_key, model):
    good = _good(tmp_path, app_private_key, model)
    base_url = model.base_url
    await model.close()
    code, checks, text = await doctor(**good)
    assert code == 1
    assert checks["provider local"] == ("fail", f"no answer from {base_url}/models: Connection refused"), text
    _no_secret_in(text)


async def test_a_refused_model_key_fails_and_is_never_shown(tmp_path, app_private_key, model):
    good = _good(tmp_path, app_private_key, model)
    (tmp_path / "secrets" / "model" / "api-key").write_text("sk-the-wrong-key-9d8e")
    code, checks, text = await doctor(**good)
    assert code == 1
    level, detail = checks["provider local"]
    assert level == "fail" and "answered 401: the provider refused the apiKey" in detail
    _no_secret_in(text, "sk-the-wrong-key-9d8e")


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a directory of mode 000: run as another user to see it")
async def test_a_secret_store_without_read_permission_fails(tmp_path, app_private_key, model):
    good = _good(tmp_path, app_private_key, model)
    os.chmod(tmp_path / "secrets", 0)
    try:
        code, checks, _ = await doctor(**good)
    finally:
        os.chmod(tmp_path / "secrets", 0o700)
    assert code == 1 and checks["secret-store"][0] == "fail" and "Permission denied" in checks["secret-store"][1]


async def test_a_wrong_password_and_an_unreachable_server_are_told_apart(tmp_path, app_private_key, model, pg_cluster):
    """A cluster of the test's own that asks TCP clients for a password (scram-sha-256), a role with
    one: the right password passes, a wrong one and a stopped server each say what they are."""
    url = with_password_role(pg_cluster, "doctor", PASSWORD)
    good = _good(tmp_path, app_private_key, model)
    code, checks, text = await doctor(**{**good, "REVIEWER_DATABASE_URL": url.format(PASSWORD)})
    assert code == 0 and checks["database"][0] == "ok", text
    assert checks["database"][1].startswith(f"postgresql://doctor:***@127.0.0.1:{pg_cluster.port}/doctor answers")
    code, checks, text = await doctor(**{**good, "REVIEWER_DATABASE_URL": url.format("not-the-password")})
    assert code == 1 and checks["database"][0] == "fail"
    assert (f"PostgreSQL at 127.0.0.1:{pg_cluster.port} refused the password of the role 'doctor'"
            in checks["database"][1]), text
    _no_secret_in(text, "not-the-password")
    pg_cluster.stop()
    code, checks, text = await doctor(**{**good, "REVIEWER_DATABASE_URL": url.format(PASSWORD)})
    assert code == 1 and checks["database"][0] == "fail"
    assert f"PostgreSQL at 127.0.0.1:{pg_cluster.port} cannot be reached: the connection was refused" \
        in checks["database"][1], text


async def test_github_is_asked_for_the_app_only_with_the_flag(tmp_path, app_private_key, model, github, github_app):
    good = _good(tmp_path, app_private_key, model, GITHUB_APP_ID=str(github_app.id), GITHUB_API_URL=github.url)
    code, checks, text = await doctor(**good)
    assert code == 0 and "github" not in checks and github.count() == 0
    code, checks, text = await doctor("--github", **good)
    assert code == 0, text
    assert checks["github"] == ("ok", f"app 'reviewer' (id {github_app.id}) of {github_app.owner.login}, "
                                      f"at {github.url}")
    other = rsa.generate_private_key(public_exponent=65537, key_size=2048).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()).decode()
    (tmp_path / "other.pem").write_text(other)
    code, checks, text = await doctor("--github", **{**good, "GITHUB_PRIVATE_KEY_PATH": str(tmp_path / "other.pem")})
    assert code == 1 and checks["github"][0] == "fail"
    assert "GitHub refused the app's token" in checks["github"][1]
    _no_secret_in(text, other)


async def test_a_schema_newer_than_this_release_fails(tmp_path, app_private_key, model):
    import sqlite3

    data = tmp_path / "data"
    data.mkdir()
    with sqlite3.connect(data / "reviewer.db") as conn:
        conn.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
        conn.execute("INSERT INTO schema_version VALUES (9999)")
    code, checks, _ = await doctor(**_good(tmp_path, app_private_key, model))
    assert code == 1 and checks["database"][0] == "fail"
    assert "has schema version 9999, newer than this release knows" in checks["database"][1]
