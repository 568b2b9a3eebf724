"""The GitHub App's credentials in the secret store: `REVIEWER_SECRETS_DIR/github-app/KEY`.

`reviewer setup` writes them (GitHub's manifest flow hands them over once); `reviewer serve` and
`reviewer worker` read them for each `GITHUB_*` setting the environment and `--config` leave unset.
The layout is a mounted Kubernetes Secret's (`kubectl create secret generic github-app
--from-file=…` gives the same files), so one store serves a machine, Compose and Kubernetes.

Files are written readable by their owner only (0600, in a 0700 directory), each replaced whole
(written aside, then renamed), so a reader never sees half a key. No sign-in connector may read
this secret, whatever it is called (bot/secrets/references.py SERVER_SECRET_NAMES).
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from bot.secrets.references import GITHUB_APP_SECRET, SecretRef, SecretStore

SECRET_NAME = GITHUB_APP_SECRET
# file → the setting it stands in for (client-id and client-secret stand in for none: they are
# kept for signing users in with GitHub, which the server does not do today)
SETTINGS = {"app-id": "GITHUB_APP_ID", "private-key": "GITHUB_PRIVATE_KEY", "webhook-secret": "GITHUB_WEBHOOK_SECRET"}
FILES = ("app-id", "private-key", "webhook-secret", "client-id", "client-secret")


@dataclass(frozen=True)
class AppCredentials:
    """What GitHub's manifest conversion returns and the store keeps."""

    app_id: int
    private_key: str = field(repr=False)
    webhook_secret: str = field(repr=False)
    client_id: str
    client_secret: str = field(repr=False)

    def files(self) -> dict[str, str]:
        return {"app-id": str(self.app_id), "private-key": self.private_key, "webhook-secret": self.webhook_secret,
                "client-id": self.client_id, "client-secret": self.client_secret}


def directory(secrets_dir: str | os.PathLike[str]) -> Path:
    return Path(secrets_dir) / SECRET_NAME


def settings_from_store(secrets_dir: str | None, given: set[str]) -> dict[str, tuple[str, str]]:
    """Setting → (value, file) for each GitHub App setting not in `given` that the store holds.

    The private key stands in for GITHUB_PRIVATE_KEY only when neither it nor
    GITHUB_PRIVATE_KEY_PATH is given; an absent or empty file stands in for nothing.
    """
    if not secrets_dir:
        return {}
    store = SecretStore(secrets_dir)
    found: dict[str, tuple[str, str]] = {}
    for key, setting in SETTINGS.items():
        if setting in given or (setting == "GITHUB_PRIVATE_KEY" and "GITHUB_PRIVATE_KEY_PATH" in given):
            continue
        value = store.lookup(SecretRef(SECRET_NAME, key))
        if value:
            found[setting] = (value.strip() if key != "private-key" else value, str(directory(secrets_dir) / key))
    return found


def existing(secrets_dir: str | os.PathLike[str]) -> list[str]:
    """The credential files already in the store (setup refuses to replace an app's credentials)."""
    where = directory(secrets_dir)
    return [name for name in FILES if (where / name).exists()]


def write(secrets_dir: str | os.PathLike[str], credentials: AppCredentials) -> Path:
    """Write every file, owner-only, each replaced whole; returns the directory."""
    root = Path(secrets_dir)
    root.mkdir(mode=0o700, parents=True, exist_ok=True)
    where = directory(root)
    where.mkdir(mode=0o700, exist_ok=True)
    os.chmod(where, 0o700)  # an existing directory too: it holds a private key
    for name, value in credentials.files().items():
        fd, temporary = tempfile.mkstemp(prefix=f".{name}.", dir=where)  # created 0600
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(value if value.endswith("\n") or name != "private-key" else value + "\n")
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temporary, where / name)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
    return where
