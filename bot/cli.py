"""`reviewer`: the command line of design.md. Parsing only; each command lives in its own module.

Exit codes are part of the interface: 0 success (or valid), 1 invalid, 2 usage or unreadable input,
141 when the reader of standard output went away (`reviewer plan ... | head -1`): the status a shell
reports for a writer ended by SIGPIPE, as `cat` or `git log` give, so that a pipeline under
`set -o pipefail` still sees that the output was cut, with no traceback.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

FORMATS = ("text", "json", "github")
EXIT_BROKEN_PIPE = 128 + 13  # 128 + SIGPIPE

# command → "module:function"; imported lazily so `reviewer schema` does not load aiohttp.
COMMANDS = {
    "validate": "bot.commands.validate:run",
    "plan": "bot.plan.command:run",
    "serve": "bot.server.main:run",
    "worker": "bot.server.main:run_worker",
    "schema": "bot.commands.schema:run_schema",
    "crds": "bot.commands.schema:run_crds",
}


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse exits 2 on usage errors; keep that
        self.print_usage(sys.stderr)
        self.exit(2, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="reviewer", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    v = sub.add_parser("validate", help="validate repository configs, admin configs and connector resources")
    v.add_argument("paths", nargs="+", metavar="PATH")
    v.add_argument("--admin-config", metavar="FILE")
    v.add_argument("--full-name", metavar="OWNER/NAME")
    v.add_argument("--secrets-dir", metavar="DIR")
    v.add_argument("--kind", choices=("repo-config", "admin-config", "oidc-connector", "saml-connector"))
    v.add_argument("--format", choices=FORMATS, default="text")

    p = sub.add_parser("plan", help="print the review plan for a local git checkout, offline")
    p.add_argument("--repo", required=True, metavar="DIR")
    p.add_argument("--base", metavar="REF")
    p.add_argument("--head", default="HEAD", metavar="REF")
    p.add_argument("--admin-config", metavar="FILE")
    p.add_argument("--full-name", metavar="OWNER/NAME")
    p.add_argument("--pr", metavar="FILE", help="a GitHub pull request object (JSON)")
    p.add_argument("--format", choices=("text", "json"), default="text")

    s = sub.add_parser("serve", help="run the GitHub App server")
    s.add_argument("--config", metavar="FILE", help="a settings file with the environment's keys")
    s.add_argument("--port", type=int)
    s.add_argument("--no-workers", action="store_true",
                   help="take deliveries and serve the APIs only; `reviewer worker` processes run the jobs "
                        "(needs REVIEWER_DATABASE_URL=postgresql://...)")

    w = sub.add_parser("worker", help="run jobs only (PostgreSQL), serving GET /healthz and GET /metrics on PORT")
    w.add_argument("--config", metavar="FILE", help="a settings file with the environment's keys")
    w.add_argument("--port", type=int)

    sc = sub.add_parser("schema", help="print a JSON Schema")
    sc.add_argument("name", metavar="NAME")

    sub.add_parser("crds", help="print the connector CustomResourceDefinitions")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    module_name, func_name = COMMANDS[args.command].split(":")
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
