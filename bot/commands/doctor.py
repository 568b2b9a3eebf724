"""`reviewer doctor [--config FILE] [--github]`: every check `reviewer serve` depends on, before it
runs, one line a check on stdout: `ok|warn|fail NAME: detail` (bot/commands/doctor_checks.py).

The settings are read as `serve` reads them (the environment over `--config`, the secret store for
the GitHub App's credentials), and each problem is reported under the check it belongs to, so that
one broken item does not hide the others. Exit 0 when no check failed (warnings allowed), 1
otherwise. No line carries a secret: details name settings and files, never values, and every
line is scrubbed of the configured secrets besides.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Sequence
from typing import IO

from bot.commands import doctor_checks as checks
from bot.commands.doctor_checks import Check
from bot.secrets.redaction import redact, register_secret
from bot.server.settings import SettingsError, read_settings

# Settings problems (each starts with its key) → the check they belong to; the rest are `settings`.
OWNERS = {
    "GITHUB_APP_ID": "github-app", "GITHUB_PRIVATE_KEY": "github-app", "GITHUB_PRIVATE_KEY_PATH": "github-app",
    "GITHUB_WEBHOOK_SECRET": "webhook-secret", "REVIEWER_DATABASE_URL": "database",
    "REVIEWER_PUBLIC_URL": "public-url", "REVIEWER_ADMIN_TOKEN": "admin-token",
}


def _owner(problem: str) -> str:
    key = problem.split(":", 1)[0].split(" ", 1)[0]
    return OWNERS.get(key, "settings")


def sorted_problems(problems: Sequence[str]) -> dict[str, list[str]]:
    """Each settings problem under the check it belongs to."""
    found: dict[str, list[str]] = {}
    for problem in problems:
        found.setdefault(_owner(problem), []).append(problem)
    return found


async def diagnose(config_file: str | None, ask_github: bool) -> list[Check]:
    try:
        settings, problems = read_settings(config_file=config_file, require_app=True)
    except SettingsError as exc:
        return [Check("fail", "settings", problem) for problem in exc.problems]
    register_secret(*settings.secrets())
    owned = sorted_problems(problems)
    found = [Check("fail", "settings", problem) for problem in owned.get("settings", [])]
    if not found:
        found.append(Check("ok", "settings", "read from " + _sources(config_file)))
    found += [checks.github_app(settings, owned.get("github-app", [])),
              checks.webhook_secret(settings, owned.get("webhook-secret", [])),
              await checks.database(settings, owned.get("database", []))]
    admin_check, admin = checks.admin_config(settings)
    found.append(admin_check)
    if admin is not None:
        found += await checks.providers(admin, settings.secrets_dir, os.environ)
    found += [checks.secret_store(settings, admin), checks.public_url(settings, owned.get("public-url", [])),
              checks.admin_token(settings, owned.get("admin-token", [])), checks.listen(settings)]
    if ask_github:
        found.append(await checks.github(settings) if "github-app" not in owned else
                     Check("fail", "github", "not asked: the GitHub App's id or key is unusable (github-app)"))
    return found


def _sources(config_file: str | None) -> str:
    return f"the environment and {config_file}" if config_file else "the environment"


def report(found: Sequence[Check], out: IO[str]) -> int:
    for check in found:
        print(redact(check.line()), file=out)
    return 1 if any(check.level == "fail" for check in found) else 0


def run(args: argparse.Namespace) -> int:
    return report(asyncio.run(diagnose(args.config, args.github)), sys.stdout)
