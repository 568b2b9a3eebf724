"""Budgets at review time: whether an account may send one more review to a model, and what its
reviews spent (the limits: bot.config.budgets; the counts: bot.store.budgets).

The order: the month's tokens are reserved first (a month already past its limit, or whose
limit the reviews running now would pass, refuses without counting anything), then the day's
review is claimed (counted only while under its limit, across processes; refused, the tokens'
reservation is given back). A reservation is an estimate of what one review or one answer may
spend (REVIEW_ESTIMATE, ANSWER_ESTIMATE: every byte its request may hold, four to a token, and
room for the answer); once the model answered (or failed), `settle` replaces it with the prompt and
answer tokens the providers counted. So ten reviews at once cannot each spend a month's last
thousand tokens. The periods are UTC: a day resets at 00:00 UTC, a month at 00:00 UTC on its
first day.
"""

from __future__ import annotations

import logging
import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from bot.config.budgets import BudgetLimits, Limit
from bot.engine import followup
from bot.engine.request import DEFAULT_BUDGETS, Budgets
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


@dataclass(frozen=True, slots=True)
class Reservation:
    """Tokens of an account's month held for one model call until it is settled."""

    account: str
    month: str
    id: str
    tokens: int


BYTES_PER_TOKEN = 4
ANSWER_TOKENS = 16_384  # room for a review's answer (findings, walkthrough)


def estimate(budgets: Budgets) -> int:
    """What one review may spend: every byte its request may hold, and its answer."""
    total = (budgets.diff + budgets.rules + budgets.context + budgets.agent_files + budgets.index
             + budgets.earlier_diff)
    return total // BYTES_PER_TOKEN + ANSWER_TOKENS


REVIEW_ESTIMATE = estimate(DEFAULT_BUDGETS)
ANSWER_ESTIMATE = ((followup.MAX_THREAD_BYTES + followup.MAX_CODE_BYTES + followup.MAX_RULES_BYTES) // BYTES_PER_TOKEN
                   + followup.MAX_ANSWER_CHARS // BYTES_PER_TOKEN)


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


async def admit(store: BudgetStore, limits: BudgetLimits, account: str, now: float | None = None,
                tokens: int = REVIEW_ESTIMATE) -> Exceeded | Reservation | None:
    """When the account may send one more review to a model: the review counted, and its tokens'
    reservation (None without a token budget), to `settle` once the model answered; else the
    budget it would pass (nothing counted, nothing held)."""
    now = time.time() if now is None else now
    day, _ = periods(now)
    held = await reserve(store, limits, account, tokens, now)
    if isinstance(held, Exceeded):
        return held
    reviews = limits.reviews_per_day
    counted = await store.claim_review(account, day, reviews.value if reviews is not None else None)
    if counted is None and reviews is not None:
        if held is not None:
            await store.settle(held.account, held.month, held.id, 0)
        return Exceeded("reviewsPerDay", reviews, reviews.value, day_reset(now), account)
    return held


async def reserve(store: BudgetStore, limits: BudgetLimits, account: str, tokens: int,
                  now: float | None = None) -> Exceeded | Reservation | None:
    """`tokens` of the month held for a model call, or the month's budget it would pass; None
    without a token budget (nothing to hold)."""
    now = time.time() if now is None else now
    budget = limits.tokens_per_month
    if budget is None:
        return None
    _, month = periods(now)
    reservation = Reservation(account, month, uuid.uuid4().hex, tokens)
    spent = await store.reserve(account, month, reservation.id, tokens, budget.value)
    if spent is not None:
        return Exceeded("tokensPerMonth", budget, spent, month_reset(now), account)
    return reservation


async def settle(store: BudgetStore, held: Reservation | None, account: str, usage: Usage) -> None:
    """The tokens a model call spent (prompt and answer, as the providers counted them), in
    place of its reservation."""
    if held is None:
        await spend(store, account, usage)
        return
    await store.settle(held.account, held.month, held.id, usage.prompt_tokens + usage.answer_tokens)


async def spend(store: BudgetStore, account: str, usage: Usage, now: float | None = None) -> None:
    """Adds a review's tokens (prompt and answer, as the providers counted them) to its month."""
    _, month = periods(time.time() if now is None else now)
    await store.add_tokens(account, month, usage.prompt_tokens + usage.answer_tokens)
