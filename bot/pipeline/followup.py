"""Follow-ups and commands (I/O): a comment, a reply or a review that speaks to the app.

Order of the checks, cheapest first: what the comment asks (nothing → done, no GitHub call beyond
the thread); the configuration at the merge base (`enabled: false` stops follow-ups); write access
of the author (asked of GitHub, cached); the comment id claimed in the review memory (a comment is
answered once, however often it is delivered); then the per-thread rate. Bots never reach this
module: their deliveries make no job (`bot.events.jobs`).

An answer is recorded in the job's journal before it is posted and carries its delivery's marker
(bot.pipeline.journal): an attempt run again after an interruption posts the same answer, once.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, replace
from typing import Any, Literal

from bot.engine import followup
from bot.engine.usage import Usage
from bot.events.jobs import Job, ReviewResult
from bot.github import GitHubClient, pull_request, read_file
from bot.github.comments import create_comment, issue_comments, reply_in_thread, review_comments
from bot.learnings.capture import Heard, classified, read_learning
from bot.pipeline import budgets, journal, learn
from bot.pipeline.configure import plan_for
from bot.pipeline.gather import gather, read_paths
from bot.pipeline.post import once
from bot.pipeline.review import review_pull_request
from bot.pipeline.services import Services
from bot.pipeline.targets import Target
from bot.reviews.checkrun import report_for_plan
from bot.reviews.checkrun_budget import answer_for_budget
from bot.reviews.followup import (
    RATE_NOTICE,
    WINDOW,
    Asked,
    conversation,
    help_text,
    neutralise_mentions,
    rate,
    read_comment,
)
from bot.reviews.memory import ReviewMemory

logger = logging.getLogger("reviewer.followup")


@dataclass(frozen=True)
class Said:
    """One comment to the app, read from its delivery."""

    comment_id: int
    author: str
    body: str
    root_id: int | None  # the review thread it belongs to (its first comment), if any
    url: str | None = None  # its html_url, which a learning made from it cites

    def as_comment(self) -> dict[str, Any]:
        """As GitHub lists a comment (what a thread holds)."""
        return {"id": self.comment_id, "user": {"login": self.author}, "body": self.body, "html_url": self.url}


def said_in(job: Job) -> Said:
    holder: dict[str, Any] = job.payload.get("review" if job.event == "pull_request_review" else "comment") or {}
    root = None
    if job.event == "pull_request_review_comment":
        root = holder.get("in_reply_to_id") or holder.get("id")
    url = holder.get("html_url")
    return Said(int(holder["id"]), str((holder.get("user") or {}).get("login", "")), holder.get("body") or "", root,
                url if isinstance(url, str) else None)


@dataclass(frozen=True)
class _Where:
    """Where the answer goes: the review thread, or the pull request's conversation."""

    gh: GitHubClient
    target: Target
    root_id: int | None
    login: str  # the app's: its answer is looked for among its own comments

    @property
    def thread(self) -> str:
        suffix = f"thread:{self.root_id}" if self.root_id is not None else "conversation"
        return f"{self.target.pull_key}:{suffix}"

    async def post(self, body: str) -> None:
        """The job's one comment (an answer or a notice), marked with its delivery: an attempt
        after the first takes up the comment an earlier one posted (bot.pipeline.post.once)."""
        t = self.target
        mark = journal.marker(t.delivery_id, journal.ANSWER) if t.delivery_id else ""
        text = f"{mark}\n{body}" if mark else body

        async def create(resend: bool) -> None:
            if self.root_id is not None:
                await reply_in_thread(self.gh, t.owner, t.repo, t.number, self.root_id, text, resend_unanswered=resend)
            else:
                await create_comment(self.gh, t.owner, t.repo, t.number, text, resend_unanswered=resend)

        async def posted() -> bool:
            if not mark:
                return False
            if self.root_id is not None:
                comments = await review_comments(self.gh, t.owner, t.repo, t.number)
            else:
                comments = await issue_comments(self.gh, t.owner, t.repo, t.number)
            return any((c.get("user") or {}).get("login") == self.login and mark in (c.get("body") or "")
                       for c in comments)
        if not await once(create, posted, retry=t.attempt > 1):
            logger.info("the answer was posted by an earlier attempt: taken up")


@dataclass(frozen=True)
class _Heard:
    said: Said
    asked: Asked
    thread: list[dict]  # the review thread, oldest first, ending at `said`; empty for a pull request comment
    number: int  # the pull request
    left_out: int = 0  # replies by others in an app's thread, not given to the model


async def _hear(services: Services, gh: GitHubClient, job: Job) -> _Heard | None:
    """What the comment asks of the app, read with its thread; None when nothing."""
    assert job.repo is not None and job.pr_number is not None  # a follow-up job always names them
    said = said_in(job)
    login = await services.app_login()
    if said.author.lower() == login.lower():
        return None
    owner, _, repo = job.repo.partition("/")
    thread: list[dict] = []
    if said.root_id is not None:
        thread = followup.thread_of(await review_comments(gh, owner, repo, job.pr_number), said.root_id)
    started_by_app = bool(thread) and (thread[0].get("user") or {}).get("login") == login
    asked = read_comment(said.body, login.removesuffix("[bot]"), in_app_thread=started_by_app)
    if asked.kind == "nothing":
        return None
    # The thread is read now, not when the comment was made: it ends at the comment whose author
    # is checked, and holds no one else's words in the app's own threads (bot/reviews/followup.py).
    told, left_out = conversation(thread, said.as_comment(), login) if thread else ([], 0)
    return _Heard(said, asked, [dict(c) for c in told], job.pr_number, left_out)


async def handle_followup(services: Services, gh: GitHubClient, job: Job) -> ReviewResult | None:
    """Answer a comment or run the command it holds; what a review it ran came to (else None)."""
    heard = await _hear(services, gh, job)
    if heard is None:
        return None
    said = heard.said
    owner, _, repo = str(job.repo).partition("/")
    pull = await pull_request(gh, owner, repo, heard.number)
    target = Target(owner, repo, pull["number"], pull["head"]["sha"], "manual", pull, attempt=job.attempt,
                    delivery_id=job.delivery_id)
    gathered = await gather(gh, target)
    plan, config = plan_for(services.admin.current, gathered, target)
    plan_json = plan.to_json()
    if plan_json["skipReason"] == "disabled":
        logger.info("follow-ups are off for %s: enabled is false", target.full_name)
        return None
    slug = (await services.app_login()).removesuffix("[bot]")
    teaching = read_learning(said.body, slug)
    if teaching is not None and services.learnings is not None:  # before the write check: a refusal is answered
        await _learn(services, gh, job, heard, target, teaching)
        return None
    if not await services.access.may_write(gh, owner, repo, said.author):
        logger.info("%s has no write access to %s: not answered", said.author, target.full_name)
        return None
    memory = services.memory
    assert memory is not None  # make_services always opens it
    if not await memory.claim_comment(target.pull_key, f"{job.event}:{said.comment_id}", job.delivery_id):
        logger.info("comment %s was answered before", said.comment_id)
        return None
    where = _Where(gh, target, said.root_id, await services.app_login())
    if heard.asked.kind == "command":
        return await _command(services, where, heard.asked.command, said.author, plan_json)
    asking = heard.thread or [said.as_comment()]
    await _answer(memory, _Context(services, where, plan_json, config, asking, gathered.merge_base, said,
                                   heard.left_out))
    return None


async def _learn(services: Services, gh: GitHubClient, job: Job, heard: _Heard, target: Target,
                 teaching: Heard) -> None:
    """A learning command: claimed once, answered in its thread (or on the pull request), within
    the thread's rate, the answer journaled like every other (bot/pipeline/learn.py decides)."""
    memory, store, said = services.memory, services.learnings, heard.said
    assert memory is not None and store is not None
    if not await memory.claim_comment(target.pull_key, f"{job.event}:{said.comment_id}", job.delivery_id):
        logger.info("comment %s was answered before", said.comment_id)
        return
    login = await services.app_login()
    where = _Where(gh, target, said.root_id, login)
    kept = await journal.recorded(memory, target.delivery_id, target.attempt)
    if kept is not None and kept.get("kind") == journal.ANSWER and isinstance(kept.get("text"), str):
        await where.post(kept["text"])  # an earlier attempt learned and decided the answer
        return
    if not await _within_rate(memory, where):
        return

    async def post(text: str) -> None:
        await journal.record(memory, target.delivery_id, {"kind": journal.ANSWER, "text": text})
        await where.post(text)
        await memory.record_answer(where.thread, "answer")
    holder = job.payload.get("comment") or job.payload.get("review") or {}
    root_by_app = bool(heard.thread) and (heard.thread[0].get("user") or {}).get("login") == login
    place = learn.Place(gh, target.owner, target.repo, target.pull_key, login.removesuffix("[bot]"),
                        services.public_url)
    comment = learn.Comment(said.author, holder.get("html_url"), said.root_id, root_by_app)
    await learn.from_comment(store, services.access, place, teaching, comment, post)


async def _command(services: Services, where: _Where, command: str, author: str,
                   plan_json: dict) -> ReviewResult | None:
    memory, target = services.memory, where.target
    assert memory is not None
    slug = (await services.app_login()).removesuffix("[bot]")
    if command in ("review", "full review"):
        force: Literal["review", "full"] = "full" if command == "full review" else "review"
        return await review_pull_request(services, where.gh, replace(target, force=force))
    if not await _within_rate(memory, where):
        return None
    if command == "pause":
        await memory.set_paused(target.pull_key, author)
        text = (f"Paused automatic reviews of this pull request. `@{slug} resume` starts them again; "
                f"`@{slug} review` reviews it once now.")
    elif command == "resume":
        await memory.set_paused(target.pull_key, None)
        text = "Resumed automatic reviews of this pull request: the next push is reviewed."
    elif command == "plan":
        text = f"## Reviewer's plan for `{target.head_sha[:7]}`\n\n" + report_for_plan(plan_json).summary
    else:
        text = help_text(slug)
    await where.post(neutralise_mentions(text) if command == "plan" else text)
    await memory.record_answer(where.thread, "answer")
    return None


async def _within_rate(memory: ReviewMemory, where: _Where) -> bool:
    """At most MAX_ANSWERS a thread an hour, then one notice, then silence until the hour passes."""
    verdict = rate(await memory.answers_since(where.thread, time.time() - WINDOW))
    if verdict == "notice":
        await where.post(RATE_NOTICE)
        await memory.record_answer(where.thread, "notice")
    return verdict == "answer"


@dataclass(frozen=True)
class _Context:
    services: Services
    where: _Where
    plan: dict
    config: Any  # EffectiveConfig: the providers
    thread: list[dict]  # ends at `said`
    merge_base: str  # rule files are read there, as for reviews
    said: Said  # the comment answered, whose author has write access (checked before)
    left_out: int = 0  # others' replies in the app's thread, not given to the model


async def _answer(memory: ReviewMemory, ctx: _Context) -> None:
    """The answer, recorded in the job's journal before it is posted: an attempt after the first
    posts the answer an earlier one decided on (the rate was counted for it then)."""
    target = ctx.where.target
    kept = await journal.recorded(memory, target.delivery_id, target.attempt)
    text = kept.get("text") if kept is not None and kept.get("kind") == journal.ANSWER else None
    if not isinstance(text, str):
        if not await _within_rate(memory, ctx.where):
            return
        text = await _answer_text(ctx)
        await journal.record(memory, target.delivery_id, {"kind": journal.ANSWER, "text": text})
    await ctx.where.post(text)
    await memory.record_answer(ctx.where.thread, "answer")


async def _answer_text(ctx: _Context) -> str:
    if not ctx.config.providers or not any(ctx.plan["models"].values()):
        return "No model is configured for this repository, so I cannot answer questions here."
    held = await _reserve(ctx)
    if isinstance(held, str):
        return held
    follow = await _follow_up(ctx)
    usage = Usage()
    try:
        answer = await followup.answer(follow, ctx.plan["models"], providers=ctx.config.providers,
                                       session=ctx.services.http, secrets_dir=ctx.services.secrets_dir, usage=usage)
    finally:  # a follow-up's tokens are the month's too (docs/configuration.md), in place of those held
        if ctx.services.budgets is not None:
            await budgets.settle(ctx.services.budgets, held, budgets.account_of(ctx.where.target.full_name), usage)
    if answer.text is None:
        logger.warning("no model answered the follow-up in %s", ctx.where.thread)
        return "I could not answer this time: no model gave an answer. Ask again later."
    does_not_apply, text = classified(answer.text)
    text = neutralise_mentions(text)
    store, where = ctx.services.learnings, ctx.where
    if does_not_apply and store is not None and where.root_id is not None:
        # the learning is the checked comment's: its author and its words, never a later reply's
        said = ctx.said
        place = learn.Place(where.gh, where.target.owner, where.target.repo, where.target.pull_key,
                            where.login.removesuffix("[bot]"), ctx.services.public_url)
        text += await learn.from_model_reply(store, place, where.root_id, said.author, said.url, said.body)
    return text


async def _reserve(ctx: _Context) -> str | budgets.Reservation | None:
    """The reply when the account's month of tokens is spent (no model is asked); else the tokens
    held for the answer (None without a token budget)."""
    admin, store = ctx.services.admin.current, ctx.services.budgets
    if store is None or admin is None:
        return None
    full_name = ctx.where.target.full_name
    held = await budgets.reserve(store, admin.budgets_for(full_name), budgets.account_of(full_name),
                                 budgets.ANSWER_ESTIMATE)
    if not isinstance(held, budgets.Exceeded):
        return held
    return answer_for_budget(held.budget, held.limit.value, held.resets_at, held.limit.key_path)


async def _follow_up(ctx: _Context) -> followup.FollowUp:
    """The thread, and for a review thread the finding's file around its line and its rules."""
    messages = tuple(followup.Message(str((c.get("user") or {}).get("login", "")), c.get("body") or "")
                     for c in ctx.thread)
    first = ctx.thread[0]
    path, line = first.get("path"), first.get("line") or first.get("original_line")
    if ctx.where.root_id is None or not isinstance(path, str) or not isinstance(line, int):
        return followup.FollowUp(messages, left_out=ctx.left_out)
    t = ctx.where.target
    text = await read_file(ctx.where.gh, t.owner, t.repo, path, t.head_sha)
    code = followup.numbered(text, line) if text else None
    rules = [r for r in ctx.plan["rules"] if path in r["matchedPaths"]]
    files = await read_paths(ctx.where.gh, t.owner, t.repo, [r["file"] for r in rules if r.get("file")],
                             ctx.merge_base)
    texts = tuple((r["id"], r.get("rule") or files.get(r.get("file") or "", "")) for r in rules)
    return followup.FollowUp(messages, path, line, code, texts, left_out=ctx.left_out)

