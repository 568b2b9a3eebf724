"""The parsers of the server's processes (`reviewer serve`, `reviewer worker`), of `reviewer setup`,
which registers the GitHub App, and of `reviewer doctor`, which checks what they depend on."""

from __future__ import annotations

from bot.commands.parsers import command, host

SERVE_EPILOG = """settings come from the environment, or a --config file of KEY=VALUE lines (the environment
wins): GITHUB_APP_ID, GITHUB_PRIVATE_KEY or GITHUB_PRIVATE_KEY_PATH, GITHUB_WEBHOOK_SECRET (all
required), GITHUB_API_URL, GITHUB_URL (a GitHub Enterprise Server's web address), PORT, REVIEWER_HOST, REVIEWER_DATABASE_URL, REVIEWER_ADMIN_CONFIG, REVIEWER_ADMIN_TOKEN,
REVIEWER_SECRETS_DIR, REVIEWER_PUBLIC_URL, REVIEWER_SESSION_TTL, REVIEWER_DIRECTORY_URL, REVIEWER_WORKERS,
REVIEWER_ADMIN_RELOAD_SECONDS, REVIEWER_RECONCILE_SECONDS, REVIEWER_DELIVERY_RETENTION_DAYS,
REVIEWER_LOG_LEVEL (DEBUG, INFO, WARNING or ERROR), REVIEWER_ACCESS_LOG (1: a JSON line per request),
REVIEWER_TRUSTED_PROXIES (CIDRs whose X-Forwarded-For is believed), REVIEWER_UPLOAD_DECODES,
REVIEWER_UPLOAD_MEMORY_MIB, REVIEWER_WEBHOOK_UNVERIFIED_MIB;
the job queue on PostgreSQL: REVIEWER_QUEUE_HEARTBEAT_SECONDS, REVIEWER_QUEUE_STALLED_SECONDS,
REVIEWER_QUEUE_SWEEP_SECONDS, REVIEWER_QUEUE_GRACE_SECONDS;
traces: OTEL_EXPORTER_OTLP_ENDPOINT and the other standard OTEL_* variables (unset: off).
exit codes: 0 after SIGTERM/SIGINT, 2 unusable settings, 1 invalid admin config or port unavailable."""


def _settings_file(parser) -> None:
    parser.add_argument("--config", metavar="FILE",
                        help="a settings file of KEY=VALUE lines, the environment's keys (default: none; the "
                             "environment wins over it)")


def serve(sub) -> None:
    s = command(sub, "serve", "run the GitHub App server (webhook intake, jobs, resource and admin APIs)",
                epilog=SERVE_EPILOG)
    _settings_file(s)
    s.add_argument("--port", type=int, metavar="PORT", help="the port to listen on (default: PORT, else 8080; "
                                                            "0 picks a free one)")
    host(s)
    s.add_argument("--no-workers", action="store_true",
                   help="take deliveries and serve the APIs and sign-in only; `reviewer worker` processes run the "
                        "jobs (needs REVIEWER_DATABASE_URL=postgresql://...) (default: off, jobs run here too)")


def worker(sub) -> None:
    w = command(sub, "worker", "run jobs only (PostgreSQL), serving GET /healthz, /livez, /readyz and /metrics on PORT",
                epilog=SERVE_EPILOG)
    _settings_file(w)
    w.add_argument("--port", type=int, metavar="PORT", help="the port of the probes and /metrics (default: PORT, "
                                                            "else 8080; 0 picks a free one)")
    host(w)


SETUP_EPILOG = """settings from the environment: REVIEWER_SECRETS_DIR (required: the credentials are written to
its github-app/ directory), PORT, REVIEWER_HOST, REVIEWER_PUBLIC_URL (stands in for --public-url),
GITHUB_API_URL (overrides the API derived from --github-url).
exit codes: 0 once an app is registered, 2 unusable settings or a store that already holds an app's
credentials, 1 port unavailable or stopped before an app was registered."""


def setup(sub) -> None:
    s = command(sub, "setup", "register the GitHub App through GitHub's manifest flow, from a page this serves",
                epilog=SETUP_EPILOG)
    s.add_argument("--public-url", metavar="URL",
                   help="the address GitHub and users reach the server at; the webhook is URL/webhook "
                        "(default: REVIEWER_PUBLIC_URL; one of them is required)")
    s.add_argument("--github-url", metavar="URL",
                   help="GitHub's address: https://ghe.example.com for GitHub Enterprise Server, whose API is "
                        "URL/api/v3 (default: https://github.com)")
    s.add_argument("--org", metavar="ORG",
                   help="register the app for this organisation (default: your personal account)")
    s.add_argument("--port", type=int, metavar="PORT",
                   help="the port of the setup page (default: PORT, else 8080; 0 picks a free one)")
    host(s)


DOCTOR_EPILOG = """it reads the settings `reviewer serve` reads (the environment over --config) and prints one line a
check: `ok|warn|fail NAME: detail` (the GitHub App's id and key, the webhook secret, the database and
its schema, the admin file, each model provider it declares, the secret store, the public URL, the
admin token, the port; with --github, GitHub itself). No line shows a secret.
exit codes: 0 no check failed (warnings allowed), 1 a check failed."""


def doctor(sub) -> None:
    d = command(sub, "doctor", "check everything `reviewer serve` depends on, one line a check",
                epilog=DOCTOR_EPILOG)
    d.add_argument("--config", metavar="FILE",
                   help="a settings file of KEY=VALUE lines, as `reviewer serve --config` reads it (default: none; "
                        "the environment wins over it)")
    d.add_argument("--github", action="store_true",
                   help="also ask GitHub for the app with its key (GET /app at the API's address) (default: off, "
                        "nothing leaves this machine but the database's and providers' checks)")
