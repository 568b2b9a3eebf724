"""Server settings from the environment and an optional `--config` file, validated in one place.

The file format is `KEY=VALUE` lines (the environment's own keys; `#` comments, blank lines and a
leading `export ` allowed; a value may be double-quoted, with `\\n` for newlines, or single-quoted,
taken literally) — the shape of a Docker or systemd env file, so one file serves all three.
The environment wins over the file: the file holds the defaults of a deployment, the environment
the per-instance overrides, as with `docker run --env-file … -e KEY=…`. `--port` wins over both.

The GitHub App's id, private key and webhook secret, when neither the environment nor the file
gives them, are read from the secret store (`REVIEWER_SECRETS_DIR/github-app/…`, where `reviewer
setup` writes them; bot/github/credentials.py); `sources` names the file each came from.

Secrets are held in `Secret`, whose repr and str never show the value; `reveal()` is the only way
in, so a settings object can be logged or printed in a traceback safely.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives.asymmetric.rsa import RSAPrivateKey

from bot.connectors.values import NANOS_PER_SECOND, parse_duration
from bot.github import credentials
from bot.github.auth import private_key
from bot.github.client import DEFAULT_API_URL
from bot.github.manifest import GITHUB_COM, web_url
from bot.server.forwarded import Network, parse_trusted_proxies
from bot.server.jobs.queue_timings import KEYS as QUEUE_KEYS
from bot.server.jobs.queue_timings import QueueTimings, queue_timings
from bot.server.listen import DEFAULT_HOST, resolve_host
from bot.store import check_url, url_password
from bot.store.sqlite.database import DEFAULT_URL, sqlite_path

KEYS = (
    "GITHUB_APP_ID", "GITHUB_PRIVATE_KEY", "GITHUB_PRIVATE_KEY_PATH", "GITHUB_WEBHOOK_SECRET",
    "GITHUB_API_URL", "GITHUB_URL", "PORT", "REVIEWER_DATABASE_URL", "REVIEWER_ADMIN_CONFIG", "REVIEWER_ADMIN_TOKEN",
    "REVIEWER_SECRETS_DIR", "REVIEWER_WORKERS", "REVIEWER_ADMIN_RELOAD_SECONDS", "REVIEWER_RECONCILE_SECONDS",
    "REVIEWER_DELIVERY_RETENTION_DAYS", "REVIEWER_PUBLIC_URL", "REVIEWER_SESSION_TTL",
    "REVIEWER_DIRECTORY_URL", "REVIEWER_HOST", "REVIEWER_LOG_LEVEL", "REVIEWER_ACCESS_LOG", *QUEUE_KEYS,
    "REVIEWER_TRUSTED_PROXIES", "REVIEWER_UPLOAD_DECODES", "REVIEWER_UPLOAD_MEMORY_MIB",
    "REVIEWER_WEBHOOK_UNVERIFIED_MIB",
)
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")
_TRUE, _FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")
# GitHub lets a delivery be redelivered for 3 days (GitHub Enterprise Server: 7): a delivery kept
# at least that long is never done twice by a redelivery.
MIN_RETENTION_DAYS = 7
# The break-glass token opens everything: guessing one this long is out of reach, even unthrottled.
MIN_ADMIN_TOKEN_CHARS = 32
_KEY = re.compile(r"[A-Z_][A-Z0-9_]*")


class Secret:
    """A secret string that never renders itself."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "Secret('<redacted>')"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(self._value)


class SettingsError(Exception):
    """Every problem found, one per line, each naming the key."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


@dataclass(frozen=True)
class Settings:
    webhook_secret: Secret
    app_id: int | None = None
    private_key: Secret | None = None
    api_url: str = DEFAULT_API_URL
    github_url: str = GITHUB_COM  # GITHUB_URL: where people see GitHub (links), derived from api_url when unset
    port: int = 8080
    host: str = DEFAULT_HOST  # REVIEWER_HOST / --host: the address to listen on (bot/server/listen.py)
    database_url: str = DEFAULT_URL
    admin_config: str | None = None
    admin_token: Secret | None = None
    secrets_dir: str | None = None
    workers: int = 4
    admin_reload_seconds: float = 3.0  # also how often the secret store is looked at for changes
    reconcile_seconds: float = 300.0  # every connector is reconciled again at least this often
    retention_days: int = 30  # finished deliveries older than this are deleted
    public_url: str | None = None  # where users and identity providers reach the server
    session_ttl: int = 12 * 3600  # seconds a sign-in session lasts at most
    directory_url: str | None = None  # reach Graph / Google's directory here instead (a proxy, a test double)
    log_level: str = "INFO"  # REVIEWER_LOG_LEVEL: the least severe level logged, one of LOG_LEVELS
    access_log: bool = False  # REVIEWER_ACCESS_LOG: a JSON line per HTTP request (bot/server/access_log.py)
    trusted_proxies: tuple[Network, ...] = ()  # REVIEWER_TRUSTED_PROXIES: whose X-Forwarded-For is believed
    upload_decodes: int = 1  # REVIEWER_UPLOAD_DECODES: SARIF uploads decoded at once (bot/server/api/uploads.py)
    upload_memory_mib: int = 320  # REVIEWER_UPLOAD_MEMORY_MIB: the memory of each decode's child process
    webhook_unverified_mib: int = 64  # REVIEWER_WEBHOOK_UNVERIFIED_MIB: webhook bytes read before their signature is checked
    queue: QueueTimings = QueueTimings()  # REVIEWER_QUEUE_*: the job queue's pace on PostgreSQL
    sources: Mapping[str, str] = field(default_factory=dict, compare=False)  # key → "env" | file path

    @property
    def database_path(self) -> str:
        return sqlite_path(self.database_url)

    def secrets(self) -> list[str]:
        """Every secret value, for the log redactor."""
        found = [s.reveal() for s in (self.webhook_secret, self.private_key, self.admin_token) if s]
        return found + [p for p in (url_password(self.database_url),) if p]


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] == "'":
        return value[1:-1]
    if len(value) >= 2 and value[0] == value[-1] == '"':
        inner = value[1:-1]
        return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t"}.get(m.group(1), m.group(1)), inner)
    return value


def parse_env_file(text: str, path: str) -> tuple[dict[str, str], list[str]]:
    """`KEY=VALUE` lines → (values, problems as `path:line: message`)."""
    values: dict[str, str] = {}
    problems: list[str] = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("export "):
            line = line[len("export "):].lstrip()
        key, sep, value = line.partition("=")
        key = key.strip()
        if not sep or not _KEY.fullmatch(key):
            problems.append(f"{path}:{number}: expected KEY=VALUE")
        elif key not in KEYS:
            problems.append(f"{path}:{number}: unknown setting {key} (known: {', '.join(KEYS)})")
        else:
            values[key] = _unquote(value.strip())
    return values, problems


def _merged(environ: Mapping[str, str], config_file: str | None) -> tuple[dict[str, str], dict[str, str], list[str]]:
    values: dict[str, str] = {}
    sources: dict[str, str] = {}
    problems: list[str] = []
    if config_file:
        try:
            text = Path(config_file).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise SettingsError([f"--config {config_file}: cannot read the file ({exc.__class__.__name__})"])
        values, problems = parse_env_file(text, config_file)
        sources = {k: config_file for k in values}
    for key in KEYS:
        if environ.get(key, "") != "":
            values[key] = environ[key]
            sources[key] = "env"
    for key, (value, path) in credentials.settings_from_store(values.get("REVIEWER_SECRETS_DIR"), set(values)).items():
        values[key] = value  # what `reviewer setup` wrote, for each GITHUB_* setting left unset
        sources[key] = path
    return values, sources, problems


def _integer(values: dict[str, str], key: str, default: int, low: int, high: int, problems: list[str]) -> int:
    text = values.get(key)
    if text is None:
        return default
    try:
        number = int(text.strip())
    except ValueError:
        number = None
    if number is None or not low <= number <= high:
        problems.append(f"{key}: {text!r} is not an integer from {low} to {high}")
        return default
    return number


def _port(flag: int | None, values: dict[str, str], problems: list[str]) -> int:
    """`--port` wins over PORT; either must be a TCP port (0 picks a free one)."""
    if flag is None:
        return _integer(values, "PORT", Settings.port, 0, 65535, problems)
    if not 0 <= flag <= 65535:
        problems.append(f"--port: {flag} is not an integer from 0 to 65535")
        return Settings.port
    return flag


def private_key_problem(text: str) -> str | None:
    """Why `text` is not an unencrypted RSA private key in PEM (GitHub Apps sign their JWTs with
    RS256), or None. The message never quotes the text: it is a secret."""
    if "-----BEGIN" not in text or "PRIVATE KEY-----" not in text:
        return "is not a PEM private key: it needs a `-----BEGIN RSA PRIVATE KEY-----` block"
    try:
        key = private_key(text)  # parsed once a process, for the app's JWTs too
    except TypeError:
        return "is an encrypted private key: give the key GitHub issued, unencrypted"
    except (ValueError, UnsupportedAlgorithm):
        return "is not a valid PEM private key: its content does not decode"
    if not isinstance(key, RSAPrivateKey):
        return (f"is a {type(key).__name__.removeprefix('_').replace('PrivateKey', '')} key, not RSA: "
                "a GitHub App's private key is RSA (generate one on the app's settings page)")
    return None


def _github_app_problems(values: dict[str, str], private_key: str | None, require_app: bool) -> list[str]:
    """The app id and private key: a key given must be usable; both must be given to serve."""
    problems: list[str] = []
    key_name = "GITHUB_PRIVATE_KEY_PATH" if values.get("GITHUB_PRIVATE_KEY_PATH") else "GITHUB_PRIVATE_KEY"
    if private_key and not (values.get("GITHUB_PRIVATE_KEY") and values.get("GITHUB_PRIVATE_KEY_PATH")):
        problem = private_key_problem(private_key)
        if problem:
            problems.append(f"{key_name}: the key {problem}")
    if not require_app:
        return problems
    if "GITHUB_APP_ID" not in values:
        problems.append("GITHUB_APP_ID is not set: the server refuses to start without the GitHub App's id "
                        "(the app's settings page shows it); every job calls GitHub as the app")
    if not private_key and not values.get("GITHUB_PRIVATE_KEY_PATH"):
        problems.append("GITHUB_PRIVATE_KEY is not set (nor GITHUB_PRIVATE_KEY_PATH): the server refuses to start "
                        "without the GitHub App's private key (PEM); every job calls GitHub as the app")
    return problems


def load_settings(environ: Mapping[str, str] | None = None, config_file: str | None = None,
                  port: int | None = None, *, require_app: bool = False, host: str | None = None) -> Settings:
    """Read, check and return the settings; SettingsError lists every problem at once.

    `require_app` (what `reviewer serve` asks) also demands the GitHub App's id and private key:
    without them the server would take deliveries and then fail every job for good.
    """
    settings, problems = read_settings(environ, config_file, port, require_app=require_app, host=host)
    if problems:
        raise SettingsError(problems)
    return settings


def read_settings(environ: Mapping[str, str] | None = None, config_file: str | None = None,
                  port: int | None = None, *, require_app: bool = False,
                  host: str | None = None) -> tuple[Settings, list[str]]:
    """The settings, a bad value replaced by its default, and every problem found (each starting
    with the key it is about): `reviewer doctor` reports each problem and checks the rest.
    SettingsError only when the `--config` file cannot be read at all."""
    values, sources, problems = _merged(os.environ if environ is None else environ, config_file)
    secret = values.get("GITHUB_WEBHOOK_SECRET", "")
    if not secret:
        problems.append("GITHUB_WEBHOOK_SECRET is not set: the server refuses to start without the "
                        "webhook secret configured in the GitHub App (it verifies every delivery)")
    app_id = _integer(values, "GITHUB_APP_ID", 0, 1, 2**63 - 1, problems) if "GITHUB_APP_ID" in values else None
    private_key = values.get("GITHUB_PRIVATE_KEY")
    key_path = values.get("GITHUB_PRIVATE_KEY_PATH")
    if private_key and key_path:
        problems.append("GITHUB_PRIVATE_KEY and GITHUB_PRIVATE_KEY_PATH are both set: set one")
    elif key_path:
        try:
            private_key = Path(key_path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            problems.append(f"GITHUB_PRIVATE_KEY_PATH: cannot read {key_path} ({exc.__class__.__name__})")
    problems += _github_app_problems(values, private_key, require_app)
    api_url = values.get("GITHUB_API_URL", Settings.api_url).rstrip("/")
    if not re.match(r"https?://[^/\s]+", api_url):
        problems.append(f"GITHUB_API_URL: {api_url!r} is not an http(s) URL")
    github_url = values.get("GITHUB_URL", "").strip().rstrip("/") or web_url(api_url)
    if not re.fullmatch(r"https?://[^/\s?#@]+(/[^\s?#]*)?", github_url):
        problems.append(f"GITHUB_URL: {github_url!r} is not an http(s) URL without a query, such as "
                        "https://ghe.example.com")
    database_url = values.get("REVIEWER_DATABASE_URL", DEFAULT_URL)
    try:
        check_url(database_url)
    except ValueError as exc:
        problems.append(str(exc))
    reload_seconds = _seconds(values, "REVIEWER_ADMIN_RELOAD_SECONDS", Settings.admin_reload_seconds, 3600, problems)
    reconcile_seconds = _seconds(values, "REVIEWER_RECONCILE_SECONDS", Settings.reconcile_seconds, 86400, problems)
    public_url, session_ttl = _signin_settings(values, problems)
    admin_token = values.get("REVIEWER_ADMIN_TOKEN") or ""
    if admin_token and len(admin_token.strip()) < MIN_ADMIN_TOKEN_CHARS:
        problems.append(f"REVIEWER_ADMIN_TOKEN: the break-glass token has {len(admin_token.strip())} characters; it "
                        f"must have at least {MIN_ADMIN_TOKEN_CHARS} (make one with `openssl rand -hex 32`)")
    settings = Settings(
        webhook_secret=Secret(secret),
        app_id=app_id,
        private_key=Secret(private_key) if private_key else None,
        api_url=api_url,
        github_url=github_url,
        port=_port(port, values, problems),
        host=resolve_host(host, values, problems),
        database_url=database_url,
        admin_config=values.get("REVIEWER_ADMIN_CONFIG") or None,
        admin_token=Secret(values["REVIEWER_ADMIN_TOKEN"]) if values.get("REVIEWER_ADMIN_TOKEN") else None,
        secrets_dir=values.get("REVIEWER_SECRETS_DIR") or None,
        workers=_integer(values, "REVIEWER_WORKERS", Settings.workers, 1, 256, problems),
        admin_reload_seconds=reload_seconds,
        reconcile_seconds=reconcile_seconds,
        retention_days=_integer(values, "REVIEWER_DELIVERY_RETENTION_DAYS", Settings.retention_days,
                                MIN_RETENTION_DAYS, 36500, problems),
        public_url=public_url,
        session_ttl=session_ttl,
        directory_url=_directory_url(values, problems),
        log_level=_log_level(values, problems),
        access_log=_flag(values, "REVIEWER_ACCESS_LOG", problems),
        trusted_proxies=_trusted_proxies(values, problems),
        upload_decodes=_integer(values, "REVIEWER_UPLOAD_DECODES", Settings.upload_decodes, 1, 16, problems),
        upload_memory_mib=_integer(values, "REVIEWER_UPLOAD_MEMORY_MIB", Settings.upload_memory_mib, 64, 65536,
                                   problems),
        webhook_unverified_mib=_integer(values, "REVIEWER_WEBHOOK_UNVERIFIED_MIB", Settings.webhook_unverified_mib,
                                        26, 65536, problems),
        queue=queue_timings(values, problems),
        sources=sources,
    )
    return settings, [_named_source(problem, sources) for problem in problems]


def _trusted_proxies(values: dict[str, str], problems: list[str]) -> tuple[Network, ...]:
    try:
        return parse_trusted_proxies(values.get("REVIEWER_TRUSTED_PROXIES", ""))
    except ValueError as exc:
        problems.append(f"REVIEWER_TRUSTED_PROXIES: {exc}; give the proxies' CIDRs separated by commas, such as "
                        "10.0.0.0/8,192.0.2.7")
        return ()


def _log_level(values: dict[str, str], problems: list[str]) -> str:
    text = values.get("REVIEWER_LOG_LEVEL", Settings.log_level)
    if text.strip().upper() not in LOG_LEVELS:
        problems.append(f"REVIEWER_LOG_LEVEL: {text!r} is not a log level (one of {', '.join(LOG_LEVELS)})")
        return Settings.log_level
    return text.strip().upper()


def _flag(values: dict[str, str], key: str, problems: list[str]) -> bool:
    text = values.get(key, "0")
    if text.strip().lower() not in _TRUE + _FALSE:
        problems.append(f"{key}: {text!r} is neither on (1, true, yes, on) nor off (0, false, no, off)")
        return False
    return text.strip().lower() in _TRUE


def _seconds(values: dict[str, str], key: str, default: float, most: float, problems: list[str]) -> float:
    text = values.get(key, str(default))
    try:
        seconds = float(text)
        if not 0.05 <= seconds <= most:
            raise ValueError
    except ValueError:
        problems.append(f"{key}: {text!r} is not a number of seconds from 0.05 to {most:g}")
        return default
    return seconds


def _named_source(problem: str, sources: Mapping[str, str]) -> str:
    """A problem with a value read from the secret store names the file it came from."""
    key, sep, rest = problem.partition(":")
    source = Path(sources.get(key, ""))
    if sep and source.parent.name == credentials.SECRET_NAME and source.name in credentials.SETTINGS:
        return f"{key} (read from {source}):{rest}"
    return problem


def _directory_url(values: dict[str, str], problems: list[str]) -> str | None:
    """REVIEWER_DIRECTORY_URL: an http(s) origin that stands in for Microsoft Graph, its login host
    and Google's directory and token hosts during group lookups (a proxy, or a test double)."""
    url = (values.get("REVIEWER_DIRECTORY_URL") or "").rstrip("/") or None
    if url is not None and not re.fullmatch(r"https?://[^/\s?#@]+", url):
        problems.append(f"REVIEWER_DIRECTORY_URL: {url!r} is not an http(s) address without a path, "
                        "such as https://graph-proxy.example.com")
        return None
    return url


def _signin_settings(values: dict[str, str], problems: list[str]) -> tuple[str | None, int]:
    """REVIEWER_PUBLIC_URL (an http(s) origin, no path) and REVIEWER_SESSION_TTL (a Go duration)."""
    public_url = values.get("REVIEWER_PUBLIC_URL") or None
    if public_url is not None:
        public_url = public_url.rstrip("/")
        if not re.fullmatch(r"https?://[^/\s?#@]+", public_url):
            problems.append(f"REVIEWER_PUBLIC_URL: {public_url!r} is not an http(s) address without a path, "
                            "such as https://reviewer.example.com")
            public_url = None
    ttl_text = values.get("REVIEWER_SESSION_TTL", "12h")
    nanos = parse_duration(ttl_text.strip())
    if nanos is None or not NANOS_PER_SECOND * 60 <= nanos <= NANOS_PER_SECOND * 30 * 86400:
        problems.append(f"REVIEWER_SESSION_TTL: {ttl_text!r} is not a Go duration from 1m to 720h, such as 12h")
        return public_url, Settings.session_ttl
    return public_url, int(nanos // NANOS_PER_SECOND)
