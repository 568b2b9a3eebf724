"""`reviewer`: the command line of README.md. Parsing only; each command lives in its own module.

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
from importlib import metadata
from typing import NoReturn

FORMATS = ("text", "json", "github")
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

SCHEMA_NAMES = ("repo-config", "admin-config", "oidc-connector", "saml-connector", "eval-corpus")
KINDS = SCHEMA_NAMES

DESCRIPTION = "Reviewer: reviews pull requests as a repository's .reviewer.yaml says, and manages SSO connectors."
EPILOG = """exit codes: 0 success (or valid), 1 invalid, 2 usage error or unreadable input,
141 when the reader of standard output went away.
Run `reviewer COMMAND --help` for a command's options."""
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


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # argparse exits 2 on usage errors; keep that
        self.print_usage(sys.stderr)
        self.exit(2, f"{self.prog}: error: {message}\n")


class _Formatter(argparse.RawDescriptionHelpFormatter):
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


def version() -> str:
    """The installed distribution's version (pyproject.toml); running from a bare checkout, unknown."""
    try:
        return metadata.version("reviewer")
    except metadata.PackageNotFoundError:
        return "unknown (not installed)"


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="reviewer", description=DESCRIPTION, epilog=EPILOG, formatter_class=_Formatter)
    parser.add_argument("--version", action="version", version=f"reviewer {version()}",
                        help="print the version and exit")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser, metavar="COMMAND",
                                title="commands")
    _validate(sub)
    _plan(sub)
    _context(sub)
    _eval(sub)
    _review(sub)
    s = _command(sub, "serve", "run the GitHub App server (webhook intake, jobs, resource and admin APIs)",
                 epilog=SERVE_EPILOG)
    s.add_argument("--config", metavar="FILE",
                   help="a settings file of KEY=VALUE lines, the environment's keys (default: none; the "
                        "environment wins over it)")
    s.add_argument("--port", type=int, metavar="PORT", help="the port to listen on (default: PORT, else 8080; "
                                                            "0 picks a free one)")
    _host(s)
    s.add_argument("--no-workers", action="store_true",
                   help="take deliveries and serve the APIs and sign-in only; `reviewer worker` processes run the "
                        "jobs (needs REVIEWER_DATABASE_URL=postgresql://...) (default: off, jobs run here too)")
    w = _command(sub, "worker", "run jobs only (PostgreSQL), serving GET /healthz, /livez, /readyz and /metrics on PORT",
                 epilog=SERVE_EPILOG)
    w.add_argument("--config", metavar="FILE",
                   help="a settings file of KEY=VALUE lines, the environment's keys (default: none; the "
                        "environment wins over it)")
    w.add_argument("--port", type=int, metavar="PORT", help="the port of the probes and /metrics (default: PORT, "
                                                            "else 8080; 0 picks a free one)")
    _host(w)
    sc = _command(sub, "schema", "print a JSON Schema")
    sc.add_argument("name", metavar="NAME", help=f"the schema: one of {', '.join(SCHEMA_NAMES)}")
    _command(sub, "crds", "print both connector CustomResourceDefinitions (apiextensions.k8s.io/v1) as YAML")
    lg = _command(sub, "login", "sign in to a Reviewer server through a connector, from the terminal")
    lg.add_argument("--server", required=True, metavar="URL",
                    help="the server's address, such as https://reviewer.example.com (required)")
    lg.add_argument("--connector", metavar="NAME",
                    help="the connector to sign in with (default: the only one the server offers)")
    lg.add_argument("--no-browser", action="store_true",
                    help="print the sign-in URL instead of opening a browser (default: open one)")
    lg.add_argument("--mfa", action="store_true",
                    help="run an MFA check for the session a previous `reviewer login` stored, through its "
                         "connector's mfa settings, for permissions in access.mfa.required (default: sign in)")
    _command(sub, "logout", "end the session that `reviewer login` keeps, on the server and on this machine")
    _setup(sub)
    _doctor(sub)
    _learnings(sub)
    _upload_sarif(sub)
    return parser


def _command(sub, name: str, summary: str, epilog: str | None = None) -> argparse.ArgumentParser:
    return sub.add_parser(name, help=summary, description=summary[0].upper() + summary[1:] + ".",
                          epilog=epilog, formatter_class=_Formatter)


def _host(command: argparse.ArgumentParser) -> None:
    command.add_argument("--host", metavar="ADDRESS",
                         help="the address to listen on: 0.0.0.0 every IPv4 address, :: every IPv6 address, "
                              "127.0.0.1 this machine only (default: REVIEWER_HOST, else 0.0.0.0)")


SETUP_EPILOG = """settings from the environment: REVIEWER_SECRETS_DIR (required: the credentials are written to
its github-app/ directory), PORT, REVIEWER_HOST, REVIEWER_PUBLIC_URL (stands in for --public-url),
GITHUB_API_URL (overrides the API derived from --github-url).
exit codes: 0 once an app is registered, 2 unusable settings or a store that already holds an app's
credentials, 1 port unavailable or stopped before an app was registered."""


def _setup(sub) -> None:
    s = _command(sub, "setup", "register the GitHub App through GitHub's manifest flow, from a page this serves",
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
    _host(s)


DOCTOR_EPILOG = """it reads the settings `reviewer serve` reads (the environment over --config) and prints one line a
check: `ok|warn|fail NAME: detail` (the GitHub App's id and key, the webhook secret, the database and
its schema, the admin file, each model provider it declares, the secret store, the public URL, the
admin token, the port; with --github, GitHub itself). No line shows a secret.
exit codes: 0 no check failed (warnings allowed), 1 a check failed."""


def _doctor(sub) -> None:
    d = _command(sub, "doctor", "check everything `reviewer serve` depends on, one line a check",
                 epilog=DOCTOR_EPILOG)
    d.add_argument("--config", metavar="FILE",
                   help="a settings file of KEY=VALUE lines, as `reviewer serve --config` reads it (default: none; "
                        "the environment wins over it)")
    d.add_argument("--github", action="store_true",
                   help="also ask GitHub for the app with its key (GET /app at the API's address) (default: off, "
                        "nothing leaves this machine but the database's and providers' checks)")


LEARNINGS_EPILOG = """the token is REVIEWER_TOKEN when set, else the session `reviewer login` keeps (sent only to the
server that issued it). exit codes: 0 done, 1 the server refused, 2 usage, no credentials or the
server unreachable."""


def _learnings(sub) -> None:
    top = _command(sub, "learnings", "list, add, change and delete what the reviewer learned (a server's learnings)",
                   epilog=LEARNINGS_EPILOG)
    actions = top.add_subparsers(dest="action", required=True, parser_class=_Parser, metavar="ACTION",
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
                                epilog=LEARNINGS_EPILOG, formatter_class=_Formatter)
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


def _upload_sarif(sub) -> None:
    u = _command(sub, "upload-sarif", "upload an analyzer's report (SARIF, reviewdog or checkstyle) to a Reviewer "
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


def _validate(sub) -> None:
    v = _command(sub, "validate", "validate repository configs, admin configs and connector resources, offline")
    v.add_argument("paths", nargs="+", metavar="PATH",
                   help="files to check; a directory stands for the .reviewer.yaml (or .yml) it holds")
    v.add_argument("--admin-config", metavar="FILE",
                   help="an admin configuration to check repository files against (default: none)")
    v.add_argument("--full-name", metavar="OWNER/NAME",
                   help="the repository the files belong to, for account-level admin settings (default: none)")
    v.add_argument("--secrets-dir", metavar="DIR",
                   help="resolve connectors' secret:// references in this store (default: check their form only)")
    v.add_argument("--kind", choices=KINDS,
                   help="what every PATH is (default: from the file name, else from the content)")
    v.add_argument("--format", choices=FORMATS, default="text",
                   help="text lines `path:line:col: code: message`, a JSON report, or GitHub workflow "
                        "annotations (default: text)")


def _plan(sub) -> None:
    p = _command(sub, "plan", "print the review plan for a local git checkout, offline")
    p.add_argument("--repo", required=True, metavar="DIR", help="the git checkout (required)")
    p.add_argument("--base", metavar="REF", help="the base to compare with (default: origin/HEAD, else main)")
    p.add_argument("--head", default="HEAD", metavar="REF", help="the head to review (default: HEAD)")
    p.add_argument("--admin-config", metavar="FILE", help="the instance's admin configuration (default: none)")
    p.add_argument("--full-name", metavar="OWNER/NAME",
                   help="the repository's full name, for account-level admin settings "
                        "(default: from the origin remote)")
    p.add_argument("--pr", metavar="FILE", help="a GitHub pull request object (JSON) for `pr` in CEL "
                                                "expressions (default: one made from the commits)")
    p.add_argument("--format", choices=("text", "json"), default="text",
                   help="text for people, or the plan as JSON (default: text)")


def _context(sub) -> None:
    c = _command(sub, "context", "print what the repository index adds to a review of base...head, offline")
    c.add_argument("--repo", required=True, metavar="DIR",
                   help="the git checkout; its index is kept under .git/reviewer/ and reused (required)")
    c.add_argument("--base", metavar="REF", help="the base to compare with (default: origin/HEAD, else main)")
    c.add_argument("--head", default="HEAD", metavar="REF", help="the head to review (default: HEAD)")
    c.add_argument("--format", choices=("text", "json"), default="text",
                   help="text for people, or the pieces as JSON (default: text)")


REVIEW_EPILOG = """the model's key reaches a provider as the admin file says (apiKey: env://VAR, or secret:// in
REVIEWER_SECRETS_DIR); the index is kept under XDG_CACHE_HOME (default ~/.cache), in reviewer/.
--post reads GITHUB_EVENT_PATH (a pull_request event), GITHUB_TOKEN, GITHUB_REPOSITORY and GITHUB_API_URL.
exit codes: 0 nothing at or above --fail-on; 1 a finding at or above it, an invalid configuration, or (unless
--fail-on never) no usable model answer; 2 usage error, not a git repository, or an unknown ref. See docs/ci.md."""
REVIEW_FORMATS = ("text", "json", "sarif", "github", "markdown")
FAIL_ON = ("blocking", "important", "minor", "nit", "never")


def _review(sub) -> None:
    r = _command(sub, "review", "review a local change (merge-base(base, head)..head) as a pull request would be",
                 epilog=REVIEW_EPILOG)
    r.add_argument("--repo", default=".", metavar="DIR", help="the git repository (default: the current directory)")
    r.add_argument("--base", metavar="REF", help="the branch the change would merge into (default: origin/HEAD, "
                                                 "else main, else master)")
    r.add_argument("--head", default="HEAD", metavar="REF", help="the change's last commit (default: HEAD)")
    r.add_argument("--admin-config", metavar="FILE",
                   help="the admin file: model providers, defaults, analyzers (default: REVIEWER_ADMIN_CONFIG, "
                        "else none: only the analyzers run)")
    r.add_argument("--format", choices=REVIEW_FORMATS, default="text",
                   help="text for a terminal, JSON, SARIF 2.1.0, GitHub workflow commands, or Markdown "
                        "(default: text)")
    r.add_argument("--fail-on", choices=FAIL_ON, default="blocking",
                   help="exit 1 when a finding is of this severity or a higher one (default: blocking)")
    r.add_argument("--post", action="store_true",
                   help="in a GitHub Actions job of a pull_request event: review the event's base and head and post "
                        "the check run, review, summary and approval as the App does (default: print only)")


def _share(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"{text} is not between 0 and 1")
    return value


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} is less than 1")
    return value


EVAL_EPILOG = """exit codes: 0 done (and the gate passed); 1 the gate failed (--min-recall, --baseline), or the
corpus, a case's config or an admin file is invalid; 2 usage error, unreadable file, or no case could be run.
`reviewer eval import aacr-bench FILE --repos DIR --out CORPUS` makes a corpus of a public benchmark
(`reviewer eval import aacr-bench --help`). See docs/eval.md."""

EVAL_IMPORT_EPILOG = """profiles: strict keeps only the comments a person wrote at Diff level (a pull request left
with none is skipped); full keeps every comment; smoke keeps every comment of a handful of pull
requests, per language the one with the fewest changed lines among those whose repository and
commits are there.
exit codes: 0 the corpus is written; 1 FILE (or --negatives) is not in the benchmark's format;
2 usage error, unreadable file, or no case could be made. See docs/eval.md "A public benchmark"."""


def _eval(sub) -> None:
    e = _command(sub, "eval", "review a corpus of known defects and report recall, precision, noise and cost",
                 epilog=EVAL_EPILOG)
    e.add_argument("corpus", metavar="CORPUS", help="the corpus: a directory holding corpus.yaml, or the file")
    e.add_argument("--admin-config", required=True, metavar="FILE",
                   help="the admin file whose providers, defaults and judge the reviews use (required)")
    e.add_argument("--compare", metavar="FILE",
                   help="a second admin file run on the same cases: each figure's difference, with a 95 percent "
                        "interval (default: none)")
    e.add_argument("--only", nargs="+", action="extend", metavar="ID",
                   help="run only these cases (default: every case)")
    e.add_argument("--jobs", type=_positive, default=1, metavar="N", help="cases reviewed at once (default: 1)")
    e.add_argument("--format", choices=("text", "json", "markdown"), default="text",
                   help="a table for people, the JSON report, or Markdown for a pull request comment "
                        "(default: text)")
    e.add_argument("--min-recall", type=_share, metavar="X",
                   help="exit 1 when the overall recall is below X, between 0 and 1 (default: no minimum)")
    e.add_argument("--baseline", metavar="REPORT.json",
                   help="a saved JSON report: exit 1 when recall, precision or quiet dropped beyond its 95 percent "
                        "interval (default: none)")


def build_eval_import_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="reviewer eval import", formatter_class=_Formatter,
                     description="write a public benchmark's pull requests as a `reviewer eval` corpus")
    sub = parser.add_subparsers(dest="benchmark", required=True, parser_class=_Parser, metavar="BENCHMARK",
                                title="benchmarks")
    a = _command(sub, "aacr-bench", "AACR-Bench (github.com/alibaba/aacr-bench): 196 pull requests, 50 "
                                    "repositories, 10 languages", epilog=EVAL_IMPORT_EPILOG)
    a.add_argument("file", metavar="FILE", help="the benchmark's dataset/positive_samples.json (or a file of "
                                                "the same format)")
    a.add_argument("--repos", required=True, metavar="DIR",
                   help="where the repositories are: each a clone at DIR/<owner>/<name> (.git optional) (required)")
    a.add_argument("--out", required=True, metavar="CORPUS",
                   help="the corpus directory to write CORPUS/corpus.yaml into (required)")
    a.add_argument("--profile", choices=("strict", "full", "smoke"), default="full",
                   help="which comments and pull requests to keep, as below (default: full)")
    a.add_argument("--negatives", metavar="FILE",
                   help="the benchmark's dataset/negative_samples.json: the lines of comments its annotators "
                        "rejected become must-not places, where they overlap no kept comment (default: none)")
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
        args = build_eval_import_parser().parse_args(argv[2:])
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
