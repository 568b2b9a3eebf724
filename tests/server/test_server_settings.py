"""Server settings (environment, `--config` file, precedence, secrets) and the database URL."""

from __future__ import annotations

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from bot.server.jobs.queue_timings import QueueTimings
from bot.server.settings import MIN_ADMIN_TOKEN_CHARS, Secret, SettingsError, load_settings, parse_env_file
from bot.store.sqlite.database import sqlite_path


def test_defaults_and_required_secret():
    settings = load_settings({"GITHUB_WEBHOOK_SECRET": "s3cret-value"})
    assert settings.webhook_secret.reveal() == "s3cret-value"
    assert (settings.port, settings.api_url, settings.database_url) == (8080, "https://api.github.com", "sqlite:///reviewer.db")
    assert settings.database_path == "reviewer.db"
    assert settings.admin_token is None and settings.admin_config is None and settings.secrets_dir is None
    assert settings.retention_days == 30
    assert settings.public_url is None and settings.session_ttl == 12 * 3600
    with pytest.raises(SettingsError) as error:
        load_settings({})
    assert error.value.problems == [
        "GITHUB_WEBHOOK_SECRET is not set: the server refuses to start without the webhook secret configured "
        "in the GitHub App (it verifies every delivery)"]


def test_secrets_never_render(app_private_key):
    token = "admin-t0ken-0123456789abcdef-0123456"
    settings = load_settings({"GITHUB_WEBHOOK_SECRET": "webhook-s3cret", "REVIEWER_ADMIN_TOKEN": token,
                              "GITHUB_PRIVATE_KEY": app_private_key})
    body = app_private_key.splitlines()[1]
    for text in (repr(settings), str(settings), f"{settings.admin_token}", repr(Secret("x1y2z3"))):
        assert "webhook-s3cret" not in text and token not in text and body not in text
        assert "x1y2z3" not in text
    assert "Secret('<redacted>')" in repr(settings)


def test_config_file_with_environment_winning(tmp_path, app_private_key):
    key = tmp_path / "key.pem"
    key.write_text(app_private_key)
    config = tmp_path / "reviewer.env"
    config.write_text(
        "# the deployment's defaults\n"
        "export GITHUB_WEBHOOK_SECRET=\"from file\\twith tab\"\n"
        "PORT=9000\n"
        f"GITHUB_PRIVATE_KEY_PATH='{key}'\n"
        "GITHUB_APP_ID=42\n"
        "\n"
        "REVIEWER_DATABASE_URL=sqlite:////var/lib/reviewer/reviewer.db\n")
    settings = load_settings({"PORT": "9100"}, str(config))
    assert settings.webhook_secret.reveal() == "from file\twith tab"
    assert settings.port == 9100  # the environment wins over the file
    assert settings.app_id == 42
    assert settings.private_key.reveal() == app_private_key
    assert settings.database_path == "/var/lib/reviewer/reviewer.db"
    assert settings.sources["PORT"] == "env" and settings.sources["GITHUB_APP_ID"] == str(config)
    assert load_settings({}, str(config), port=7000).port == 7000  # --port wins over both


def test_every_problem_is_reported_with_its_key(tmp_path):
    config = tmp_path / "bad.env"
    config.write_text("GITHUB_WEBHOK_SECRET=typo\nnot a setting\n")
    with pytest.raises(SettingsError) as error:
        load_settings({"PORT": "eighty", "GITHUB_APP_ID": "-3", "REVIEWER_DATABASE_URL": "mysql://db/reviewer",
                       "GITHUB_PRIVATE_KEY": "k", "GITHUB_PRIVATE_KEY_PATH": "/nowhere", "REVIEWER_WORKERS": "0",
                       "GITHUB_API_URL": "api.github.com", "REVIEWER_DELIVERY_RETENTION_DAYS": "2"}, str(config))
    problems = error.value.problems
    assert problems[0].startswith(f"{config}:1: unknown setting GITHUB_WEBHOK_SECRET (known: ")
    assert problems[1] == f"{config}:2: expected KEY=VALUE"
    assert "GITHUB_WEBHOOK_SECRET is not set" in problems[2]
    rest = problems[3:]
    assert "GITHUB_APP_ID: '-3' is not an integer from 1 to 9223372036854775807" in rest
    assert "GITHUB_PRIVATE_KEY and GITHUB_PRIVATE_KEY_PATH are both set: set one" in rest
    assert "GITHUB_API_URL: 'api.github.com' is not an http(s) URL" in rest
    assert ("REVIEWER_DATABASE_URL 'mysql://db/reviewer' is not supported: use sqlite:///relative/path.db "
            "or sqlite:////absolute/path.db, or postgresql://user:password@host:5432/database") in rest
    assert "PORT: 'eighty' is not an integer from 0 to 65535" in rest
    assert "REVIEWER_WORKERS: '0' is not an integer from 1 to 256" in rest
    # shorter than GitHub's redelivery window would let a redelivery be done twice
    assert "REVIEWER_DELIVERY_RETENTION_DAYS: '2' is not an integer from 7 to 36500" in rest


def test_unreadable_files_are_named(tmp_path):
    with pytest.raises(SettingsError) as error:
        load_settings({}, str(tmp_path / "missing.env"))
    assert error.value.problems == [f"--config {tmp_path / 'missing.env'}: cannot read the file (FileNotFoundError)"]
    with pytest.raises(SettingsError) as error:
        load_settings({"GITHUB_WEBHOOK_SECRET": "x" * 8, "GITHUB_PRIVATE_KEY_PATH": str(tmp_path / "no.pem")})
    assert error.value.problems == [
        f"GITHUB_PRIVATE_KEY_PATH: cannot read {tmp_path / 'no.pem'} (FileNotFoundError)"]


def test_env_file_parsing():
    values, problems = parse_env_file("A=1\nPORT = 81 \nPORT='8 2'\n=3\n", "f.env")
    assert values == {"PORT": "8 2"}
    assert problems[0].startswith("f.env:1: unknown setting A ")
    assert problems[1] == "f.env:4: expected KEY=VALUE"


@pytest.mark.parametrize("url, path", [
    ("sqlite:///reviewer.db", "reviewer.db"),
    ("sqlite:///data/reviewer.db", "data/reviewer.db"),
    ("sqlite:////abs/path.db", "/abs/path.db"),
])
def test_database_urls(url, path):
    assert sqlite_path(url) == path


@pytest.mark.parametrize("url", ["sqlite://", "sqlite:///", "sqlite:///:memory:", "mysql://x/y", "reviewer.db"])
def test_database_urls_refused(url):
    with pytest.raises(ValueError, match="is not supported: use sqlite:///relative/path.db"):
        sqlite_path(url)


def _ec_key() -> str:
    key = ec.generate_private_key(ec.SECP256R1())
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption()).decode()


def _encrypted(pem: str) -> str:
    key = serialization.load_pem_private_key(pem.encode(), password=None)
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.BestAvailableEncryption(b"pass-phrase")).decode()


def test_serving_needs_the_app_id_and_private_key():
    with pytest.raises(SettingsError) as error:
        load_settings({"GITHUB_WEBHOOK_SECRET": "s3cret-value"}, require_app=True)
    assert [p.split(" ", 1)[0] for p in error.value.problems] == ["GITHUB_APP_ID", "GITHUB_PRIVATE_KEY"]
    assert "GITHUB_PRIVATE_KEY_PATH" in error.value.problems[1]
    load_settings({"GITHUB_WEBHOOK_SECRET": "s3cret-value"})  # the library's callers may go without


@pytest.mark.parametrize("make_key, words", [
    (lambda rsa_key: "not a key at all", "is not a PEM private key"),
    (lambda rsa_key: rsa_key.replace("MII", "XYZ", 1), "is not a valid PEM private key"),
    (lambda rsa_key: _ec_key(), "is a EC key, not RSA"),
    (_encrypted, "is an encrypted private key"),
])
@pytest.mark.parametrize("setting", ["GITHUB_PRIVATE_KEY", "GITHUB_PRIVATE_KEY_PATH"])
def test_a_private_key_that_is_not_rsa_pem_is_refused_by_name(tmp_path, app_private_key, make_key, words, setting):
    text = make_key(app_private_key)
    if setting == "GITHUB_PRIVATE_KEY_PATH":
        (tmp_path / "key.pem").write_text(text)
        value = str(tmp_path / "key.pem")
    else:
        value = text
    with pytest.raises(SettingsError) as error:
        load_settings({"GITHUB_WEBHOOK_SECRET": "s3cret-value", "GITHUB_APP_ID": "1", setting: value},
                      require_app=True)
    [problem] = error.value.problems
    assert problem.startswith(f"{setting}: the key ") and words in problem
    assert text.splitlines()[0] == "not a key at all" or text.splitlines()[1] not in problem


def test_port_flag_out_of_range_is_a_problem_not_a_crash():
    with pytest.raises(SettingsError) as error:
        load_settings({"GITHUB_WEBHOOK_SECRET": "s3cret-value"}, port=70000)
    assert error.value.problems == ["--port: 70000 is not an integer from 0 to 65535"]


def test_public_url_and_session_ttl():
    settings = load_settings({"GITHUB_WEBHOOK_SECRET": "s", "REVIEWER_PUBLIC_URL": "https://reviewer.example.com/",
                              "REVIEWER_SESSION_TTL": "1h30m"})
    assert settings.public_url == "https://reviewer.example.com" and settings.session_ttl == 5400
    with pytest.raises(SettingsError) as error:
        load_settings({"GITHUB_WEBHOOK_SECRET": "s", "REVIEWER_PUBLIC_URL": "reviewer.example.com/app",
                       "REVIEWER_SESSION_TTL": "forever"})
    assert error.value.problems == [
        "REVIEWER_PUBLIC_URL: 'reviewer.example.com/app' is not an http(s) address without a path, such as "
        "https://reviewer.example.com",
        "REVIEWER_SESSION_TTL: 'forever' is not a Go duration from 1m to 720h, such as 12h"]
    for ttl in ("10s", "-1h", "1000h"):
        with pytest.raises(SettingsError):
            load_settings({"GITHUB_WEBHOOK_SECRET": "s", "REVIEWER_SESSION_TTL": ttl})


def test_a_postgresql_url_is_accepted_and_its_password_is_a_secret():
    settings = load_settings({"GITHUB_WEBHOOK_SECRET": "s",
                              "REVIEWER_DATABASE_URL": "postgresql://reviewer:hunter2-pw@db.internal:5432/reviewer"})
    assert settings.database_url.startswith("postgresql://")
    assert "hunter2-pw" in settings.secrets()


def test_a_postgresql_url_without_a_host_is_refused_without_its_password():
    with pytest.raises(SettingsError) as error:
        load_settings({"GITHUB_WEBHOOK_SECRET": "s", "REVIEWER_DATABASE_URL": "postgresql://u:hunter2-pw@/reviewer"})
    assert error.value.problems == ["REVIEWER_DATABASE_URL 'postgresql://u:***@/reviewer' names no host: use "
                                    "postgresql://user:password@host:5432/database"]


def test_directory_url_stands_in_for_the_directory_apis():
    settings = load_settings({"GITHUB_WEBHOOK_SECRET": "s", "REVIEWER_DIRECTORY_URL": "http://127.0.0.1:9000/"})
    assert settings.directory_url == "http://127.0.0.1:9000"
    assert load_settings({"GITHUB_WEBHOOK_SECRET": "s"}).directory_url is None
    with pytest.raises(SettingsError) as error:
        load_settings({"GITHUB_WEBHOOK_SECRET": "s", "REVIEWER_DIRECTORY_URL": "graph-proxy/v1.0"})
    assert error.value.problems == [
        "REVIEWER_DIRECTORY_URL: 'graph-proxy/v1.0' is not an http(s) address without a path, such as "
        "https://graph-proxy.example.com"]


@pytest.mark.parametrize(("env", "web"), [
    ({}, "https://github.com"),
    ({"GITHUB_API_URL": "https://api.github.com/"}, "https://github.com"),
    ({"GITHUB_API_URL": "https://ghe.example.com/api/v3"}, "https://ghe.example.com"),  # GitHub Enterprise Server
    ({"GITHUB_API_URL": "https://ghe.example.com:8443/api/v3/"}, "https://ghe.example.com:8443"),
    ({"GITHUB_API_URL": "http://127.0.0.1:9000"}, "https://github.com"),  # a double or a proxy of github.com's API
    ({"GITHUB_API_URL": "https://ghe.example.com/api/v3", "GITHUB_URL": "https://git.example.com/"},
     "https://git.example.com"),  # said outright
])
def test_the_github_web_address_follows_the_api_unless_given(env, web):
    assert load_settings({"GITHUB_WEBHOOK_SECRET": "s", **env}).github_url == web


@pytest.mark.parametrize("value", ["ghe.example.com", "https://ghe.example.com?x=1", "ftp://ghe.example.com",
                                   "https://user@ghe.example.com"])
def test_a_github_url_that_is_no_web_address_names_the_setting(value):
    with pytest.raises(SettingsError) as error:
        load_settings({"GITHUB_WEBHOOK_SECRET": "s", "GITHUB_URL": value})
    assert error.value.problems == [f"GITHUB_URL: {value!r} is not an http(s) URL without a query, such as "
                                    "https://ghe.example.com"]


def test_a_break_glass_token_shorter_than_the_minimum_stops_the_start_naming_the_setting():
    with pytest.raises(SettingsError) as error:
        load_settings({"GITHUB_WEBHOOK_SECRET": "s", "REVIEWER_ADMIN_TOKEN": "x" * (MIN_ADMIN_TOKEN_CHARS - 1)})
    [problem] = error.value.problems
    assert problem.startswith(f"REVIEWER_ADMIN_TOKEN: the break-glass token has {MIN_ADMIN_TOKEN_CHARS - 1} "
                              f"characters; it must have at least {MIN_ADMIN_TOKEN_CHARS}")
    assert "x" * 8 not in problem  # the token itself is never repeated
    settings = load_settings({"GITHUB_WEBHOOK_SECRET": "s", "REVIEWER_ADMIN_TOKEN": "x" * MIN_ADMIN_TOKEN_CHARS})
    assert settings.admin_token is not None


def test_the_bounds_and_the_trusted_proxies_are_read_and_checked():
    settings = load_settings({"GITHUB_WEBHOOK_SECRET": "s", "REVIEWER_TRUSTED_PROXIES": "10.0.0.0/8, 192.0.2.7 fd00::/8",
                              "REVIEWER_UPLOAD_DECODES": "2", "REVIEWER_UPLOAD_MEMORY_MIB": "256",
                              "REVIEWER_WEBHOOK_UNVERIFIED_MIB": "100"})
    assert [str(n) for n in settings.trusted_proxies] == ["10.0.0.0/8", "192.0.2.7/32", "fd00::/8"]
    assert (settings.upload_decodes, settings.upload_memory_mib, settings.webhook_unverified_mib) == (2, 256, 100)
    with pytest.raises(SettingsError) as error:
        load_settings({"GITHUB_WEBHOOK_SECRET": "s", "REVIEWER_TRUSTED_PROXIES": "10.0.0.0/8,proxy.internal",
                       "REVIEWER_UPLOAD_DECODES": "0", "REVIEWER_WEBHOOK_UNVERIFIED_MIB": "1"})
    problems = error.value.problems
    assert any(p.startswith("REVIEWER_TRUSTED_PROXIES: 'proxy.internal' is not a CIDR") for p in problems)
    assert any(p.startswith("REVIEWER_UPLOAD_DECODES: '0' is not an integer from 1 to 16") for p in problems)
    assert any(p.startswith("REVIEWER_WEBHOOK_UNVERIFIED_MIB: '1' is not an integer from 26") for p in problems)


def test_the_job_queues_timings_default_to_productions_and_can_be_set():
    assert load_settings({"GITHUB_WEBHOOK_SECRET": "s"}).queue == QueueTimings(
        heartbeat=5.0, stalled_after=20.0, sweep_every=10.0, grace=45.0)
    settings = load_settings({"GITHUB_WEBHOOK_SECRET": "s", "REVIEWER_QUEUE_HEARTBEAT_SECONDS": "0.5",
                              "REVIEWER_QUEUE_STALLED_SECONDS": "3", "REVIEWER_QUEUE_SWEEP_SECONDS": "1",
                              "REVIEWER_QUEUE_GRACE_SECONDS": "0"})
    assert settings.queue == QueueTimings(heartbeat=0.5, stalled_after=3.0, sweep_every=1.0, grace=0.0)
    assert settings.queue.retry_beat == 0.5  # a failed beat is tried again no later than the next beat


@pytest.mark.parametrize(("values", "problem"), [
    ({"REVIEWER_QUEUE_HEARTBEAT_SECONDS": "0"}, "REVIEWER_QUEUE_HEARTBEAT_SECONDS: '0' is not a number of seconds "
                                                "from 0.1 to 600"),
    ({"REVIEWER_QUEUE_SWEEP_SECONDS": "nan"}, "REVIEWER_QUEUE_SWEEP_SECONDS: 'nan' is not a number of seconds "
                                              "from 0.1 to 3600"),
    ({"REVIEWER_QUEUE_STALLED_SECONDS": "soon"}, "REVIEWER_QUEUE_STALLED_SECONDS: 'soon' is not a number of "
                                                 "seconds from 0.5 to 3600"),
    # the process exits within STOP_WITHIN, which the manifests' grace periods are sized for
    ({"REVIEWER_QUEUE_GRACE_SECONDS": "46"}, "REVIEWER_QUEUE_GRACE_SECONDS: '46' is not a number of seconds "
                                             "from 0 to 45"),
    ({"REVIEWER_QUEUE_STALLED_SECONDS": "12"}, "REVIEWER_QUEUE_STALLED_SECONDS: 12 is less than 3 heartbeats "
                                               "(REVIEWER_QUEUE_HEARTBEAT_SECONDS 5): a living worker would be "
                                               "taken for a dead one"),
])
def test_a_job_queue_timing_out_of_bounds_names_the_setting_and_the_rule(values, problem):
    with pytest.raises(SettingsError) as error:
        load_settings({"GITHUB_WEBHOOK_SECRET": "s", **values})
    assert error.value.problems == [problem]
