"""Support for the end-to-end review tests: the app, the GitHub double and the chat-completions
double wired together, an admin file that declares the double as a provider, and readers of what
GitHub holds afterwards (the app's reviews, its summary comment, the check runs)."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from bot.reviews.output import SUMMARY_MARKER
from tests.support.app_support import World, running_app
from tests.support.chat_double import ChatDouble
from tests.support.github_double import CheckRun, PullRequest, Review
from tests.support.server_support import wait_for

API_KEY = "sk-e2e-3f9a7c1b5d2e8f40a6b1"
KEY_VAR = "REVIEWER_E2E_MODEL_KEY"
PRIMARY, FALLBACK = "m1", "m2"

# The base of every pull request (laid over app_support.BASE_FILES): a module the head extends.
CALC_BASE = "def add(a, b):\n    return a + b\n"
CALC_HEAD = ("import os\n"                      # 1
             "def add(a, b):\n"                 # 2
             "    return a + b\n"               # 3
             "\n"                               # 4
             "def ratio(a, b):\n"               # 5
             "    return a / b\n"               # 6
             "\n"                               # 7
             "def secret():\n"                  # 8
             "    return os.environ['TOKEN']\n")  # 9
HEAD_FILES = {"src/calc.py": CALC_HEAD}


def shown(body: str) -> str:
    """A comment's body as GitHub shows it: without the hidden HTML comments (the markers that
    name the delivery a post belongs to, bot.pipeline.journal)."""
    return re.sub(r"<!--.*?-->\n?", "", body, flags=re.S)


def admin_yaml(chat: ChatDouble, timeout: float = 5) -> str:
    return (f"providers:\n  local:\n    type: openai\n    baseUrl: {chat.base_url}\n"
            f"    apiKey: env://{KEY_VAR}\n    timeout: {timeout}\n"
            f"defaults:\n  models:\n    review: local/{PRIMARY}\n    fallback: local/{FALLBACK}\n")


def finding(line: int, severity: str, category: str, message: str, *, end: int | None = None,
            fix: str | None = None, path: str = "src/calc.py", rules: list[str] | None = None) -> dict:
    out = {"path": path, "startLine": line, "endLine": end or line, "severity": severity,
           "category": category, "message": message}
    if fix is not None:
        out["suggestedFix"] = fix
    if rules is not None:
        out["rules"] = rules
    return out


# The scripted findings, one of each kind the shaping steps tell apart (lines of CALC_HEAD).
BUG = finding(6, "blocking", "bug", "Division by zero when b is 0.", fix="    return a / b if b else 0.0")
LEAK = finding(9, "important", "security", "Returns a secret from the environment.")
NIT = finding(1, "nit", "style", "Unused import order.")
DOCS = finding(5, "minor", "docs", "Document what ratio returns.")
SPEED = finding(3, "minor", "performance", "Cache the sum.")
CLEAN = finding(2, "minor", "maintainability", "Consider a docstring.")


@asynccontextmanager
async def reviewing_app(tmp_path, github, github_app, private_key: str, chat: ChatDouble,
                        timeout: float = 5, **settings: str) -> AsyncIterator[World]:
    async with running_app(tmp_path, github, github_app, private_key, admin_yaml=admin_yaml(chat, timeout),
                           **settings) as world:
        yield world


def config_pull(world: World, config: str, extra_base: dict | None = None,
                head: dict | None = None) -> PullRequest:
    """A pull request whose merge base holds `config` as .reviewer.yaml and which adds CALC_HEAD."""
    base = {".reviewer.yaml": config, "src/calc.py": CALC_BASE, **(extra_base or {})}
    return world.pull(base, head or HEAD_FILES)


async def runs_done(world: World, pr: PullRequest, count: int = 1, timeout: float = 20.0) -> list[CheckRun]:
    """The head's completed Reviewer runs, once there are `count` of them (a bounded wait)."""
    async def done():
        finished = [run for run in world.runs(pr) if run.status == "completed"]
        return finished if len(finished) >= count else None
    return await wait_for(done, timeout)


async def reviewed(world: World, pr: PullRequest, action: str = "opened", before: str | None = None) -> CheckRun:
    """Deliver `pull_request.<action>` and wait for the check run of the pull request's head."""
    before_count = len([r for r in world.runs(pr) if r.status == "completed"])
    payload = world.github.payload("pull_request", action, installation=world.installation, pull=pr, before=before)
    status, _ = await world.deliver("pull_request", payload)
    assert status == 202
    return (await runs_done(world, pr, before_count + 1))[-1]


async def push_reviewed(world: World, pr: PullRequest, files: dict[str, str | None], **commit) -> CheckRun:
    """Push `files` to the pull request's branch (`parent=pr.merge_base`: a force-push) and wait
    for the review of that push (`synchronize`, from the head before it)."""
    before = pr.head_sha
    world.repo.commit(files, branch=pr.head_ref, **commit)
    return await reviewed(world, pr, "synchronize", before=before)


def app_reviews(world: World, pr: PullRequest) -> list[Review]:
    return [r for r in pr.reviews if r.user == world.app.bot]


def summary_comments(world: World, pr: PullRequest) -> list:
    return [c for c in pr.comments if c.user == world.app.bot and SUMMARY_MARKER in c.body]


def summary_of(world: World, pr: PullRequest) -> str:
    comments = summary_comments(world, pr)
    assert len(comments) == 1, f"expected one summary comment, found {len(comments)}"
    return comments[0].body


def inline_comments(world: World, pr: PullRequest) -> list:
    return [c for r in app_reviews(world, pr) for c in r.comments]


def run_text(run: CheckRun) -> str:
    """Everything a check run shows: title, summary, text and annotations."""
    parts = [run.output.get("title") or "", run.output.get("summary") or "", run.output.get("text") or ""]
    parts += [f"{a.get('title', '')} {a['message']}" for a in run.annotations]
    return "\n".join(parts)


def everything_written(world: World) -> str:
    """Every text the app left on GitHub: check runs, comments, reviews, inline comments, dismissals."""
    parts = [run_text(run) for run in world.repo.check_runs.values()]
    for pr in world.repo.pulls.values():
        parts += [c.body for c in pr.comments]
        parts += [f"{r.body} {r.dismissal_message or ''}" for r in pr.reviews]
        parts += [c.body for c in pr.review_comments]
    return "\n".join(parts)
