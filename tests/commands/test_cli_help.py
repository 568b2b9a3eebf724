"""`reviewer --help` and `--version` speak to users: every command and option explained, defaults said."""

from __future__ import annotations

import argparse
import subprocess
import sys
from importlib import metadata

import pytest

from bot.commands.cli import COMMANDS, build_parser, main
from bot.commands.parsers.offline import SCHEMA_NAMES
from bot.commands.schema import NAMES


def _help(capsys, *argv: str) -> str:
    with pytest.raises(SystemExit) as done:
        main([*argv, "--help"])
    assert done.value.code == 0
    return capsys.readouterr().out


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    action = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def test_the_top_help_lists_every_command_with_what_it_does(capsys):
    text = _help(capsys)
    assert "usage: reviewer [-h] [--version] COMMAND ..." in text
    for name in COMMANDS:
        line = next(line for line in text.splitlines() if line.strip().startswith(name + " "))
        assert len(line.split(None, 1)[1]) > 10, line
    assert "exit codes:" in text


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_option_has_help_and_says_its_default(capsys, command):
    parser = _subparsers()[command]
    text = _help(capsys, command)
    assert parser.description and parser.description in " ".join(text.split())
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        assert action.help, f"{command} {action.dest} has no help"
        flat = " ".join(text.split())
        assert " ".join(action.help.split()) in flat
        if action.option_strings and not action.required:
            assert "(default:" in action.help, f"{command} {action.option_strings[0]} does not say its default"


def test_serve_help_names_every_setting(capsys):
    from bot.server.settings import KEYS

    text = " ".join(_help(capsys, "serve").split())
    for key in KEYS:
        assert key in text


def test_schema_help_names_the_schemas_there_are():
    assert set(SCHEMA_NAMES) == set(NAMES)


def test_version_prints_the_installed_version():
    result = subprocess.run([sys.executable, "-m", "bot", "--version"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0
    assert result.stdout.strip() == f"reviewer {metadata.version('reviewer')}"
