"""`reviewer setup --public-url URL [--github-url URL] [--org ORG]`: register the GitHub App.

Serves GitHub's App manifest flow on REVIEWER_HOST:PORT (bot/server/setup.py), writes the
credentials GitHub hands over into REVIEWER_SECRETS_DIR/github-app/ (bot/github/credentials.py),
prints the next step (install the app) and exits 0. Exit 2 for a setting or flag it cannot use,
or a store that already holds an app's credentials (it never replaces them); 1 when the port
cannot be listened on, or when stopped (SIGINT/SIGTERM) before an app was registered.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Mapping
from pathlib import Path

from bot.github import credentials
from bot.github.manifest import ManifestError, check_org, endpoints, origin
from bot.server.listen import ListenError, resolve_host
from bot.server.setup import SetupConfig, run_setup

COMMAND = "reviewer setup"


def _error(message: str) -> int:
    print(f"{COMMAND}: error: {message}", file=sys.stderr)
    return 2


def _port(flag: int | None, environ: Mapping[str, str], problems: list[str]) -> int:
    key, text = ("--port", str(flag)) if flag is not None else ("PORT", environ.get("PORT") or "8080")
    if not text.strip().isdigit() or not 0 <= int(text) <= 65535:
        problems.append(f"{key}: {text!r} is not an integer from 0 to 65535")
        return 8080
    return int(text)


def config_from(args: argparse.Namespace, environ: Mapping[str, str]) -> tuple[SetupConfig | None, list[str]]:
    """The setup's configuration from its flags and the environment, or every problem found."""
    problems: list[str] = []
    public_url = github = org = None
    try:
        public_url = origin(args.public_url or environ.get("REVIEWER_PUBLIC_URL") or "", "--public-url")
    except ManifestError as exc:
        problems.append(str(exc) if (args.public_url or environ.get("REVIEWER_PUBLIC_URL")) else
                        "--public-url is required (or REVIEWER_PUBLIC_URL): the address GitHub and users reach the "
                        "server at, such as https://reviewer.example.com")
    try:
        github = endpoints(args.github_url, environ.get("GITHUB_API_URL") or None)
    except ManifestError as exc:
        problems.append(str(exc))
    try:
        org = check_org(args.org)
    except ManifestError as exc:
        problems.append(str(exc))
    secrets_dir = environ.get("REVIEWER_SECRETS_DIR") or ""
    if not secrets_dir:
        problems.append("REVIEWER_SECRETS_DIR is not set: the secret store the credentials are written to "
                        "(the directory `reviewer serve` reads them from)")
    host = resolve_host(args.host, environ, problems)
    port = _port(args.port, environ, problems)
    if problems or public_url is None or github is None:
        return None, problems
    return SetupConfig(public_url, github, org, secrets_dir, host, port), []


def _store_problem(secrets_dir: str) -> str | None:
    """Why the credentials could not be written there, or None (checked before GitHub is asked:
    GitHub hands the credentials over once)."""
    already = credentials.existing(secrets_dir)
    if already:
        return (f"{credentials.directory(secrets_dir)} already holds a GitHub App's credentials ({', '.join(already)}): "
                "setup never replaces them; move that directory away to register another app")
    root = Path(secrets_dir)
    try:
        root.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as exc:
        return f"REVIEWER_SECRETS_DIR: cannot make {root}: {exc.strerror}"
    if not os.access(root, os.W_OK | os.X_OK):
        return f"REVIEWER_SECRETS_DIR: {root} is not writable by this user"
    return None


def run(args: argparse.Namespace) -> int:
    config, problems = config_from(args, os.environ)
    if config is None:
        for problem in problems:
            _error(problem)
        return 2
    refused = _store_problem(config.secrets_dir)
    if refused:
        return _error(refused)
    try:
        result = asyncio.run(run_setup(config, sys.stdout))
    except ListenError as exc:
        print(f"{COMMAND}: error: {exc}", file=sys.stderr)
        return 1
    if result is None:
        print(f"{COMMAND}: stopped before an app was registered; no credentials were written", file=sys.stderr)
        return 1
    where = credentials.directory(config.secrets_dir)
    print(f"\nGitHub App {result.name!r} (id {result.credentials.app_id}) is registered; its credentials are in {where}/.")
    print(f"Next: install it on the repositories to review: {result.install_url}")
    api = f"GITHUB_API_URL={config.github.api} " if config.github.enterprise else ""
    print(f"Then start the server with the same store: REVIEWER_SECRETS_DIR={config.secrets_dir} {api}reviewer serve")
    return 0
