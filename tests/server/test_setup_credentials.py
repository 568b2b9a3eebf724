"""The GitHub App's credentials in the secret store (bot/github/credentials.py): written owner-only
by `reviewer setup`, read by serve and worker for each GITHUB_* setting left unset, and never
readable by a sign-in connector."""

from __future__ import annotations

import stat

import pytest

from bot.connectors.validate import validate_connector_text
from bot.github import credentials
from bot.github.credentials import AppCredentials
from bot.server.settings import SettingsError, load_settings
from tests.support.connectors_support import as_yaml, oidc_doc


def _credentials(private_key: str) -> AppCredentials:
    return AppCredentials(app_id=4242, private_key=private_key, webhook_secret="whsec-from-setup",
                          client_id="Iv1.abc", client_secret="client-secret-from-setup")


def test_written_owner_only_and_read_when_the_environment_is_silent(tmp_path, app_private_key):
    store = tmp_path / "secrets"
    store.mkdir(mode=0o755)
    (store / "github-app").mkdir(mode=0o755)  # an existing directory is made owner-only too
    where = credentials.write(store, _credentials(app_private_key))
    assert stat.S_IMODE(where.stat().st_mode) == 0o700
    assert sorted(p.name for p in where.iterdir()) == sorted(credentials.FILES)  # nothing half-written left
    assert {stat.S_IMODE(p.stat().st_mode) for p in where.iterdir()} == {0o600}
    settings = load_settings({"REVIEWER_SECRETS_DIR": str(store)}, require_app=True)
    assert settings.app_id == 4242 and settings.webhook_secret.reveal() == "whsec-from-setup"
    assert settings.private_key is not None and settings.private_key.reveal().strip() == app_private_key.strip()
    assert settings.sources["GITHUB_APP_ID"] == str(where / "app-id")


def test_the_environment_wins_over_the_store_setting_by_setting(tmp_path, app_private_key):
    store = tmp_path / "secrets"
    credentials.write(store, _credentials(app_private_key))
    key_file = tmp_path / "other.pem"
    key_file.write_text(app_private_key)
    settings = load_settings({"REVIEWER_SECRETS_DIR": str(store), "GITHUB_APP_ID": "7",
                              "GITHUB_PRIVATE_KEY_PATH": str(key_file)}, require_app=True)
    assert settings.app_id == 7 and settings.sources["GITHUB_APP_ID"] == "env"
    assert "GITHUB_PRIVATE_KEY" not in settings.sources  # the path given: the store's key is not read
    assert settings.sources["GITHUB_WEBHOOK_SECRET"] == str(store / "github-app" / "webhook-secret")


def test_a_bad_value_in_the_store_names_its_file_and_never_the_value(tmp_path):
    store = tmp_path / "secrets"
    credentials.write(store, AppCredentials(app_id=1, private_key="not a key at all", webhook_secret="w",
                                            client_id="c", client_secret="s"))
    (store / "github-app" / "app-id").write_text("twelve\n")
    with pytest.raises(SettingsError) as error:
        load_settings({"REVIEWER_SECRETS_DIR": str(store)}, require_app=True)
    assert error.value.problems == [
        f"GITHUB_APP_ID (read from {store}/github-app/app-id): 'twelve' is not an integer from 1 to 9223372036854775807",
        f"GITHUB_PRIVATE_KEY (read from {store}/github-app/private-key): the key is not a PEM private key: "
        "it needs a `-----BEGIN RSA PRIVATE KEY-----` block",
    ]


def test_without_a_store_or_its_files_the_settings_are_still_required(tmp_path):
    with pytest.raises(SettingsError) as error:
        load_settings({"REVIEWER_SECRETS_DIR": str(tmp_path)}, require_app=True)
    assert [p.split(" ")[0] for p in error.value.problems] == ["GITHUB_WEBHOOK_SECRET", "GITHUB_APP_ID",
                                                               "GITHUB_PRIVATE_KEY"]


@pytest.mark.parametrize("name", ["github-app", "okta"])
def test_no_connector_reads_the_apps_credentials_whatever_its_name(tmp_path, app_private_key, name):
    """Hostile: a connector editor names a connector `github-app` so that its "own" secret is the
    app's private key, which a sign-in start would send to a token endpoint of their choosing."""
    store = tmp_path / "secrets"
    credentials.write(store, _credentials(app_private_key))
    doc = oidc_doc()
    doc["metadata"]["name"] = name
    doc["spec"]["redirect_url"] = ["https://reviewer.example.com/v1/webapi/oidc/callback"]
    doc["spec"]["client_secret"] = "secret://github-app/private-key"
    _, diags = validate_connector_text(as_yaml(doc), secrets_dir=str(store), check_secrets=True)
    [diag] = [d for d in diags if d.pointer == "/spec/client_secret"]
    assert diag.code == "secret-reference"
    assert "holds the server's own GitHub App credentials: no connector may read it" in diag.message
    assert app_private_key.splitlines()[1] not in " ".join(d.message for d in diags)
