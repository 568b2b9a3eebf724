"""The check run of a review past a budget: `neutral`, naming the budget, its reset and who sets it.

Pure, like bot.reviews.checkrun, whose plan report it builds on: the plan still ran, and is shown.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from bot.reviews.checkrun import CheckRunReport, report_for_plan

NAMES = {"reviewsPerDay": ("reviews a day", "the start of the next UTC day"),
         "tokensPerMonth": ("tokens a month", "the first day of the next month, 00:00 UTC")}


def report_for_budget(plan: Mapping[str, Any], budget: str, limit: int, used: int, resets_at: datetime,
                      key_path: str, line: int, account: str) -> CheckRunReport:
    noun, when = NAMES[budget]
    base = report_for_plan(plan)
    reset = resets_at.strftime("%Y-%m-%d %H:%M UTC")
    title = f"Not reviewed: the account's budget of {limit:,} {noun} is spent"
    lead = [
        f"This pull request was not sent to a model: the account `{account}` has used {used:,} of its "
        f"{limit:,} {noun} (`{budget}`).",
        "",
        f"- **Resets:** {reset} ({when}); a review asked for after that runs as usual "
        "(push a commit, or re-run this check).",
        f"- **Set by:** the instance's administrator, in the admin file at `{key_path}` (line {line}).",
        "",
        "The plan below still ran.",
    ]
    return CheckRunReport("neutral", title, "\n".join(lead) + "\n\n" + base.summary, base.text,
                          base.annotations)


def answer_for_budget(budget: str, limit: int, resets_at: datetime, key_path: str) -> str:
    """A follow-up's reply when the account's month of tokens is spent: no model was asked."""
    noun, _ = NAMES[budget]
    return (f"I cannot answer right now: this account's budget of {limit:,} {noun} is spent. It resets at "
            f"{resets_at.strftime('%Y-%m-%d %H:%M UTC')}; the administrator sets it in the admin file at "
            f"`{key_path}`.")
