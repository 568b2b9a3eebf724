"""The review step of a local change (I/O: the models): the built-in analyzers, then the one call
into the engine (bot.engine.engine.run_review) as the server makes it, with the admin file's
providers and noise budget, the index's context and the lookups the model may ask for; or, when no
model is configured, the analyzers' findings alone as the review (bot.engine.engine.analyzers_review),
as on the server. Shared by `reviewer review` (and its `--post`) and `reviewer eval`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import aiohttp

from bot.config.admin import AdminConfig
from bot.engine.engine import analyzers_review, run_review
from bot.engine.usage import Usage
from bot.local.analyzer_step import analyze_change
from bot.local.change import Change
from bot.reviews.fingerprints import PostedFinding
from bot.reviews.ledger import DEFAULT_BUDGET, Entry, NoiseBudget
from bot.reviews.output import ReviewOutput
from bot.reviews.scope import FULL, ReviewScope

APP_LOGIN = "reviewer[bot]"  # the login a review runs as when nothing is posted: it approves and dismisses nothing


@dataclass(frozen=True)
class Reviewed:
    """What the review of a change came to: its output (None when the plan skips the change), the
    analyzers' entries with their notes, and why no model reviewed it (`skipped`), if none did."""

    output: ReviewOutput | None
    analyzed: tuple[Entry, ...] = ()
    notes: tuple[str, ...] = ()
    skipped: str | None = None


def skip_reason(change: Change, admin: AdminConfig | None) -> str | None:
    """Why no model reviews the change, or None."""
    plan = change.plan
    if plan["decision"] != "review":
        return f"the plan skips it ({plan['skipReason']})"
    if not change.providers:
        if admin is None:
            return "no admin file declares a model provider (--admin-config, or REVIEWER_ADMIN_CONFIG)"
        return "the admin file declares no model provider"
    if not any(plan["models"].values()):
        return "no model is chosen (models.review and models.fallback are unset)"
    return None


def noise_budget(admin: AdminConfig | None, full_name: str | None) -> NoiseBudget:
    """The admin file's `reviews.maxInlineComments` and `inlineSeverityFloor` for the repository."""
    if admin is None:
        return DEFAULT_BUDGET
    limits = admin.review_limits(full_name)
    return NoiseBudget(limits.max_inline_comments, limits.inline_severity_floor)


async def review_change(change: Change, admin: AdminConfig | None, session: aiohttp.ClientSession, usage: Usage,
                        secrets_dir: str | None, *, scope: ReviewScope = FULL, reviews: Iterable[Mapping] = (),
                        app_login: str = APP_LOGIN, posted: Iterable[PostedFinding] = ()) -> Reviewed:
    """The analyzers and the model, as a pull request's review job runs them: nothing when the plan
    skips the change, the analyzers' findings alone when no model is configured. `posted`: what
    the pull request has already (none for a change that is no pull request yet)."""
    if change.plan["decision"] != "review":
        return Reviewed(None, skipped=skip_reason(change, admin))
    analyzed, notes, secrets = await analyze_change(change.repo, change.full_name, change.head_sha, change.plan,
                                                    change.patches, admin, posted)
    noise = noise_budget(admin, change.full_name)
    skipped = skip_reason(change, admin)
    if skipped is not None:
        output = analyzers_review(change.plan, analyzed, head_sha=change.head_sha, app_login=app_login,
                                  reviews=reviews, why=skipped, noise=noise, notes=notes)
        return Reviewed(output, analyzed, notes, skipped)
    walkthrough = admin is None or bool(admin.review_limits(change.full_name).walkthrough)
    output = await run_review(change.plan, files=change.files, patches=change.patches, providers=change.providers,
                              session=session, head_sha=change.head_sha, app_login=app_login, reviews=reviews,
                              secrets_dir=secrets_dir, index=change.index, usage=usage, lookups=change.lookups,
                              scope=scope, walkthrough=walkthrough, analyzers=analyzed, noise=noise,
                              secret_lines=secrets)
    return Reviewed(output, analyzed, notes)
