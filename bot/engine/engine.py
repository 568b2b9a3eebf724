"""`run_review`: one review of one head commit, from the plan to a `ReviewOutcome`.

The order is the design's: build the request, ask the review model, on a provider error, a timeout
or an unusable answer ask the fallback model, then shape, render, and decide. When no model gives
a usable answer the outcome says the review failed and why (in words without secrets), and nothing
is approved or dismissed. The engine does no GitHub I/O: inputs are plain data, and the outcome
carries the request bodies the poster sends.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import aiohttp

from bot.config.model import Provider
from bot.engine import decisions
from bot.engine.comments import render_comments, render_summary_builtin
from bot.engine.diff import read_patches
from bot.engine.findings import FINDINGS_SCHEMA, ParsedAnswer, parse_answer
from bot.engine.outcome import Attempt, Counts, ReviewOutcome
from bot.engine.providers import ModelClient, ProviderError, make_client, split_model_ref
from bot.engine.request import DEFAULT_BUDGETS, Budgets, ModelRequest, as_plan_dict, build_request
from bot.engine.shaping import shape
from bot.engine.templates import summary_vars
from bot.index.retrieve import Retrieval

log = logging.getLogger("reviewer.engine")  # under the server's logger: JSON lines, redacted


@dataclass(frozen=True, slots=True)
class _Answer:
    parsed: ParsedAnswer | None
    model: str | None
    fallback_used: bool
    attempts: tuple[Attempt, ...]


class _Models:
    """The providers of one review, one client each, shared by the review and fallback models."""

    def __init__(self, providers: Mapping[str, Provider], session: aiohttp.ClientSession,
                 secrets_dir: str | Path | None, environ: Mapping[str, str] | None) -> None:
        self._providers, self._session = providers, session
        self._secrets_dir, self._environ = secrets_dir, environ
        self._clients: dict[str, ModelClient] = {}

    def client(self, name: str) -> ModelClient:
        if name not in self._clients:
            provider = self._providers.get(name)
            if provider is None:
                raise ProviderError(f"provider {name!r} is not declared by the instance or the account")
            self._clients[name] = make_client(
                provider, self._session, secrets_dir=self._secrets_dir, environ=self._environ)
        return self._clients[name]

    async def ask(self, ref: str, request: ModelRequest) -> ParsedAnswer:
        provider, model = split_model_ref(ref)
        text = await self.client(provider).complete(model, request.messages, FINDINGS_SCHEMA)
        parsed = parse_answer(text)
        if parsed.error:
            raise ProviderError(f"provider {provider!r}: unusable answer: {parsed.error}")
        return parsed


async def _ask(models: _Models, plan: dict, request: ModelRequest) -> _Answer:
    chosen = plan.get("models") or {}
    candidates = [(chosen.get("review"), False), (chosen.get("fallback"), True)]
    attempts: list[Attempt] = []
    for ref, is_fallback in candidates:
        if not ref:
            continue
        try:
            parsed = await models.ask(ref, request)
        except ProviderError as exc:
            log.warning("model %s gave no usable answer: %s", ref, exc)
            attempts.append(Attempt(ref, str(exc)))
            continue
        attempts.append(Attempt(ref, None))
        return _Answer(parsed, ref, is_fallback, tuple(attempts))
    return _Answer(None, None, False, tuple(attempts))


def _failure_text(attempts: tuple[Attempt, ...]) -> str:
    if not attempts:
        return "no model is configured (models.review and models.fallback are unset)"
    return "no model gave a usable answer: " + "; ".join(f"{a.model}: {a.error}" for a in attempts)


def _common(plan: dict, head_sha: str, answer: _Answer, counts: Counts, notes: Iterable[str],
            status: str, failure: str | None) -> dict[str, Any]:
    return {
        "status": status, "failure": failure, "model": answer.model,
        "fallbackUsed": answer.fallback_used, "headSha": head_sha,
        "feedback": plan.get("feedback", "standard"), "counts": counts.to_json(), "notes": list(notes),
    }


def _unfinished(plan: dict, head_sha: str, status: str, failure: str, answer: _Answer,
                notes: tuple[str, ...]) -> ReviewOutcome:
    common = _common(plan, head_sha, answer, Counts(), notes, status, failure)
    conclusion, title = decisions.conclusion(status, (), (), failure)
    return ReviewOutcome(
        status=status, head_sha=head_sha, model=None, fallback_used=False, failure=failure,  # type: ignore[arg-type]
        attempts=answer.attempts, inline=(), summary=render_summary_builtin(summary_vars((), common)),
        counts=Counts(), annotations=(),
        decisions=decisions.decide(completed=False, approve=False, head_sha=head_sha, app_login="",
                                   findings=(), reviews=()),
        conclusion=conclusion, title=title, notes=notes,  # type: ignore[arg-type]
    )


async def run_review(
    plan: Any,
    *,
    files: Mapping[str, str],
    patches: Iterable[Mapping],
    providers: Mapping[str, Provider],
    session: aiohttp.ClientSession,
    head_sha: str,
    app_login: str,
    reviews: Iterable[Mapping] = (),
    secrets_dir: str | Path | None = None,
    environ: Mapping[str, str] | None = None,
    budgets: Budgets = DEFAULT_BUDGETS,
    template_timeout: float = 5.0,
    index: Retrieval | None = None,
) -> ReviewOutcome:
    """Review `head_sha` as `plan` says.

    `files`: path → text at the merge base (rule files, context files, agent files, templates).
    `patches`: GitHub's per-file entries (`filename`, `status`, `patch`). `reviews`: the pull
    request's reviews as GitHub lists them. `app_login`: the app's bot login (`<slug>[bot]`).
    `index`: what the repository index retrieved for the change (see bot/engine/index_context.py).
    """
    plan = as_plan_dict(plan)
    no_answer = _Answer(None, None, False, ())
    if plan.get("decision") != "review":
        reason = f"the plan skips this pull request ({plan.get('skipReason') or 'no reason given'})"
        return _unfinished(plan, head_sha, "skipped", reason, no_answer, ())
    file_patches = read_patches(patches)
    request = build_request(plan, files=files, patches=file_patches, budgets=budgets, index=index)
    index_notes = (index.summary(),) if index is not None else ()
    answer = await _ask(_Models(providers, session, secrets_dir, environ), plan, request)
    if answer.parsed is None:
        return _unfinished(plan, head_sha, "failed", _failure_text(answer.attempts), answer,
                           (*index_notes, *request.notes))

    shaped = shape(answer.parsed.findings, plan, patches=file_patches, files=files)
    counts = replace(shaped.counts, malformed=answer.parsed.malformed,
                     over_limit=answer.parsed.over_limit)
    notes = [*index_notes, *request.notes, *(f"model answer: {p}" for p in answer.parsed.problems)]
    common = _common(plan, head_sha, answer, counts, notes, "completed", None)
    comments = await render_comments(shaped, plan, files=files, common=common, timeout=template_timeout)
    found = [p.finding for p in shaped.posted]
    log.info("review of %s completed with %s: %d posted (%d inline), counts %s", head_sha[:7],
             answer.model, len(found), len(comments.inline), counts.to_json())
    conclusion, title = decisions.conclusion("completed", found, shaped.withheld, None)
    return ReviewOutcome(
        status="completed", head_sha=head_sha, model=answer.model,
        fallback_used=answer.fallback_used, failure=None, attempts=answer.attempts,
        inline=comments.inline, summary=comments.summary, counts=counts,
        annotations=decisions.check_run_annotations(shaped.posted),
        decisions=decisions.decide(
            completed=True, approve=bool(plan.get("approve")), head_sha=head_sha,
            app_login=app_login, findings=[*found, *shaped.withheld], reviews=reviews),
        conclusion=conclusion, title=title,  # type: ignore[arg-type]
        notes=(*notes, *comments.notes),
    )
