"""`run_review`: one review of one head commit, from the plan to a `ReviewOutcome`.

The order is the design's: build the request, ask the review model, on a provider error, a timeout
or an unusable answer ask the fallback model, then shape, render, and decide. When no model gives
a usable answer the outcome says the review failed and why (in words without secrets), and nothing
is approved or dismissed. The engine does no GitHub I/O: inputs are plain data, and the outcome
carries the request bodies the poster sends.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import aiohttp

from bot.config.model import Provider
from bot.engine.comments import Comments, render_comments, render_summary_builtin
from bot.engine.lookups import Lookups
from bot.engine.providers import ModelClient, ProviderError, make_client, split_model_ref
from bot.engine.request import DEFAULT_BUDGETS, Budgets, ModelRequest, as_plan_dict, build_request
from bot.engine.split import ANSWER_TOKENS, BYTES_PER_TOKEN, MAX_PARALLEL, context_tokens, diff_room, split_files
from bot.engine.templates import summary_vars
from bot.engine.tool_loop import PROCESS_TOOL_SUPPORT, ToolSupport, reserve
from bot.engine.tool_loop import answer as answer_with_tools
from bot.engine.usage import Usage
from bot.index.retrieve import Retrieval
from bot.learnings.review import ForReview
from bot.reviews import decisions, overlap
from bot.reviews.diff import FilePatch, read_patches
from bot.reviews.findings import FINDINGS_SCHEMA, MAX_FINDINGS, Finding, ParsedAnswer, parse_answer
from bot.reviews.fingerprints import PostedFinding, as_finding, fingerprint, still_standing
from bot.reviews.intent import Intent
from bot.reviews.outcome import SUMMARY_MARKER, Attempt, Counts, ReviewOutcome
from bot.reviews.scope import FULL, ReviewScope
from bot.reviews.shaping import Placed, Shaped, shape
from bot.reviews.walkthrough import read_walkthrough
from bot.reviews.walkthrough import render as render_walkthrough

log = logging.getLogger("reviewer.engine")  # under the server's logger: JSON lines, redacted


@dataclass(frozen=True, slots=True)
class _Answer:
    parsed: ParsedAnswer | None
    model: str | None
    fallback_used: bool
    attempts: tuple[Attempt, ...]


class Models:
    """The providers of one review, one client each, shared by the review and fallback models."""

    def __init__(self, providers: Mapping[str, Provider], session: aiohttp.ClientSession,
                 secrets_dir: str | Path | None, environ: Mapping[str, str] | None,
                 usage: Usage | None = None, lookups: Lookups | None = None,
                 tool_support: ToolSupport = PROCESS_TOOL_SUPPORT) -> None:
        self._providers, self._session = providers, session
        self._secrets_dir, self._environ = secrets_dir, environ
        self._usage = usage
        self._clients: dict[str, ModelClient] = {}
        self._lookups, self._tool_support = lookups, tool_support
        self.notes: list[str] = []  # the lookups each request made, and tools a provider refused

    def client(self, name: str) -> ModelClient:
        if name not in self._clients:
            provider = self._providers.get(name)
            if provider is None:
                raise ProviderError(f"provider {name!r} is not declared by the instance or the account")
            self._clients[name] = make_client(
                provider, self._session, secrets_dir=self._secrets_dir, environ=self._environ, usage=self._usage)
        return self._clients[name]

    async def ask(self, ref: str, request: ModelRequest) -> ParsedAnswer:
        provider, model = split_model_ref(ref)
        client = self.client(provider)
        text = await answer_with_tools(client, self._providers[provider], model, request.messages, FINDINGS_SCHEMA,
                                       lookups=self._lookups, support=self._tool_support, usage=self._usage,
                                       notes=self.notes)
        parsed = parse_answer(text)
        if parsed.error:
            raise ProviderError(f"provider {provider!r}: unusable answer: {parsed.error}")
        return parsed


async def _ask(models: Models, plan: dict, request: ModelRequest) -> _Answer:
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


def _fitted(asked: dict, files: Mapping[str, str], patches: Mapping[str, FilePatch], earlier: list[FilePatch],
            budgets: Budgets, providers: Mapping[str, Provider], index: Retrieval | None = None,
            lookup_room: int = 0, intent: Intent | None = None) -> tuple[list[ModelRequest], tuple[str, ...]]:
    """The requests of one review, each within the smallest context of its models: the plan's
    files shared out among as few requests as fit, every one with the same rules and context,
    and `lookup_room` bytes left free for the answers to the model's lookups."""
    tokens = context_tokens(asked.get("models") or {}, providers)
    budgets, fixed_bytes = _shared_within(asked, files, earlier, index, budgets, tokens, intent)
    room = min(budgets.diff, diff_room(tokens, fixed_bytes + lookup_room))
    groups = split_files(asked.get("files", []), patches, room)
    sized = replace(budgets, diff=room)
    requests = [build_request({**asked, "files": group}, files=files, patches=patches, budgets=sized, earlier=earlier,
                              index=index, intent=intent)
                for group in groups]
    if len(requests) == 1:
        return requests, ()
    return requests, (f"the diff was split into {len(requests)} requests to fit the model's context "
                      f"({tokens} tokens)",)


def _shared_within(asked: dict, files: Mapping[str, str], earlier: list[FilePatch], index: Retrieval | None,
                   budgets: Budgets, tokens: int, intent: Intent | None = None) -> tuple[Budgets, int]:
    """Budgets whose shared parts (rules, context and agent files, linked issues, the earlier diff) leave at least
    half of a request's room to the diff: with a small context, the defaults (over 160 KB) would
    fill every request by themselves. What is cut is named in the request's notes, as any cut is."""
    half = max(1, (tokens - ANSWER_TOKENS) * BYTES_PER_TOKEN // 2)
    for _ in range(3):  # the prompt and plan are not scaled: a second pass settles what the first left
        fixed = build_request({**asked, "files": []}, files=files, patches={}, budgets=budgets, earlier=earlier,
                              index=index, intent=intent)
        size = sum(len(m["content"].encode()) for m in fixed.messages)
        if size <= half:
            break
        scale = half / size
        budgets = replace(budgets, rules=int(budgets.rules * scale), context=int(budgets.context * scale),
                          agent_files=int(budgets.agent_files * scale), intent=int(budgets.intent * scale),
                          earlier_diff=int(budgets.earlier_diff * scale))
    return budgets, size


async def _ask_all(models: Models, plan: dict, requests: list[ModelRequest]) -> _Answer:
    """Every request, at most MAX_PARALLEL at once; their findings merged. One request that no
    model answers fails the review: a review that silently skipped part of the diff would pass."""
    limit = asyncio.Semaphore(MAX_PARALLEL)

    async def one(request: ModelRequest) -> _Answer:
        async with limit:
            return await _ask(models, plan, request)

    answers = await asyncio.gather(*(one(r) for r in requests))
    attempts = tuple(a for answer in answers for a in answer.attempts)
    parsed = [a.parsed for a in answers if a.parsed is not None]
    if len(parsed) < len(answers):
        return _Answer(None, None, False, attempts)
    merged = ParsedAnswer(tuple(f for p in parsed for f in p.findings), sum(p.malformed for p in parsed),
                          sum(p.over_limit for p in parsed), tuple(x for p in parsed for x in p.problems)[:5],
                          walkthrough=tuple(w for p in parsed for w in p.walkthrough))
    used = next((a for a in answers if a.fallback_used), answers[0])
    return _Answer(merged, used.model, any(a.fallback_used for a in answers), attempts)


def _failure_text(attempts: tuple[Attempt, ...]) -> str:
    if not attempts:
        return "no model is configured (models.review and models.fallback are unset)"
    return "no model gave a usable answer: " + "; ".join(f"{a.model}: {a.error}" for a in attempts)


def _common(plan: dict, head_sha: str, answer: _Answer, counts: Counts, notes: Iterable[str],
            status: str, failure: str | None, scope: ReviewScope = FULL) -> dict[str, Any]:
    return {
        "status": status, "failure": failure, "model": answer.model,
        "fallbackUsed": answer.fallback_used, "headSha": head_sha,
        "reviewKind": scope.kind, "reviewedSince": scope.since,
        "feedback": plan.get("feedback", "standard"), "counts": counts.to_json(), "notes": list(notes),
    }


def _unfinished(plan: dict, head_sha: str, status: str, failure: str, answer: _Answer,
                notes: tuple[str, ...], scope: ReviewScope = FULL) -> ReviewOutcome:
    common = _common(plan, head_sha, answer, Counts(), notes, status, failure, scope)
    conclusion, title = decisions.conclusion(status, (), (), failure)
    return ReviewOutcome(
        status=status, head_sha=head_sha, model=None, fallback_used=False, failure=failure,  # type: ignore[arg-type]
        attempts=answer.attempts, inline=(), summary=render_summary_builtin(summary_vars((), common)),
        counts=Counts(), annotations=(),
        decisions=decisions.decide(completed=False, approve=False, head_sha=head_sha, app_login="",
                                   findings=(), reviews=()),
        conclusion=conclusion, title=title, notes=notes, kind=scope.kind,  # type: ignore[arg-type]
    )


def _requested(plan: dict, full: Mapping[str, FilePatch], scope: ReviewScope) -> tuple[dict, dict, list[FilePatch]]:
    """(plan, patches, earlier) of the request: the whole pull request, or for an incremental
    review the plan's files that changed since the last review, with the rest as context."""
    if scope.kind != "incremental":
        return plan, dict(full), []
    increment = read_patches(scope.increment)
    files = [p for p in plan.get("files", []) if p in increment]
    touched = [full[p] for p in files if p in full]  # their whole diff first: the nearest context
    others = [full[p] for p in plan.get("files", []) if p in full and p not in increment]
    return {**plan, "files": files}, increment, [*touched, *others]


def _unposted(shaped: Shaped, patches: Mapping[str, FilePatch], scope: ReviewScope,
              head_sha: str) -> tuple[Shaped, list[Placed], list[PostedFinding]]:
    """Splits what shaping kept into findings to post and findings already posted on the pull
    request (or twice in this answer): a finding is never posted twice."""
    seen = set(scope.fingerprints)
    fresh: list[Placed] = []
    repeated: list[Placed] = []
    prints: list[PostedFinding] = []
    for placed in shaped.posted:
        printed = fingerprint(placed.finding, patches, head_sha)
        if printed.fingerprint in seen:
            repeated.append(placed)
            continue
        seen.add(printed.fingerprint)
        fresh.append(placed)
        prints.append(printed)
    counts = replace(shaped.counts, already_posted=len(repeated))
    return replace(shaped, posted=tuple(fresh), counts=counts), repeated, prints


def _walked_through(comments: Comments, entries: tuple[Any, ...], files: list[str], notes: list[str]) -> Comments:
    """The summary with the walkthrough after its marker; what was left out of it, in the notes."""
    read = read_walkthrough(list(entries) if entries else None, files)
    notes.extend(read.remarks)
    opening = render_walkthrough(read)
    if not opening:
        return comments
    summary = comments.summary
    head, marker, rest = summary.partition(SUMMARY_MARKER)
    summary = f"{head}{marker}\n{opening}\n\n{rest.lstrip(chr(10))}" if marker else f"{opening}\n\n{summary}"
    return replace(comments, summary=summary)


def _carried(scope: ReviewScope, full: Mapping[str, FilePatch], found_again: set[str]) -> list[Finding]:
    """Earlier findings an incremental review could not repeat but which still stand (their code
    is unchanged): they still stop an approval and still fail the check run."""
    if scope.kind != "incremental":
        return []
    changed = {e.get("filename") for e in scope.increment}
    standing = still_standing(scope.posted, full, {c for c in changed if isinstance(c, str)})
    return [as_finding(p) for p in standing if p.fingerprint not in found_again]


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
    scope: ReviewScope = FULL,
    usage: Usage | None = None,
    lookups: Lookups | None = None,
    tool_support: ToolSupport = PROCESS_TOOL_SUPPORT,
    learned: ForReview | None = None,
    walkthrough: bool = False,
    analyzer_findings: Sequence[Finding] = (),
    intent: Intent | None = None,
) -> ReviewOutcome:
    """Review `head_sha` as `plan` says, over `scope` (the whole pull request by default).

    `files`: path → text at the merge base (rule files, context files, agent files, templates).
    `patches`: GitHub's per-file entries (`filename`, `status`, `patch`) of the whole pull request.
    `reviews`: the pull request's reviews as GitHub lists them. `app_login`: the app's bot login
    (`<slug>[bot]`). Findings whose fingerprint `scope.posted` holds are not posted again.
    `index`: what the repository index retrieved for the change (see bot/engine/index_context.py).
    `usage`: when given, every model call of the review is counted in it, with its tokens.
    `lookups`: what the model may look up before it answers (bot/engine/tool_loop.py), offered
    to the providers whose tools `tool_support` (the process's by default) does not know refused.
    `learned`: the repository's learnings: `guide` ones go into the prompt, `suppress` ones leave
    findings out, counted in the notes (bot/learnings/review.py). `walkthrough`: the summary opens
    with the answer's one line per changed file (bot/reviews/walkthrough.py).
    `analyzer_findings`: what the analyzers found at this head (bot/pipeline/analyzers.py), posted
    by them: listed in the prompt, a model finding saying the same at the same lines left out
    (bot/reviews/overlap.py), and counted with the model's in the approval and the conclusion.
    `intent`: the issues the pull request closes, as read (bot/pipeline/intent.py): given to the
    model as the change's intent, and named in the notes, read or not.
    """
    plan = as_plan_dict(plan)
    guided = learned.guidance(plan.get("files") or []) if learned is not None else None
    if guided is not None and guided.section:
        plan = {**plan, "guidance": guided.section}
    no_answer = _Answer(None, None, False, ())
    if plan.get("decision") != "review":
        reason = f"the plan skips this pull request ({plan.get('skipReason') or 'no reason given'})"
        return _unfinished(plan, head_sha, "skipped", reason, no_answer, (), scope)
    file_patches = read_patches(patches)
    linked = intent.note() if intent is not None else None
    index_notes = (*((index.summary(),) if index is not None else ()), *((linked,) if linked else ()))
    asked, asked_patches, earlier = _requested(plan, file_patches, scope)
    if analyzer_findings:
        asked = {**asked, "analyzerFindings": overlap.prompt_section(analyzer_findings)}
    tools_room = reserve(plan.get("models") or {}, providers, tool_support) if lookups is not None else 0
    requests, split_notes = _fitted(asked, files, asked_patches, earlier, budgets, providers, index, tools_room,
                                    intent)
    models = Models(providers, session, secrets_dir, environ, usage, lookups, tool_support)
    if asked.get("files"):
        answer = await _ask_all(models, plan, requests)
    else:  # an increment that touches no file under review: nothing new to ask about
        answer = _Answer(ParsedAnswer(), None, False, ())
    request_notes = (*index_notes, *split_notes, *(n for r in requests for n in r.notes), *models.notes)
    if answer.parsed is None:
        return _unfinished(plan, head_sha, "failed", _failure_text(answer.attempts), answer, request_notes, scope)

    own = tuple(f for f in answer.parsed.findings if not overlap.same_as_analyzer(f, analyzer_findings))
    shaped = shape(own, plan, patches=file_patches, files=files)
    learned_notes = [*(guided.notes if guided is not None else ())]
    if learned is not None:
        kept, left = learned.leave_out(shaped.posted, lambda p: p.finding,
                                       lambda p: fingerprint(p.finding, file_patches).fingerprint)
        shaped = replace(shaped, posted=tuple(kept))
        learned_notes += [left.note] if left.note else []
    shaped, repeated, prints = _unposted(shaped, file_patches, scope, head_sha)
    counts = replace(shaped.counts, malformed=answer.parsed.malformed,
                     over_limit=answer.parsed.over_limit)
    notes = [*request_notes, *learned_notes, *(f"model answer: {p}" for p in answer.parsed.problems)]
    if len(own) < len(answer.parsed.findings):
        notes.append(f"{len(answer.parsed.findings) - len(own)} model finding(s) said what an analyzer said at the "
                     "same lines: posted once, by the analyzer")
    common = _common(plan, head_sha, answer, counts, notes, "completed", None, scope)
    comments = await render_comments(shaped, plan, files=files, common=common, timeout=template_timeout)
    if walkthrough:  # the summary opens with one line per changed file, from this same answer
        comments = _walked_through(comments, answer.parsed.walkthrough, plan.get("files") or [], notes)
    found = [p.finding for p in (*shaped.posted, *repeated)]
    carried = _carried(scope, file_patches, {fingerprint(f, file_patches).fingerprint for f in found})
    if learned is not None:  # an earlier finding a learning now leaves out no longer stands
        carried, _ = learned.leave_out(carried, lambda f: f)
    standing = [*found, *carried, *analyzer_findings]
    log.info("%s review of %s completed with %s: %d posted (%d inline), counts %s", scope.kind, head_sha[:7],
             answer.model, len(shaped.posted), len(comments.inline), counts.to_json())
    conclusion, title = decisions.conclusion("completed", standing, shaped.withheld, None)
    gaps = decisions.gaps(malformed=answer.parsed.malformed, over_limit=answer.parsed.over_limit,
                          unreviewed=[p for r in requests for p in r.unreviewed], max_findings=MAX_FINDINGS)
    decided = decisions.decide(completed=True, approve=bool(plan.get("approve")), head_sha=head_sha,
                               app_login=app_login, findings=[*standing, *shaped.withheld], reviews=reviews, gaps=gaps)
    if any(d.withheld for d in decided):
        title = f"{title}; not approved: the review is incomplete"
    return ReviewOutcome(
        status="completed", head_sha=head_sha, model=answer.model,
        fallback_used=answer.fallback_used, failure=None, attempts=answer.attempts,
        inline=comments.inline, summary=comments.summary, counts=counts,
        annotations=decisions.check_run_annotations(
            (*shaped.posted, *repeated, *(Placed(f, (), False) for f in analyzer_findings))),
        decisions=decided, conclusion=conclusion, title=title,  # type: ignore[arg-type]
        notes=(*notes, *comments.notes), kind=scope.kind, fingerprints=tuple(prints), gaps=gaps,
        findings=tuple(p.finding for p in shaped.posted),
    )
