"""Asking the models of one review (I/O): the requests fitted to the models' context, the review
model first and the fallback model on a provider error, a timeout or an unusable answer, the
requests of a split review at most MAX_PARALLEL at once, and what it all cost.

bot/engine/engine.py's `run_review` asks through here; a follow-up's answer (bot/engine/followup.py)
shares `Models`, one client per provider.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

import aiohttp

from bot.config.model import Provider
from bot.engine.lookups import Lookups
from bot.engine.providers import ModelClient, ProviderError, make_client, split_model_ref
from bot.engine.request import Budgets, ModelRequest, build_request
from bot.engine.split import ANSWER_TOKENS, BYTES_PER_TOKEN, MAX_PARALLEL, context_tokens, diff_room, split_files
from bot.engine.tool_loop import PROCESS_TOOL_SUPPORT, Conversation, ToolSupport
from bot.engine.tool_loop import answer as answer_with_tools
from bot.engine.usage import Usage
from bot.index.retrieve import Retrieval
from bot.reviews.diff import FilePatch
from bot.reviews.findings import FINDINGS_SCHEMA, ParsedAnswer, parse_answer
from bot.reviews.intent import Intent
from bot.reviews.output import Attempt, ModelCost

log = logging.getLogger("reviewer.engine")  # under the server's logger: JSON lines, redacted


@dataclass(frozen=True, slots=True)
class Answer:
    """What the models answered: the findings (None: no model gave a usable answer), which model's
    answer was used, and each model asked."""

    parsed: ParsedAnswer | None
    model: str | None
    fallback_used: bool
    attempts: tuple[Attempt, ...]


NOTHING_ASKED = Answer(ParsedAnswer(), None, False, ())  # an increment that touches no file under review
NO_ANSWER = Answer(None, None, False, ())


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

    def provider(self, name: str) -> Provider | None:
        return self._providers.get(name)

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

    async def answer(self, ref: str, messages: list[dict], schema: dict, schema_name: str,
                     tools_prompt: str) -> tuple[str, Conversation]:
        """`ref`'s answer to another kind of request (a verdict), with the review's lookups and
        usage, under the JSON schema `schema_name`; and the lookups it made. Raises ProviderError."""
        name, model = split_model_ref(ref)
        client, provider = self.client(name), self._providers[name]
        conversation = Conversation(ref, provider.tools)
        text = await answer_with_tools(client, provider, model, messages, schema, lookups=self._lookups,
                                       support=self._tool_support, usage=self._usage, notes=[],
                                       schema_name=schema_name, prompt=tools_prompt, conversation=conversation)
        return text, conversation


async def ask_one(models: Models, plan: dict, request: ModelRequest) -> Answer:
    """One request: the review model, then the fallback model."""
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
        return Answer(parsed, ref, is_fallback, tuple(attempts))
    return Answer(None, None, False, tuple(attempts))


async def ask_all(models: Models, plan: dict, requests: list[ModelRequest]) -> Answer:
    """Every request, at most MAX_PARALLEL at once; their findings merged. One request that no
    model answers fails the review: a review that silently skipped part of the diff would pass."""
    limit = asyncio.Semaphore(MAX_PARALLEL)

    async def one(request: ModelRequest) -> Answer:
        async with limit:
            return await ask_one(models, plan, request)

    answers = await asyncio.gather(*(one(r) for r in requests))
    attempts = tuple(a for answer in answers for a in answer.attempts)
    parsed = [a.parsed for a in answers if a.parsed is not None]
    if len(parsed) < len(answers):
        return Answer(None, None, False, attempts)
    merged = ParsedAnswer(tuple(f for p in parsed for f in p.findings), sum(p.malformed for p in parsed),
                          sum(p.over_limit for p in parsed), tuple(x for p in parsed for x in p.problems)[:5],
                          walkthrough=tuple(w for p in parsed for w in p.walkthrough))
    used = next((a for a in answers if a.fallback_used), answers[0])
    return Answer(merged, used.model, any(a.fallback_used for a in answers), attempts)


def failure_text(attempts: tuple[Attempt, ...]) -> str:
    if not attempts:
        return "no model is configured (models.review and models.fallback are unset)"
    return "no model gave a usable answer: " + "; ".join(f"{a.model}: {a.error}" for a in attempts)


def fitted(asked: dict, files: Mapping[str, str], patches: Mapping[str, FilePatch], earlier: list[FilePatch],
           budgets: Budgets, providers: Mapping[str, Provider], index: Retrieval | None = None,
           lookup_room: int = 0, intent: Intent | None = None) -> tuple[list[ModelRequest], tuple[str, ...]]:
    """The requests of one review, each within the smallest context of its models: the plan's
    files shared out among as few requests as fit, every one with the same rules, context and
    linked issues (`intent`), and `lookup_room` bytes left free for the answers to the model's lookups."""
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


def review_cost(usage: Usage, providers: Mapping[str, Provider]) -> ModelCost:
    """What the review's model calls came to, with money where every model called declares a
    `price` (the admin file's, per million prompt and answer tokens)."""
    money: float | None = 0.0
    unpriced: list[str] = []
    for ref, used in usage.models.items():
        name, model = split_model_ref(ref)
        provider = providers.get(name)
        price = provider.price_of(model) if provider is not None else None
        if price is None:
            unpriced.append(ref)
        elif money is not None:
            money += price.cost(used.prompt_tokens, used.answer_tokens)
    return ModelCost(usage.calls, usage.prompt_tokens, usage.answer_tokens,
                     sum(m.unreported for m in usage.models.values()),
                     None if unpriced or not usage.models else money, tuple(unpriced))
