"""`reviewer`: the command line of README.md. Parsing only, its parsers grouped by concern in
bot/commands/parsers/; each command lives in its own module.

Exit codes are part of the interface: 0 success (or valid), 1 invalid, 2 usage or unreadable input,
141 when the reader of standard output went away (`reviewer plan ... | head -1`): the status a shell
reports for a writer ended by SIGPIPE, as `cat` or `git log` give, so that a pipeline under
`set -o pipefail` still sees that the output was cut, with no traceback.
"""

from __future__ import annotations

import argparse
import functools
import importlib
import os
import sys
from collections.abc import Sequence

from bot.commands.parsers import Formatter, Parser, evaluation, offline, remote, server

EXIT_BROKEN_PIPE = 128 + 13  # 128 + SIGPIPE

# command → "module:function"; imported lazily so `reviewer schema` does not load aiohttp.
COMMANDS = {
    "validate": "bot.commands.validate:run",
    "plan": "bot.commands.plan:run",
    "context": "bot.commands.context:run",
    "eval": "bot.commands.eval:run",
    "review": "bot.commands.review:run",
    "serve": "bot.server.launch:run_serve",
    "worker": "bot.server.launch:run_worker",
    "schema": "bot.commands.schema:run_schema",
    "crds": "bot.commands.schema:run_crds",
    "login": "bot.commands.login:run_login",
    "logout": "bot.commands.login:run_logout",
    "setup": "bot.commands.setup:run",
    "learnings": "bot.commands.learnings:run",
    "upload-sarif": "bot.commands.upload_sarif:run",
    "doctor": "bot.commands.doctor:run",
}


# `reviewer eval import BENCHMARK …`: parsed on its own (bot/commands/cli.py main), since `reviewer
# eval` takes a corpus where a subcommand would go.
EVAL_IMPORT = "bot.commands.eval_import:run"

DESCRIPTION = "Reviewer: reviews pull requests as a repository's .reviewer.yaml says, and manages SSO connectors."
EPILOG = """exit codes: 0 success (or valid), 1 invalid, 2 usage error or unreadable input,
141 when the reader of standard output went away.
Run `reviewer COMMAND --help` for a command's options."""


def version() -> str:
    """The installed distribution's version (pyproject.toml); running from a bare checkout, unknown."""
    from importlib import metadata  # 30 ms of imports that only --version and `review` need

    try:
        return metadata.version("reviewer")
    except metadata.PackageNotFoundError:
        return "unknown (not installed)"


class _Version(argparse.Action):
    """`--version`, as argparse's own prints it, but reading the version only when asked: every
    command's process starts without the metadata's imports."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS, help: str | None = None):
        super().__init__(option_strings, dest=dest, default=argparse.SUPPRESS, nargs=0, help=help)

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> None:
        print(f"reviewer {version()}")
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="reviewer", description=DESCRIPTION, epilog=EPILOG, formatter_class=Formatter)
    parser.add_argument("--version", action=_Version, help="print the version and exit")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser, metavar="COMMAND",
                                title="commands")
    offline.validate(sub)
    offline.plan(sub)
    offline.context(sub)
    evaluation.evaluation(sub)
    offline.review(sub)
    server.serve(sub)
    server.worker(sub)
    offline.schema(sub)
    offline.crds(sub)
    remote.login(sub)
    remote.logout(sub)
    server.setup(sub)
    server.doctor(sub)
    remote.learnings(sub)
    remote.upload_sarif(sub)
    return parser


@functools.cache
def _parser() -> argparse.ArgumentParser:
    """The parser, built once a process: building it (some hundred arguments, the version read
    from the installed metadata) costs more than a `validate` of a small file, which the fuzz
    layer runs in process by the thousand."""
    return build_parser()


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:2] == ["eval", "import"]:
        args = evaluation.build_eval_import_parser().parse_args(argv[2:])
        target = EVAL_IMPORT
    else:
        args = _parser().parse_args(argv)
        target = COMMANDS[args.command]
    module_name, func_name = target.split(":")
    func = getattr(importlib.import_module(module_name), func_name)
    try:
        code = int(func(args) or 0)
        sys.stdout.flush()  # a closed pipe shows up here when the output fit in the buffer
    except BrokenPipeError:
        # Python would report the error again when it flushes stdout at exit: point stdout at
        # /dev/null so that nothing is left to write.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
    return code
