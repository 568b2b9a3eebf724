"""Every setting a command's `--help` names (the environment variables `reviewer serve`, `worker`,
`setup` and the clients read) is in one of docs/settings.md's tables, and every row of those tables
is named by some `--help`: an operator reading either finds the same settings."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from bot.commands.cli import build_parser
from bot.server.settings import KEYS

SETTINGS = Path(__file__).resolve().parent.parent.parent / "docs" / "settings.md"
# An environment variable as the help texts write them: PORT, or upper-case words joined by `_`.
SETTING = re.compile(r"\b(?:PORT|[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)\b")
TABLE_HEADER = re.compile(r"^\s*\| variable \| meaning \|\s*$")


def _helps(parser: argparse.ArgumentParser, path: str = "reviewer") -> dict[str, str]:
    """Each command's (and sub-command's) full help text, by its command line."""
    found = {path: parser.format_help()}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found.update(_helps(sub, f"{path} {name}"))
    return found


def _help_settings() -> dict[str, set[str]]:
    """Setting → the commands whose help names it."""
    named: dict[str, set[str]] = {}
    for command, text in _helps(build_parser()).items():
        for name in SETTING.findall(" ".join(text.split())):
            named.setdefault(name, set()).add(command)
    return named


def _documented_settings() -> set[str]:
    """The variables in the first column of docs/settings.md's `| variable | meaning |` tables."""
    names: set[str] = set()
    in_table = False
    for line in SETTINGS.read_text(encoding="utf-8").splitlines():
        if TABLE_HEADER.match(line):
            in_table = True
            continue
        if in_table and line.strip().startswith("|"):
            first = line.strip().strip("|").split("|")[0]
            names.update(re.findall(r"`([A-Z][A-Z0-9_]*)`", first))
        elif in_table and line.strip():
            in_table = False
    return names - {"---"}


def test_every_setting_help_names_is_documented_and_every_documented_one_is_in_a_help():
    in_help, documented = _help_settings(), _documented_settings()
    assert len(documented) >= len(KEYS), "docs/settings.md's tables were not found"
    missing = {name: sorted(commands) for name, commands in in_help.items() if name not in documented}
    assert not missing, f"named by --help but not in docs/settings.md's tables: {missing}"
    unnamed = sorted(documented - set(in_help))
    assert not unnamed, f"in docs/settings.md's tables but named by no --help: {unnamed}"


def test_every_server_setting_is_in_serve_and_worker_help():
    in_help = _help_settings()
    for key in KEYS:
        assert {"reviewer serve", "reviewer worker"} <= in_help.get(key, set()), key
