"""Verification (I/O): each candidate finding re-checked in a call of its own before it is posted.

The model whose answer the review used verifies its findings when its provider says `verify: true`
(or the admin file's `defaults.verify` does): each new finding of the model at or above `minor`,
the most severe first, at most MAX_VERIFIED a review, three calls at a time, all within twice the
provider's `timeout`. A call is bounded as a review's request is: the finding's code within its
budget, and the provider's lookups within their rounds and bytes (bot/engine/tool_loop.py). Every call is counted in the review's usage,
hence in its cost and the account's budgets. What the verdicts mean is bot/reviews/verdict.py's:
only a refutation that cites lines the verifier read drops a finding; a call that fails leaves its
finding as it was, and the notes say so.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from bot import telemetry
from bot.engine.asking import Models
from bot.engine.providers import ProviderError
from bot.engine.split import MAX_PARALLEL
from bot.reviews.diff import FilePatch
from bot.reviews.findings import Finding
from bot.reviews.intent import Intent
from bot.reviews.intent import section as intent_section
from bot.reviews.verdict import (
    MAX_VERIFIED,
    SCHEMA,
    SCHEMA_NAME,
    TOOLS_PROMPT,
    VERIFIED_SEVERITIES,
    Refuted,
    Verdict,
    Verification,
    code_of,
    messages,
    read_verdict,
    unsupported,
)

log = logging.getLogger("reviewer.engine.verify")

INTENT_BUDGET = 6_000  # bytes of the linked issues shown with a finding that names one
TIME_FACTOR = 2  # the whole verification takes at most this many times the provider's `timeout`


@dataclass(frozen=True, slots=True)
class _Checked:
    kind: str  # confirmed | refuted | unverified | failed
    reason: str = ""


def candidates(findings: Sequence[Finding]) -> tuple[list[int], int]:
    """The indexes of the findings to verify (at or above `minor`, most severe first, at most
    MAX_VERIFIED), and how many more would have been."""
    eligible = [i for i, f in enumerate(findings) if f.severity in VERIFIED_SEVERITIES]
    eligible.sort(key=lambda i: VERIFIED_SEVERITIES.index(findings[i].severity))
    return eligible[:MAX_VERIFIED], max(0, len(eligible) - MAX_VERIFIED)


async def verify(models: Models, ref: str, findings: Sequence[Finding], patches: Mapping[str, FilePatch],
                 intent: Intent | None = None) -> Verification:
    """The verdicts on `findings` by `ref`; `Verification.refuted` are those not to post."""
    chosen, skipped = candidates(findings)
    limit = asyncio.Semaphore(MAX_PARALLEL)

    async def one(finding: Finding) -> _Checked:
        async with limit:
            return await _check(models, ref, finding, patches.get(finding.path), intent)

    provider = models.provider(ref.partition("/")[0])
    seconds = TIME_FACTOR * (provider.timeout if provider is not None else 120.0)
    tasks = [asyncio.ensure_future(one(findings[i])) for i in chosen]
    if tasks:
        await asyncio.wait(tasks, timeout=seconds)
    late = _Checked("failed", f"the verification ran out of its time ({seconds:g} s, {TIME_FACTOR} times the "
                              "provider's timeout)")
    for task in tasks:
        task.cancel()  # a call still running when the time is up: its finding stays as found
    checked = [task.result() if task.done() and not task.cancelled() else late for task in tasks]
    await asyncio.gather(*tasks, return_exceptions=True)
    refuted = tuple(Refuted(findings[i], c.reason) for i, c in zip(chosen, checked, strict=True) if c.kind == "refuted")
    result = Verification(
        ref, confirmed=sum(c.kind == "confirmed" for c in checked), refuted=refuted,
        unverified=sum(c.kind == "unverified" for c in checked), failed=sum(c.kind == "failed" for c in checked),
        skipped=skipped,
        unverified_reason=next((c.reason for c in checked if c.kind == "unverified"), ""),
        failed_reason="; ".join(dict.fromkeys(c.reason for c in checked if c.kind == "failed")))
    telemetry.verdicts(confirmed=result.confirmed, refuted=len(result.refuted), unverified=result.unverified,
                       failed=result.failed)
    log.info("verification by %s: %d confirmed, %d refuted, %d not verified, %d failed, %d not checked", ref,
             result.confirmed, len(result.refuted), result.unverified, result.failed, result.skipped)
    return result


async def _check(models: Models, ref: str, finding: Finding, patch: FilePatch | None,
                 intent: Intent | None) -> _Checked:
    code = code_of(finding, patch)
    try:
        text, conversation = await models.answer(ref, messages(finding, code, _intent_for(finding, intent)), SCHEMA,
                                                 SCHEMA_NAME, TOOLS_PROMPT)
    except ProviderError as exc:
        log.warning("verification of a finding on %s failed: %s", finding.path, exc)
        return _Checked("failed", str(exc))
    verdict = read_verdict(text)
    if not isinstance(verdict, Verdict):
        return _Checked("unverified", verdict)
    shown = [*code.shown, *(span for lookup in conversation.lookups for span in lookup.lines)]
    why_not = unsupported(verdict, shown)
    if why_not is not None:
        return _Checked("unverified", why_not)
    return _Checked(verdict.verdict, verdict.reason)


def _intent_for(finding: Finding, intent: Intent | None) -> str:
    """The linked issues a finding names (`#12`, `octo/lib#7`), as the review showed them: a
    finding about the change's intent cannot be checked without them."""
    if intent is None:
        return ""
    named = tuple(i for i in intent.read if re.search(rf"#{i.ref.number}(?!\d)", finding.message))
    if not named:
        return ""
    text, _ = intent_section(Intent(intent.here, named), INTENT_BUDGET)
    return text
