"""The review step of a local change (I/O: the models): the built-in analyzers, then the one call
into the engine (bot.engine.engine.run_review) as the server makes it, with the admin file's
providers, the index's context and the lookups the model may ask for. Shared by `reviewer review`
and `reviewer eval`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import aiohttp

from bot.analyzers.findings import AnalyzerFinding
from bot.config.admin import AdminConfig
from bot.engine.engine import run_review
from bot.engine.usage import Usage
from bot.local.analyzers import analyze_change
from bot.local.change import Change
from bot.reviews.outcome import ReviewOutcome
from bot.reviews.scope import FULL, ReviewScope

APP_LOGIN = "reviewer[bot]"  # the login a review runs as when nothing is posted: it approves and dismisses nothing


@dataclass(frozen=True)
class Reviewed:
    """What the review of a change came to: the model's outcome (None when no model was asked:
    `skipped` says why) and the analyzers' findings, with their notes."""

    outcome: ReviewOutcome | None
    analyzed: tuple[AnalyzerFinding, ...] = ()
    notes: tuple[str, ...] = ()
    skipped: str | None = None


def skip_reason(change: Change) -> str | None:
    """Why no model reviews the change, or None."""
    plan = change.plan
    if plan["decision"] != "review":
        return f"the plan skips it ({plan['skipReason']})"
    if not change.providers:
        return "the admin file declares no model provider"
    if not any(plan["models"].values()):
        return "no model is chosen (models.review and models.fallback are unset)"
    return None


async def model_review(change: Change, session: aiohttp.ClientSession, usage: Usage, secrets_dir: str | None,
                       analyzed: Iterable[AnalyzerFinding] = (), *, scope: ReviewScope = FULL,
                       reviews: Iterable[Mapping] = (), app_login: str = APP_LOGIN,
                       walkthrough: bool = False) -> ReviewOutcome:
    """The one call into the engine, as the server makes it."""
    return await run_review(change.plan, files=change.files, patches=change.patches, providers=change.providers,
                            session=session, head_sha=change.head_sha, app_login=app_login, reviews=reviews,
                            secrets_dir=secrets_dir, index=change.index, usage=usage, lookups=change.lookups,
                            scope=scope, walkthrough=walkthrough,
                            analyzer_findings=tuple(f.to_finding() for f in analyzed))


async def review_change(change: Change, admin: AdminConfig | None, session: aiohttp.ClientSession, usage: Usage,
                        secrets_dir: str | None, *, scope: ReviewScope = FULL, reviews: Iterable[Mapping] = (),
                        app_login: str = APP_LOGIN) -> Reviewed:
    """The analyzers and the model, as a pull request's review job runs them: nothing when the plan
    skips the change, the analyzers alone when no model is configured."""
    if change.plan["decision"] != "review":
        return Reviewed(None, skipped=skip_reason(change))
    analyzed, notes = await analyze_change(change.repo, change.full_name, change.head_sha, change.plan,
                                           change.patches, admin)
    skipped = skip_reason(change)
    if skipped is not None:
        if admin is None and not change.providers:
            skipped = "no admin file declares a model provider (--admin-config, or REVIEWER_ADMIN_CONFIG)"
        return Reviewed(None, analyzed, notes, skipped)
    walkthrough = admin is None or bool(admin.review_limits(change.full_name).walkthrough)
    outcome = await model_review(change, session, usage, secrets_dir, analyzed, scope=scope, reviews=reviews,
                                 app_login=app_login, walkthrough=walkthrough)
    return Reviewed(outcome, analyzed, notes)
