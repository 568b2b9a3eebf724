"""The parsers of `reviewer`'s commands, grouped by concern: those that run offline on files and git
checkouts (`offline`), the evaluation (`evaluation`), the server's processes and their setup
(`server`), and those that talk to a running server (`remote`). What they share is here: a parser
that keeps argparse's exit status 2 on a usage error, the help's formatter, a command's summary
and `--host`. bot/commands/cli.py puts them together and runs the command parsed.
"""

from __future__ import annotations

import argparse
import sys
from typing import NoReturn


class Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # argparse exits 2 on usage errors; keep that
        self.print_usage(sys.stderr)
        self.exit(2, f"{self.prog}: error: {message}\n")


class Formatter(argparse.RawDescriptionHelpFormatter):
    """Keeps the epilogs' line breaks (lists of settings and exit codes) and widens the columns."""

    def __init__(self, prog: str) -> None:
        super().__init__(prog, max_help_position=32)

    def add_argument(self, action: argparse.Action) -> None:
        """Counts a command's name at the indent it is shown at, so that `learnings` keeps its help on its line."""
        super().add_argument(action)
        if action.help is not argparse.SUPPRESS:
            for sub in self._iter_indented_subactions(action):
                self._action_max_length = max(self._action_max_length,
                                              len(self._format_action_invocation(sub)) + self._current_indent)


def command(sub, name: str, summary: str, epilog: str | None = None) -> argparse.ArgumentParser:
    return sub.add_parser(name, help=summary, description=summary[0].upper() + summary[1:] + ".",
                          epilog=epilog, formatter_class=Formatter)


def host(command: argparse.ArgumentParser) -> None:
    command.add_argument("--host", metavar="ADDRESS",
                         help="the address to listen on: 0.0.0.0 every IPv4 address, :: every IPv6 address, "
                              "127.0.0.1 this machine only (default: REVIEWER_HOST, else 0.0.0.0)")
