"""`run_review`: one review of one head commit, from the plan to a `ReviewOutput`.

The steps, in order: what the model is asked (the plan's files, or for an incremental review
those changed since; the analyzers' findings; the team's learnings), the requests fitted to the
models' context, the answer (the review model, then the fallback model: bot/engine/asking.py), the
model's findings as entries of the head's ledger (shaped, left out by learnings, told apart from
those posted before, with the earlier ones that still stand), the ledger of every source
(bot/reviews/ledger.py), and what is written from it: the comments, the review's body, the check
run's conclusion and title, the approval. When no model gives a usable answer the output says
the review failed and why (in words without secrets), and nothing is approved or dismissed.

`analyzers_review` writes the same from the analyzers' findings alone, when no model reviews (none
configured, or the account's budget spent). The engine does no GitHub I/O: inputs are plain data,
and the output carries the request bodies the poster sends.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import aiohttp

from bot.config.model import Provider
from bot.engine.asking import NO_ANSWER, NOTHING_ASKED, Answer, Models, ask_all, failure_text, fitted, review_cost
from bot.engine.comments import Comments, render_comments, render_summary_builtin
from bot.engine.lookups import Lookups
from bot.engine.request import DEFAULT_BUDGETS, Budgets, ModelRequest, as_plan_dict
from bot.engine.templates import summary_vars
from bot.engine.tool_loop import PROCESS_TOOL_SUPPORT, ToolSupport, reserve
from bot.engine.usage import Usage
from bot.engine.verify import verify
from bot.index.retrieve import Retrieval
from bot.learnings.review import ForReview
from bot.reviews import decisions, overlap
from bot.reviews.diff import FilePatch, read_patches
from bot.reviews.findings import MAX_FINDINGS, ParsedAnswer
from bot.reviews.fingerprints import fingerprint, still_standing
from bot.reviews.intent import Intent
from bot.reviews.ledger import (
    DEFAULT_BUDGET,
    MODEL,
    Entry,
    Ledger,
    NoiseBudget,
    build,
    carried_entry,
    model_entry,
    verdict,
    withheld_entry,
)
from bot.reviews.output import SUMMARY_MARKER, InlineComment, LeftOut, ReviewOutput
from bot.reviews.scope import FULL, ReviewScope
from bot.reviews.secret_lines import NO_SECRETS, SecretLines
from bot.reviews.shaping import Counts, Placed, shape_findings
from bot.reviews.verdict import Verification
from bot.reviews.voice import review_body
from bot.reviews.walkthrough import read_walkthrough
from bot.reviews.walkthrough import render as render_walkthrough

log = logging.getLogger("reviewer.engine")  # under the server's logger: JSON lines, redacted

@dataclass(frozen=True)
class _Asked:
    """What the model is asked about: the plan (with the team's guidance), the request's plan and
    diff (for an incremental review, the files changed since), and the diff shown as context."""

    plan: dict
    request_plan: dict
    patches: dict[str, FilePatch]  # the whole pull request's diff, by path
    request_patches: dict[str, FilePatch]
    earlier: list[FilePatch]
    notes: tuple[str, ...]  # the learnings' guidance left out for its budget


@dataclass(frozen=True)
class _ModelFound:
    """The model's findings as entries of the ledger, what shaping held back, and notes."""

    entries: tuple[Entry, ...]
    counts: Counts
    notes: tuple[str, ...]


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
    analyzers: Sequence[Entry] = (),
    noise: NoiseBudget = DEFAULT_BUDGET,
    intent: Intent | None = None,
    secret_lines: SecretLines = NO_SECRETS,
) -> ReviewOutput:
    """Review `head_sha` as `plan` says, over `scope` (the whole pull request by default).

    `files`: path → text at the merge base (rule files, context files, agent files, templates).
    `patches`: GitHub's per-file entries (`filename`, `status`, `patch`) of the whole pull request.
    `reviews`: the pull request's reviews as GitHub lists them. `app_login`: the app's bot login
    (`<slug>[bot]`). Findings whose fingerprint `scope.posted` holds are not posted again.
    `index`: what the repository index retrieved for the change (see bot/engine/index_context.py).
    `usage`: every model call of the review is counted in it, with its tokens (the output's `cost`).
    `lookups`: what the model may look up before it answers (bot/engine/tool_loop.py), offered
    to the providers whose tools `tool_support` (the process's by default) does not know refused.
    `learned`: the repository's learnings: `guide` ones go into the prompt, `suppress` ones leave
    findings out, counted in the notes (bot/learnings/review.py). `walkthrough`: the summary opens
    with the answer's one line per changed file (bot/reviews/walkthrough.py).
    `analyzers`: the analyzers' entries of this head's ledger (bot/analyzers/feed.py): listed in the
    prompt, a model finding saying the same at the same lines left out (bot/reviews/overlap.py),
    and posted in the same review. `noise`: the inline comments one review posts, every source.
    `intent`: the issues the pull request closes, as read (bot/pipeline/intent.py): given to the
    model as the change's intent, and named in the notes, read or not.
    `secret_lines`: the lines the secret scanner flagged: a model finding on one gets no
    suggestion, and what is fingerprinted and kept of a finding leaves them out
    (bot/reviews/secret_lines.py).
    """
    plan = as_plan_dict(plan)
    usage = usage if usage is not None else Usage()
    if plan.get("decision") != "review":
        reason = f"the plan skips this pull request ({plan.get('skipReason') or 'no reason given'})"
        return _unfinished(plan, head_sha, "skipped", reason, NO_ANSWER, (), scope)
    # 1. What the model is asked, fitted to the models' context, and its answer.
    asked = _asked(plan, patches, scope, analyzers, learned)
    models = Models(providers, session, secrets_dir, environ, usage, lookups, tool_support)
    tools_room = reserve(plan.get("models") or {}, providers, tool_support) if lookups is not None else 0
    answered = await _answered(asked, models, providers, files, budgets, index, intent, tools_room)
    if answered.answer.parsed is None:
        failure = failure_text(answered.answer.attempts)
        return replace(_unfinished(plan, head_sha, "failed", failure, answered.answer, answered.notes, scope),
                       cost=review_cost(usage, providers))
    # 2. Its findings as the head's ledger entries, checked again where the provider asks for it.
    found = _model_found(answered.answer.parsed, asked, files, learned, scope, analyzers, secret_lines)
    verification = None
    if answered.answer.model is not None and _verifies(providers, answered.answer.model):
        found, verification = await _verified(found, models, answered.answer.model, asked.patches, intent)
    # 3. One ledger of every source, and what the pull request shows of it.
    ledger = build(head_sha, [*found.entries, *analyzers], noise)
    log.info("%s review of %s completed with %s: %d finding(s) stand, %d posted (%d inline)", scope.kind,
             head_sha[:7], answered.answer.model, len(ledger.entries), len(ledger.posting), len(ledger.inline))
    written = await _review_written(answered, found, ledger, plan, files, head_sha, app_login, reviews, scope,
                                    walkthrough, template_timeout)
    return replace(written, cost=review_cost(usage, providers), verification=verification)


@dataclass(frozen=True)
class _Answered:
    """The requests sent, the answer used, and the notes so far (the index's summary, the linked
    issues, how the diff was split, what each request and model said)."""

    requests: tuple[ModelRequest, ...]
    answer: Answer
    notes: tuple[str, ...]


async def _answered(asked: _Asked, models: Models, providers: Mapping[str, Provider], files: Mapping[str, str],
                    budgets: Budgets, index: Retrieval | None, intent: Intent | None, tools_room: int) -> _Answered:
    """The requests, fitted to the models' context with `tools_room` kept for lookups, asked of the
    review model then the fallback (bot/engine/asking.py); nothing is asked when no file is to be read."""
    requests, split_notes = fitted(asked.request_plan, files, asked.request_patches, asked.earlier, budgets,
                                   providers, index, tools_room, intent)
    answer = await ask_all(models, asked.plan, requests) if asked.request_plan.get("files") else NOTHING_ASKED
    linked = intent.note() if intent is not None else None
    notes = (*((index.summary(),) if index is not None else ()), *((linked,) if linked else ()), *split_notes,
             *(n for r in requests for n in r.notes), *models.notes)
    return _Answered(tuple(requests), answer, notes)


async def _review_written(answered: _Answered, found: _ModelFound, ledger: Ledger, plan: dict,
                          files: Mapping[str, str], head_sha: str, app_login: str, reviews: Iterable[Mapping],
                          scope: ReviewScope, walkthrough: bool, template_timeout: float) -> ReviewOutput:
    """The completed review's output: comments rendered from the ledger's postings (the summary
    opening with the walkthrough when asked), the check run, the approval and the notes."""
    answer, requests = answered.answer, answered.requests
    assert answer.parsed is not None  # a review without a usable answer ended as failed
    gaps = decisions.gaps(malformed=answer.parsed.malformed, over_limit=answer.parsed.over_limit,
                          unreviewed=[p for r in requests for p in r.unreviewed], max_findings=MAX_FINDINGS)
    common = _common(plan, head_sha, answer, found.counts, [*answered.notes, *found.notes, *ledger.notes], scope,
                     ledger)
    comments = await render_comments(ledger.posting, plan, files=files, common=common, timeout=template_timeout)
    if walkthrough:  # the summary opens with one line per changed file, from this same answer
        comments = _walked_through(comments, answer.parsed.walkthrough, plan.get("files") or [], common["notes"])
    written = _written(ledger, comments, plan, head_sha, app_login, reviews, gaps=gaps)
    return replace(written, model=answer.model, fallback_used=answer.fallback_used, attempts=answer.attempts,
                   counts=found.counts, notes=(*common["notes"], *comments.notes), kind=scope.kind,
                   left_out=_left_out(plan, requests))


def analyzers_review(plan: Any, analyzers: Sequence[Entry], *, head_sha: str, app_login: str,
                           reviews: Iterable[Mapping], why: str, noise: NoiseBudget = DEFAULT_BUDGET,
                           held_by_budget: bool = False, notes: Sequence[str] = ()) -> ReviewOutput:
    """The review when no model reviews (`why`: none configured, or a budget spent): the analyzers'
    findings are the review. They fail the check run and dismiss the app's approval as a model's
    would; the app never approves on analyzers alone (no one read the change). A review a budget
    held is `neutral` unless a blocking finding fails it."""
    plan = as_plan_dict(plan)
    ledger = build(head_sha, analyzers, noise)
    common = {**_common(plan, head_sha, NO_ANSWER, Counts(), [*notes, *ledger.notes], FULL, ledger), "noModel": why}
    summary = render_summary_builtin(summary_vars(ledger.posting, common))
    inline = tuple(InlineComment(e.finding.path, e.finding.end_line, e.comment or e.finding.message,
                                 start_line=e.finding.start_line if e.finding.start_line != e.finding.end_line else None)
                   for e in ledger.inline)  # an analyzer's comment is rendered by its source (bot/analyzers/feed.py)
    written = _written(ledger, Comments(inline, summary, ()), {**plan, "approve": False}, head_sha, app_login,
                       reviews, held_by_budget=held_by_budget)
    return replace(written, notes=tuple(common["notes"]), left_out=_left_out(plan, ()))


def _asked(plan: dict, patches: Iterable[Mapping], scope: ReviewScope, analyzers: Sequence[Entry],
           learned: ForReview | None) -> _Asked:
    """What the model is asked: the whole pull request, or for an incremental review the plan's
    files that changed since the last review, with the rest as context; the analyzers' findings
    (posted already: not to repeat) and the team's guidance in the prompt."""
    guided = learned.guidance(plan.get("files") or []) if learned is not None else None
    if guided is not None and guided.section:
        plan = {**plan, "guidance": guided.section}
    full = read_patches(patches)
    request_plan, request_patches, earlier = plan, dict(full), []
    if scope.kind == "incremental":
        increment = read_patches(scope.increment)
        files = [p for p in plan.get("files", []) if p in increment]
        touched = [full[p] for p in files if p in full]  # their whole diff first: the nearest context
        others = [full[p] for p in plan.get("files", []) if p in full and p not in increment]
        request_plan, request_patches, earlier = {**plan, "files": files}, increment, [*touched, *others]
    if analyzers:
        request_plan = {**request_plan, "analyzerFindings": overlap.prompt_section([e.finding for e in analyzers])}
    return _Asked(plan, request_plan, full, request_patches, earlier, guided.notes if guided is not None else ())


def _model_found(parsed: ParsedAnswer, asked: _Asked, files: Mapping[str, str], learned: ForReview | None,
                 scope: ReviewScope, analyzers: Sequence[Entry], secret_lines: SecretLines = NO_SECRETS) -> _ModelFound:
    """The model's findings as the ledger's entries: shaped by the configuration, less what an
    analyzer says at the same lines and what a learning leaves out; new, posted before, withheld
    for lacking a fix, or carried from an earlier head (an incremental review). A finding on a line
    holding a secret has no suggestion, and is fingerprinted and kept without that line."""
    own = tuple(secret_lines.without_fixes(f for f in parsed.findings
                                           if not overlap.same_as_analyzer(f, [e.finding for e in analyzers])))
    shaped = shape_findings(own, asked.plan, patches=asked.patches, files=files)
    patches = secret_lines.blanked(asked.patches)
    notes = [*asked.notes]
    kept: Sequence[Placed] = shaped.posted
    if learned is not None:
        kept, left = learned.leave_out(shaped.posted, lambda p: p.finding,
                                       lambda p: fingerprint(p.finding, patches).fingerprint)
        notes += [left.note] if left.note else []
    found = _found_once(kept, patches, scope)
    entries = [*found, *(withheld_entry(f, patches) for f in shaped.withheld)]
    entries += _carried(scope, patches, {e.fingerprint for e in entries}, learned)
    dismissed = [e for e in entries if e.fingerprint in scope.dismissed]
    if dismissed:
        entries = [e for e in entries if e.fingerprint not in scope.dismissed]
        notes.append(f"{len(dismissed)} finding(s) people dismissed on this pull request are not counted again")
    counts = replace(shaped.counts, malformed=parsed.malformed, over_limit=parsed.over_limit,
                     already_posted=sum(e.posted_before for e in found))
    notes += [f"model answer: {p}" for p in parsed.problems]
    if len(own) < len(parsed.findings):
        notes.append(f"{len(parsed.findings) - len(own)} model finding(s) said what an analyzer said at the "
                     "same lines: posted once, by the analyzer")
    return _ModelFound(tuple(entries), counts, tuple(notes))


def _verifies(providers: Mapping[str, Provider], ref: str) -> bool:
    """Whether the provider of the model whose answer is used says `verify: true`."""
    provider = providers.get(ref.partition("/")[0])
    return provider is not None and provider.verify


async def _verified(found: _ModelFound, models: Models, ref: str, patches: Mapping[str, FilePatch],
                    intent: Intent | None) -> tuple[_ModelFound, Verification]:
    """The model's findings after a second look (bot/engine/verify.py): the new ones at this head
    are checked (those posted before were checked then, those carried are not this answer's), and
    a finding refuted with the lines the verifier read is not posted, nor counted anywhere."""
    fresh = [e for e in found.entries if e.source == MODEL and not e.posted_before and not e.carried]
    verification = await verify(models, ref, [e.finding for e in fresh], patches, intent)
    refuted = {id(r.finding) for r in verification.refuted}
    entries = tuple(e for e in found.entries if id(e.finding) not in refuted)
    note = verification.note()
    return replace(found, entries=entries, counts=replace(found.counts, refuted=len(verification.refuted)),
                   notes=(*found.notes, *((note,) if note else ()))), verification


def _found_once(kept: Sequence[Placed], patches: Mapping[str, FilePatch], scope: ReviewScope) -> list[Entry]:
    """Each finding of the answer once (a second equal one is dropped), marked posted before when
    the pull request has its fingerprint already: a finding is never posted twice."""
    seen: set[str] = set()
    out = []
    for placed in kept:
        entry = model_entry(placed, patches)
        if entry.fingerprint in seen:
            continue
        seen.add(entry.fingerprint)
        out.append(replace(entry, posted_before=True, inline=False) if entry.fingerprint in scope.fingerprints
                   else entry)
    return out


def _carried(scope: ReviewScope, patches: Mapping[str, FilePatch], found_again: set[str],
             learned: ForReview | None) -> list[Entry]:
    """The model's earlier findings this review did not make again but which still stand (their
    code is unchanged): an incremental review was not shown them, and a full one's silence does not
    fix them. They still stop an approval and still fail the check run, until a push changes their
    code or people dismiss them. The analyzers run on the whole pull request at every head: theirs
    are found again or not at all."""
    changed = {e.get("filename") for e in scope.increment}
    earlier = [p for p in scope.posted if p.source == "model"]
    standing = still_standing(earlier, patches, {c for c in changed if isinstance(c, str)})
    carried = [carried_entry(p) for p in standing if p.fingerprint not in found_again]
    if learned is not None:  # an earlier finding a learning now leaves out no longer stands
        carried, _ = learned.leave_out(carried, lambda e: e.finding)
    return list(carried)


def _written(ledger: Ledger, comments: Comments, plan: dict, head_sha: str, app_login: str,
             reviews: Iterable[Mapping], *, gaps: tuple[str, ...] = (), held_by_budget: bool = False) -> ReviewOutput:
    """What the pull request shows of a completed review, every number read from the ledger: the
    check run's conclusion and title, the approval (the findings on the diff decide), the one
    review's body and comments, the annotations (every finding with its lines at this head)."""
    conclusion, title = verdict(ledger, held_by_budget=held_by_budget)
    decided = decisions.decide(completed=True, approve=bool(plan.get("approve")), head_sha=head_sha,
                               app_login=app_login, findings=[e.finding for e in ledger.deciding], reviews=reviews,
                               gaps=gaps)
    if any(d.withheld for d in decided):
        title = f"{title}; not approved: the review is incomplete"
    annotated = [e for e in ledger.entries if not e.carried]
    return ReviewOutput(
        status="completed", head_sha=head_sha, model=None, fallback_used=False, failure=None, attempts=(),
        inline=comments.inline, summary=comments.summary, counts=Counts(),
        annotations=decisions.check_run_annotations(annotated), decisions=decided,
        conclusion=conclusion, title=title,  # type: ignore[arg-type]
        gaps=gaps, ledger=ledger, review_body=review_body(ledger),
    )


def _common(plan: dict, head_sha: str, answer: Answer, counts: Counts, notes: Iterable[str],
            scope: ReviewScope, ledger: Ledger, status: str = "completed", failure: str | None = None) -> dict[str, Any]:
    """The variables every template sees (docs/reviews.md "Templates")."""
    return {
        "status": status, "failure": failure, "model": answer.model,
        "fallbackUsed": answer.fallback_used, "headSha": head_sha,
        "reviewKind": scope.kind, "reviewedSince": scope.since,
        "feedback": plan.get("feedback", "standard"), "counts": counts.to_json(), "notes": list(notes),
        "standing": ledger.standing().to_json(), "noModel": None,
    }


def _unfinished(plan: dict, head_sha: str, status: str, failure: str, answer: Answer,
                notes: tuple[str, ...], scope: ReviewScope = FULL) -> ReviewOutput:
    common = _common(plan, head_sha, answer, Counts(), notes, scope, Ledger(head_sha), status, failure)
    conclusion, title = decisions.conclusion(status, (), (), failure)
    return ReviewOutput(
        status=status, head_sha=head_sha, model=None, fallback_used=False, failure=failure,  # type: ignore[arg-type]
        attempts=answer.attempts, inline=(), summary=render_summary_builtin(summary_vars((), common)),
        counts=Counts(), annotations=(),
        decisions=decisions.decide(completed=False, approve=False, head_sha=head_sha, app_login="",
                                   findings=(), reviews=()),
        conclusion=conclusion, title=title, notes=notes, kind=scope.kind,  # type: ignore[arg-type]
    )


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


def _left_out(plan: dict, requests: Sequence[ModelRequest]) -> tuple[LeftOut, ...]:
    """Every changed file the review did not read whole, by name: ignored by the configuration,
    without a textual diff, or cut for the diff budget."""
    ignored = [LeftOut(path, "ignored by the configuration's `ignore`") for path in plan.get("ignored") or []]
    return (*ignored, *(LeftOut(path, why) for r in requests for path, why in r.left_out))

