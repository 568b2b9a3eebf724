"""Budgets of the admin file: reviews a day and tokens a month, for the instance and per account.

`budgets: {reviewsPerDay, tokensPerMonth}` at the top of the admin file applies to every account;
`accounts.<login>.budgets` replaces it key by key for one account. Each limit remembers the key
path that set it, which the check run of a review past it names (docs/configuration.md).
What is counted and when is bot.pipeline.budgets' business; this module only reads the file.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from bot.config.layer import origin_at
from bot.config.model import Origin
from bot.documents.yamldoc import YamlDocument
from bot.shapes import Int, Obj

# The most reviews a day a budget may allow: far past any real day, and well inside the 64-bit
# integers the store compares the day's count with (SQLite refuses a larger parameter outright).
MAX_REVIEWS_PER_DAY = 1_000_000_000

BUDGETS = Obj(
    name="budgets",
    description="What one account may spend on model reviews; a review past a budget is not sent to a model and its "
                "check run is `neutral`, naming the budget and when it resets. At the top level, every account's; "
                "under an account, its own, key by key over the top level's.",
    properties={
        "reviewsPerDay": Int(minimum=0, maximum=MAX_REVIEWS_PER_DAY, description="Reviews sent to a model per UTC day, across every repository of "
                                                    "the account (0: none)."),
        "tokensPerMonth": Int(minimum=0, description="Prompt and answer tokens per calendar month (UTC), as the "
                                                     "providers count them; the review that passes it completes, "
                                                     "the next ones are not sent."),
    },
)

KEYS = ("reviewsPerDay", "tokensPerMonth")


@dataclass(frozen=True, slots=True)
class Limit:
    """One budget: its value and where the admin file sets it."""

    value: int
    key_path: str  # `budgets.reviewsPerDay` or `accounts.<login>.budgets.reviewsPerDay`
    origin: Origin


@dataclass(frozen=True, slots=True)
class BudgetLimits:
    reviews_per_day: Limit | None = None
    tokens_per_month: Limit | None = None

    def over(self, other: BudgetLimits) -> BudgetLimits:
        """`other`'s limits where it sets them, else these (an account's over the instance's)."""
        return BudgetLimits(other.reviews_per_day or self.reviews_per_day,
                            other.tokens_per_month or self.tokens_per_month)

    @property
    def any(self) -> bool:
        return self.reviews_per_day is not None or self.tokens_per_month is not None


def read_budgets(data: Any, doc: YamlDocument | None, path: str, pointer: str, key_path: str) -> BudgetLimits:
    """The limits of a (validated) `budgets` mapping at `pointer`, `key_path` its dotted name."""
    if not isinstance(data, Mapping) or doc is None:
        return BudgetLimits()

    def limit(key: str) -> Limit | None:
        if key not in data:
            return None
        return Limit(int(data[key]), f"{key_path}.{key}", origin_at(doc, path, f"{pointer}/{key}"))

    return BudgetLimits(limit("reviewsPerDay"), limit("tokensPerMonth"))
