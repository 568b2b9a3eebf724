"""Shared inputs of the engine tests: a plan, a diff as GitHub gives it, providers, one review call."""

from __future__ import annotations

import copy

from bot.config.model import Provider
from bot.engine.engine import run_review
from tests.support.chat_double import ChatDouble

API_KEY = "sk-test-5f0c1e2d9a8b7c6d"
HEAD = "0123456789abcdef0123456789abcdef01234567"
APP_LOGIN = "reviewer-app[bot]"

APP_PATCH = "\n".join([
    "@@ -1,4 +1,6 @@",
    " import os",
    "+import sys",
    " ",
    " def main():",
    "-    return 1",
    "+    value = compute()",
    "+    return value",
    "@@ -20,3 +22,4 @@ def compute():",
    "     a = 1",
    "     b = 2",
    "+    c = a / 0",
    "     return a + b",
])

PATCHES = [
    {"filename": "src/app.py", "status": "modified", "patch": APP_PATCH},
    {"filename": "docs/guide.md", "status": "added", "patch": "@@ -0,0 +1,2 @@\n+# Guide\n+Text."},
    {"filename": "assets/logo.png", "status": "modified"},  # binary: GitHub gives no patch
    {"filename": "vendor/lib.js", "status": "modified", "patch": "@@ -1 +1 @@\n-a\n+b"},  # ignored
]

BASE_PLAN = {
    "planVersion": 1,
    "decision": "review",
    "skipReason": None,
    "models": {"review": "local/primary-model", "fallback": "local/fallback-model"},
    "feedback": "standard",
    "comments": {"inline": True, "summaryTemplate": None, "inlineTemplate": None},
    "requireSuggestedFix": False,
    "approve": False,
    "files": ["src/app.py", "docs/guide.md", "assets/logo.png"],
    "ignored": ["vendor/lib.js"],
    "rules": [
        {"id": "no-div-zero", "source": "repository", "rule": "Never divide by a constant zero.\nIt raises.",
         "file": None, "matchedPaths": ["src/app.py"]},
        {"id": "style-guide", "source": "instance", "rule": None, "file": "STYLE.md",
         "matchedPaths": ["src/app.py", "docs/guide.md", "assets/logo.png"]},
    ],
    "context": [{"path": "ARCHITECTURE.md", "description": "How the app is built", "source": "repository",
                 "matchedPaths": ["src/app.py"]}],
    "agentFiles": ["AGENTS.md"],
    "errors": [],
}

FILES = {
    "STYLE.md": "# Keep functions short\n\nAnd name them well.\n",
    "ARCHITECTURE.md": "The app has one entry point, main().\n",
    "AGENTS.md": "Run `make test` before committing.\n",
}


def make_plan(**changes) -> dict:
    plan = copy.deepcopy(BASE_PLAN)
    for key, value in changes.items():
        if key == "comments":
            plan["comments"].update(value)
        else:
            plan[key] = value
    return plan


def finding(**changes) -> dict:
    item = {"path": "src/app.py", "startLine": 24, "endLine": 24, "severity": "blocking",
            "category": "bug", "message": "Division by zero raises ZeroDivisionError."}
    item.update(changes)
    return item


def providers_for(double: ChatDouble, *, api_key: str | None = "env://CHAT_KEY",
                  timeout: float = 10.0) -> dict[str, Provider]:
    return {"local": Provider("local", "openai", double.base_url, api_key, timeout, "instance")}


async def review(double: ChatDouble, session, plan: dict | None = None, *, files=None,
                 reviews=(), timeout: float = 10.0, **kwargs):
    """run_review with the shared inputs; the key comes from the environment mapping given."""
    return await run_review(
        plan if plan is not None else make_plan(),
        files=FILES if files is None else files,
        patches=PATCHES,
        providers=providers_for(double, timeout=timeout),
        session=session,
        head_sha=HEAD,
        app_login=APP_LOGIN,
        reviews=reviews,
        environ={"CHAT_KEY": API_KEY},
        **kwargs,
    )
