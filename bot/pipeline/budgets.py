"""Budgets at review time: whether an account may send one more review to a model, and what its
reviews spent (the limits: bot.config.budgets; the counts: bot.store.budgets).

The order: the month's tokens are read first (a month already past its limit refuses without
counting anything), then the day's review is claimed (counted only while under its limit, across
processes). The answer tokens and prompt tokens of a review that ran are added once it has.
The periods are UTC: a day resets at 00:00 UTC, a month at 00:00 UTC on its first day.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from bot.config.budgets import BudgetLimits, Limit
from bot.engine.usage import Usage
from bot.store.budgets import BudgetStore

logger = logging.getLogger("reviewer.pipeline")


@dataclass(frozen=True, slots=True)
class Exceeded:
    """A budget a review would pass: which (`reviewsPerDay` or `tokensPerMonth`), how much was
    used of it, and when it resets."""

    budget: str
    limit: Limit
    used: int
    resets_at: datetime
    account: str

    @property
    def reason(self) -> str:
        """The review's skip reason (bot.events.jobs.ReviewResult): a stable kebab-case code."""
        return "budget-reviews-per-day" if self.budget == "reviewsPerDay" else "budget-tokens-per-month"


def periods(now: float) -> tuple[str, str]:
    """(`2026-11-27`, `2026-11`): the UTC day and month of `now`, the counts' period keys."""
    moment = datetime.fromtimestamp(now, UTC)
    return moment.strftime("%Y-%m-%d"), moment.strftime("%Y-%m")


def day_reset(now: float) -> datetime:
    moment = datetime.fromtimestamp(now, UTC)
    return datetime(moment.year, moment.month, moment.day, tzinfo=UTC) + timedelta(days=1)


def month_reset(now: float) -> datetime:
    moment = datetime.fromtimestamp(now, UTC)
    return datetime(moment.year + moment.month // 12, moment.month % 12 + 1, 1, tzinfo=UTC)


def account_of(full_name: str) -> str:
    return full_name.split("/", 1)[0].lower()


async def admit(store: BudgetStore, limits: BudgetLimits, account: str,
                now: float | None = None) -> Exceeded | None:
    """None, with the review counted, when the account may send one more review to a model;
    else the budget it would pass (nothing counted)."""
    now = time.time() if now is None else now
    day, _ = periods(now)
    over = await tokens_spent(store, limits, account, now)
    if over is not None:
        return over
    reviews = limits.reviews_per_day
    counted = await store.claim_review(account, day, reviews.value if reviews is not None else None)
    if counted is None and reviews is not None:
        return Exceeded("reviewsPerDay", reviews, reviews.value, day_reset(now), account)
    return None


async def tokens_spent(store: BudgetStore, limits: BudgetLimits, account: str,
                       now: float | None = None) -> Exceeded | None:
    """The month's token budget when the account has spent it (a follow-up answer checks this
    alone: it is no review, and counts none), else None."""
    now = time.time() if now is None else now
    tokens = limits.tokens_per_month
    if tokens is None:
        return None
    day, month = periods(now)
    spent = await store.spent(account, day, month)
    if spent.tokens_this_month < tokens.value:
        return None
    return Exceeded("tokensPerMonth", tokens, spent.tokens_this_month, month_reset(now), account)


async def spend(store: BudgetStore, account: str, usage: Usage, now: float | None = None) -> None:
    """Adds a review's tokens (prompt and answer, as the providers counted them) to its month."""
    _, month = periods(time.time() if now is None else now)
    await store.add_tokens(account, month, usage.prompt_tokens + usage.answer_tokens)
