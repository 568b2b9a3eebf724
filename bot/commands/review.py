"""`reviewer review [--repo DIR] [--base REF] [--head REF] [--admin-config FILE]
[--format text|json|sarif|github|markdown] [--fail-on blocking|important|minor|nit|never] [--post]`:
`merge-base(base, head)..head` of a local git repository reviewed as a pull request would be
(bot/local/), printed in the chosen format; `--post` posts it on the pull request of a GitHub
Actions `pull_request` event instead (bot/local/actions.py, docs/ci.md).

Exit 0 when nothing is at or above `--fail-on`; 1 when a finding is, when the configuration is
invalid, or (unless `--fail-on never`) when no model gave a usable answer; 2 on a usage error,
a directory that is not a git repository, or a ref that names no commit (one line on stderr).
Nothing is written into the repository or the working directory: the index is kept under
$XDG_CACHE_HOME/reviewer/.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import sys
from collections.abc import Iterator, Mapping, Sequence

import aiohttp

from bot.commands.cli import version
from bot.documents.diagnostics import dumps
from bot.engine.usage import Usage
from bot.index.gitsource import GitSnapshot
from bot.local.change import Change, Refs, read_change
from bot.local.indexes import Indexes
from bot.local.progress import progress
from bot.local.render import render_github, render_markdown, render_text
from bot.local.report import Report, Spent, deciding_of, exit_code, findings_of
from bot.local.review import Reviewed, review_change
from bot.local.sarif import to_sarif
from bot.plan import git
from bot.plan.offline import UsageError, read_admin_file
from bot.reviews.ledger import EMPTY

DEFAULT_BASES = ("origin/HEAD", "main", "master")


def base_of(repo: str, given: str | None) -> str:
    """`--base`, else the default branch: the first of DEFAULT_BASES that names a commit."""
    if given is not None:
        return given
    base = git.default_base(repo, DEFAULT_BASES)
    try:
        git.resolve(repo, base)
    except git.GitError:
        raise git.GitError(f"no base to compare with: none of {', '.join(DEFAULT_BASES)} names a commit in "
                           f"{repo}; give --base REF") from None
    return base


def report_of(refs: Refs, change: Change, reviewed: Reviewed, usage: Usage) -> Report:
    output = reviewed.output
    if output is None:
        status, reason = "skipped", reviewed.skipped
    elif reviewed.skipped is not None:
        status, reason = "analyzers-only", reviewed.skipped
    else:
        status, reason = ("failed", output.failure) if output.status == "failed" else ("completed", None)
    ledger = output.ledger if output is not None else EMPTY
    notes = (*change.notes, *reviewed.notes, *(output.notes if output is not None else ()))
    return Report(refs.base, refs.head, change.merge_base, change.head_sha, status, change.plan, findings_of(ledger),
                  deciding_of(ledger), Spent.of(usage), tuple(dict.fromkeys(notes)), reason)


async def review(repo: str, refs: Refs, admin_path: str | None, secrets_dir: str | None) -> tuple[Report, Change]:
    """Raises git.GitError or UsageError."""
    admin = read_admin_file(admin_path)
    change = await asyncio.to_thread(read_change, repo, refs, admin, Indexes.in_cache())
    usage = Usage()
    label = f"Reviewing {len(change.plan.get('files', []))} file(s) with {change.plan['models'].get('review')}"
    async with aiohttp.ClientSession() as session, progress(sys.stderr, label, usage):
        reviewed = await review_change(change, admin, session, usage, secrets_dir)
    return report_of(refs, change, reviewed, usage), change


def head_lines(change: Change, paths: Sequence[str]) -> Mapping[str, list[str]]:
    """The findings' files at the head, by line, for text and Markdown."""
    blobs = GitSnapshot(change.repo, change.head_sha).read(sorted(set(paths)))
    return {p: data.decode("utf-8", errors="replace").splitlines() for p, data in blobs.items()}


def render(report: Report, change: Change, form: str) -> str:
    if form == "json":
        return dumps(report.to_json()) + "\n"
    if form == "sarif":
        return dumps(to_sarif(report, version())) + "\n"
    if form == "github":
        return render_github(report)
    lines = head_lines(change, [f.path for f in report.findings])
    return render_markdown(report, lines) if form == "markdown" else render_text(report, lines)


def admin_path(args: argparse.Namespace) -> str | None:
    return args.admin_config or os.environ.get("REVIEWER_ADMIN_CONFIG") or None


@contextlib.contextmanager
def quiet_engine() -> Iterator[None]:
    """The engine logs each model that gave no answer; the report says so itself. Errors still
    get through."""
    engine = logging.getLogger("reviewer.engine")
    level = engine.level
    engine.setLevel(logging.ERROR)
    try:
        yield
    finally:
        engine.setLevel(level)


def post(args: argparse.Namespace) -> int:
    """`--post`: the job's pull request reviewed and posted (bot/local/actions.py); the report of
    what stands at its head printed as for a local review, for the job's log."""
    from bot.github import GitHubError  # the GitHub client and the pipeline's poster: only for --post
    from bot.local.actions import post_review
    from bot.local.actions_event import EnvironmentProblem, read_event

    try:
        event = read_event(os.environ)
        admin = read_admin_file(admin_path(args))
        git.check_repository(args.repo)
        with quiet_engine():
            posted, change = asyncio.run(post_review(event, args.repo, admin,
                                                     os.environ.get("REVIEWER_SECRETS_DIR")))
    except (EnvironmentProblem, UsageError, git.GitError) as error:
        print(f"reviewer review --post: {error}", file=sys.stderr)
        return 2
    except GitHubError as error:  # the check run says so too, when it could be completed
        print(f"reviewer review --post: GitHub refused or failed: {error.describe()}", file=sys.stderr)
        return 1
    refs = Refs(str((event.pull.get("base") or {}).get("ref") or event.base_sha),
                str((event.pull.get("head") or {}).get("ref") or event.head_sha))
    report = Report(refs.base, refs.head, change.merge_base, change.head_sha, posted.status, change.plan,
                    posted.findings, posted.deciding, Spent.of(posted.usage or Usage()),
                    (posted.report.title,), posted.reason)
    sys.stdout.write(render(report, change, args.format))
    return exit_code(report, args.fail_on)


def run(args: argparse.Namespace) -> int:
    if args.post:
        return post(args)
    repo = args.repo
    try:
        git.check_repository(repo)
        refs = Refs(base_of(repo, args.base), args.head)
        with quiet_engine():
            report, change = asyncio.run(review(repo, refs, admin_path(args), os.environ.get("REVIEWER_SECRETS_DIR")))
    except (git.GitError, UsageError) as error:
        print(f"reviewer review: {error}", file=sys.stderr)
        return 2
    sys.stdout.write(render(report, change, args.format))
    return exit_code(report, args.fail_on)
