"""The checks of `reviewer doctor` (bot/commands/doctor.py), each of one thing `reviewer serve`
depends on, each returning one `Check`: `ok|warn|fail NAME: detail`.

A check reads the settings `serve` would read (bot/server/settings.py `read_settings`) and asks the
world only what `serve` itself would ask: the database (without creating or migrating anything),
the admin file, each declared model provider (bot/engine/reachability.py), the secret store, and,
when asked, GitHub. A detail never carries a secret: it names settings, files and places.
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import aiohttp
from cryptography.hazmat.primitives.asymmetric.rsa import RSAPrivateKey
from cryptography.hazmat.primitives.serialization import load_pem_private_key

from bot.config.admin import AdminConfig, load_admin_config
from bot.config.model import Provider
from bot.documents.diagnostics import format_text
from bot.engine.reachability import ask_provider
from bot.github import GitHubApp, GitHubError, RetryPolicy
from bot.server.listen import ListenError, bind
from bot.server.settings import MIN_ADMIN_TOKEN_CHARS, Settings
from bot.store import is_postgres, latest_schema_version, redact_url, schema_version_of
from bot.store.model import StoreError
from bot.store.sqlite.database import sqlite_path

MIN_ADMIN_TOKEN = MIN_ADMIN_TOKEN_CHARS  # the server refuses to start with a shorter one


@dataclass(frozen=True)
class Check:
    level: str  # "ok" | "warn" | "fail"
    name: str
    detail: str

    def line(self) -> str:
        return f"{self.level} {self.name}: {self.detail}"


def _from(settings: Settings, key: str) -> str:
    source = settings.sources.get(key)
    return "" if source is None else " (from the environment)" if source == "env" else f" (from {source})"


def github_app(settings: Settings, problems: Sequence[str]) -> Check:
    """The app's id and private key parse (the key an unencrypted RSA key in PEM)."""
    if problems:
        return Check("fail", "github-app", "; ".join(problems))
    assert settings.app_id is not None and settings.private_key is not None  # read_settings(require_app=True)
    key = load_pem_private_key(settings.private_key.reveal().encode(), password=None)
    bits = key.key_size if isinstance(key, RSAPrivateKey) else 0
    key_name = "GITHUB_PRIVATE_KEY_PATH" if "GITHUB_PRIVATE_KEY_PATH" in settings.sources else "GITHUB_PRIVATE_KEY"
    return Check("ok", "github-app", f"app id {settings.app_id}{_from(settings, 'GITHUB_APP_ID')}, an RSA private "
                                     f"key of {bits} bits{_from(settings, key_name)}")


def webhook_secret(settings: Settings, problems: Sequence[str]) -> Check:
    if problems:
        return Check("fail", "webhook-secret", "; ".join(problems))
    return Check("ok", "webhook-secret", f"set{_from(settings, 'GITHUB_WEBHOOK_SECRET')}")


async def database(settings: Settings, problems: Sequence[str]) -> Check:
    """The database answers, and its schema is one this release can use (none yet is fine: `serve`
    creates it; a SQLite file that does not exist yet is fine where `serve` may create it)."""
    if problems:
        return Check("fail", "database", "; ".join(problems))
    url = settings.database_url
    where, latest = redact_url(url), latest_schema_version(url)
    try:
        version = await schema_version_of(url)
    except StoreError as exc:
        return Check("fail", "database", f"{where}: {exc}")
    if version is None:
        if not is_postgres(url) and not os.path.exists(sqlite_path(url)):
            return _sqlite_to_create(where, sqlite_path(url), latest)
        return Check("ok", "database", f"{where} answers, with no schema yet: serve creates it (version {latest})")
    if version > latest:
        return Check("fail", "database", f"{where} has schema version {version}, newer than this release knows "
                                         f"({latest}): upgrade Reviewer, do not downgrade")
    if version < latest:
        return Check("ok", "database", f"{where} answers, schema version {version}: serve migrates it to {latest}")
    return Check("ok", "database", f"{where} answers, schema version {version} (this release's)")


def _sqlite_to_create(where: str, path: str, latest: int) -> Check:
    folder = Path(path).absolute().parent
    while not folder.exists():
        folder = folder.parent
    if not os.access(folder, os.W_OK | os.X_OK):
        return Check("fail", "database", f"{where}: the file does not exist, and serve cannot create it: "
                                         f"{folder} is not writable")
    return Check("ok", "database", f"{where}: the file does not exist yet; serve creates it (schema version {latest})")


def admin_config(settings: Settings) -> tuple[Check, AdminConfig | None]:
    """The admin file reads and is valid (the checks `reviewer validate` runs)."""
    path = settings.admin_config
    if path is None:
        return Check("warn", "admin-config", "REVIEWER_ADMIN_CONFIG is not set: no model provider is declared, "
                                             "so every review is plan-only (docs/configuration.md)"), None
    try:
        text = Path(path).read_bytes()
    except OSError as exc:
        return Check("fail", "admin-config", f"cannot read {path}: {exc.strerror or exc}"), None
    admin, problems = load_admin_config(text, path)
    if admin is None or problems:
        lines = format_text(path, problems)
        first = lines[0] if lines else f"{path} is invalid"
        return Check("fail", "admin-config", f"{len(problems)} error(s), the first: {first} "
                                             f"(`reviewer validate {path}` lists them all)"), None
    providers = len(all_providers(admin))
    return Check("ok", "admin-config", f"{path}: valid, {providers} model provider(s), "
                                       f"{len(admin.accounts)} account(s)"), admin


def all_providers(admin: AdminConfig) -> dict[str, Provider]:
    """Every provider the file declares, by the name a check shows: `NAME` at the instance level,
    `LOGIN:NAME` for an account's own."""
    found = dict(admin.providers)
    for login, account in admin.accounts.items():
        found.update({f"{login}:{name}": provider for name, provider in account.providers.items()})
    return found


async def providers(admin: AdminConfig, secrets_dir: str | None, environ: Mapping[str, str]) -> list[Check]:
    """Each declared provider, asked once whether it answers (bot/engine/reachability.py)."""
    checks = []
    async with aiohttp.ClientSession() as session:
        for name, provider in all_providers(admin).items():
            answer = await ask_provider(provider, session, secrets_dir=secrets_dir, environ=environ)
            checks.append(Check(answer.level, f"provider {name}", answer.detail))
    return checks


def secret_store(settings: Settings, admin: AdminConfig | None) -> Check:
    """REVIEWER_SECRETS_DIR is a directory this process can read (each secret a directory in it)."""
    folder = settings.secrets_dir
    if folder is None:
        if admin is not None and admin.secret_names:
            return Check("fail", "secret-store", "REVIEWER_SECRETS_DIR is not set, and the admin file references "
                                                 f"secrets ({', '.join(sorted(admin.secret_names))}): none resolves")
        return Check("ok", "secret-store", "REVIEWER_SECRETS_DIR is not set (nothing references a secret://)")
    try:
        names = sorted(entry.name for entry in os.scandir(folder) if entry.is_dir() and not entry.name.startswith("."))
        for name in names:
            os.listdir(os.path.join(folder, name))
    except OSError as exc:
        return Check("fail", "secret-store", f"REVIEWER_SECRETS_DIR {folder} cannot be read: "
                                             f"{exc.strerror or type(exc).__name__}"
                                             f"{'' if exc.filename in (None, folder) else f' ({exc.filename})'}")
    missing = sorted(admin.secret_names - set(names)) if admin is not None else []
    if missing:
        return Check("fail", "secret-store", f"{folder} holds no secret {', '.join(missing)}, which the admin file "
                                             "references (a directory of that name, one file a key)")
    return Check("ok", "secret-store", f"{folder}: readable, {len(names)} secret(s)"
                                       f"{': ' + ', '.join(names) if names else ''}")


def public_url(settings: Settings, problems: Sequence[str]) -> Check:
    if problems:
        return Check("fail", "public-url", "; ".join(problems))
    url = settings.public_url
    if url is None:
        return Check("warn", "public-url", "REVIEWER_PUBLIC_URL is not set: OIDC sign-in needs it for its callback, "
                                           "and cookies are not marked Secure")
    parts = urlsplit(url)
    if parts.scheme == "http" and not _loopback(parts.hostname or ""):
        return Check("warn", "public-url", f"{url} is http, not https: sign-in cookies are not marked Secure")
    return Check("ok", "public-url", url)


def _loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


def admin_token(settings: Settings, problems: list[str] | None = None) -> Check:
    """Set, and long enough that `serve` starts with it (MIN_ADMIN_TOKEN characters)."""
    if problems:  # too short: the server refuses to start (the problem says so, never the token)
        return Check("fail", "admin-token", problems[0])
    token = settings.admin_token
    if token is None:
        return Check("warn", "admin-token", "REVIEWER_ADMIN_TOKEN is not set: nobody can sign in to the console until "
                                            "a connector exists, and no connector can be made without it")
    return Check("ok", "admin-token", f"set{_from(settings, 'REVIEWER_ADMIN_TOKEN')}")


def listen(settings: Settings) -> Check:
    """The port is free (a server already running on it makes this a warning, not a failure)."""
    try:
        sockets = bind(settings.host, settings.port)
    except ListenError as exc:
        return Check("warn", "listen", f"{exc} (a server already running?)")
    for sock in sockets:
        sock.close()
    return Check("ok", "listen", f"{settings.host}:{settings.port} is free")


async def github(settings: Settings) -> Check:
    """`GET /app` with the app's JWT: GitHub knows the app, and the key is the app's."""
    if settings.app_id is None or settings.private_key is None:
        return Check("fail", "github", "not asked: the app's id or private key is missing")
    async with aiohttp.ClientSession() as session:
        app = GitHubApp(session, app_id=settings.app_id, private_key=settings.private_key.reveal(),
                        base_url=settings.api_url, policy=RetryPolicy(attempts=2, max_wait=5, timeout=10))
        try:
            info = await app.app_info()
        except GitHubError as exc:
            if exc.status in (401, 403):
                why = "GitHub refused the app's token: the private key is not this app's, or the app id is wrong"
            elif exc.status == 0:
                why = f"no answer from {settings.api_url} (GITHUB_API_URL)"
            else:
                why = f"GitHub answered {exc.status}: {exc.message}"
            return Check("fail", "github", why)
    owner = (info.get("owner") or {}).get("login", "?")
    return Check("ok", "github", f"app {info.get('slug')!r} (id {info.get('id')}) of {owner}, at {settings.api_url}")
