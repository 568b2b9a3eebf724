"""The parsers of the commands that talk to a running server: `reviewer login` and `logout`,
`reviewer learnings` and `reviewer upload-sarif` (their token: bot/commands/client.py)."""

from __future__ import annotations

import argparse

from bot.commands.parsers import Formatter, Parser, command


def login(sub) -> None:
    lg = command(sub, "login", "sign in to a Reviewer server through a connector, from the terminal")
    lg.add_argument("--server", required=True, metavar="URL",
                    help="the server's address, such as https://reviewer.example.com (required)")
    lg.add_argument("--connector", metavar="NAME",
                    help="the connector to sign in with (default: the only one the server offers)")
    lg.add_argument("--no-browser", action="store_true",
                    help="print the sign-in URL instead of opening a browser (default: open one)")
    lg.add_argument("--mfa", action="store_true",
                    help="run an MFA check for the session a previous `reviewer login` stored, through its "
                         "connector's mfa settings, for permissions in access.mfa.required (default: sign in)")


def logout(sub) -> None:
    command(sub, "logout", "end the session that `reviewer login` keeps, on the server and on this machine")


LEARNINGS_EPILOG = """the token is REVIEWER_TOKEN when set, else the session `reviewer login` keeps (sent only to the
server that issued it). exit codes: 0 done, 1 the server refused, 2 usage, no credentials or the
server unreachable."""


def learnings(sub) -> None:
    top = command(sub, "learnings", "list, add, change and delete what the reviewer learned (a server's learnings)",
                  epilog=LEARNINGS_EPILOG)
    actions = top.add_subparsers(dest="action", required=True, parser_class=Parser, metavar="ACTION",
                                 title="actions", help="what to do (`reviewer learnings ACTION --help`)")
    ls = _learnings_action(actions, "list", "list learnings, newest first")
    ls.add_argument("--account", metavar="LOGIN", help="only those of this account (default: every one you may read)")
    ls.add_argument("--repo", metavar="OWNER/NAME", help="only those that apply to this repository (default: all)")
    ls.add_argument("--kind", choices=("suppress", "guide"), help="only learnings of this kind (default: both)")
    _learnings_action(actions, "show", "show one learning").add_argument("id", metavar="ID")
    add = _learnings_action(actions, "add", "add a learning")
    add.add_argument("text", metavar="TEXT", help="what to remember (a suppress learning: the message it names)")
    add.add_argument("--repo", metavar="OWNER/NAME", help="the repository it applies to (or --account)")
    add.add_argument("--account", metavar="LOGIN", help="instead of --repo: every repository of this account")
    add.add_argument("--kind", choices=("suppress", "guide"), default="guide",
                     help="guide: told to later reviews; suppress: leaves matching findings out (default: guide)")
    _learning_fields(add)
    add.add_argument("--source-url", metavar="URL", help="a link to where it was decided (default: none)")
    edit = _learnings_action(actions, "edit", "change a learning")
    edit.add_argument("id", metavar="ID")
    edit.add_argument("--text", metavar="TEXT", help="the new text (default: unchanged)")
    edit.add_argument("--kind", choices=("suppress", "guide"), help="the new kind (default: unchanged)")
    _learning_fields(edit)
    edit.add_argument("--every-path", action="store_true", help="make it apply to every path (default: its paths stay)")
    _learnings_action(actions, "rm", "delete a learning: what it left out comes back at the next review").add_argument(
        "id", metavar="ID")


def _learnings_action(actions, name: str, summary: str) -> argparse.ArgumentParser:
    parser = actions.add_parser(name, help=summary, description=summary[0].upper() + summary[1:] + ".",
                                epilog=LEARNINGS_EPILOG, formatter_class=Formatter)
    parser.add_argument("--server", metavar="URL", help="the server (default: REVIEWER_SERVER, else the one "
                                                        "`reviewer login` signed in to)")
    parser.add_argument("--format", choices=("text", "json"), default="text",
                        help="lines for people, or the API's JSON (default: text)")
    return parser


def _learning_fields(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--path", action="append", metavar="GLOB",
                        help="a glob of the paths it applies to; repeat for more (add: default every path; edit: "
                             "replaces them)")
    parser.add_argument("--rule", metavar="ID", help="the rule id it is about; edit: '' for none (a suppress learning "
                                                     "needs a rule or a category)")
    parser.add_argument("--category", metavar="CATEGORY",
                        help="the category it is about (bug, risk, style, …); edit: '' for none")
UPLOAD_EPILOG = """the token: REVIEWER_TOKEN, else the session `reviewer login` keeps for the server.
exit codes: 0 uploaded, 1 the report or the upload is refused (here or by the server), 2 usage, an
unreadable file, no token, or a server that cannot be reached."""


def upload_sarif(sub) -> None:
    u = command(sub, "upload-sarif", "upload an analyzer's report (SARIF, reviewdog or checkstyle) to a Reviewer "
                                     "server, as GitHub's code scanning takes it", epilog=UPLOAD_EPILOG)
    u.add_argument("file", metavar="FILE", help="the report")
    u.add_argument("--repo", required=True, metavar="OWNER/REPO", help="the repository analysed (required)")
    u.add_argument("--commit", required=True, metavar="SHA",
                   help="the 40-hex commit analysed: the head of the pull request (required)")
    u.add_argument("--ref", metavar="REF", help="refs/heads/BRANCH, refs/pull/N/head or refs/pull/N/merge "
                                                "(default: GITHUB_REF, else the checked-out branch)")
    u.add_argument("--format", choices=("sarif", "rdjson", "rdjsonl", "checkstyle"), default="sarif",
                   help="the report's format; others are converted to SARIF before the upload (default: sarif)")
    u.add_argument("--server", metavar="URL", help="the Reviewer server (default: REVIEWER_SERVER, else the server "
                                                   "of `reviewer login`)")
    u.add_argument("--tool-name", metavar="NAME", help="the analysis' name; for reviewdog and checkstyle reports "
                                                       "without one, the tool's (default: none)")
