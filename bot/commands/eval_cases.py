"""Running one case of `reviewer eval` (I/O): a corpus case is a change of a local git repository,
reviewed as a pull request by the steps `reviewer review` takes (bot/local/): the change read from
git (the configuration at the merge base, or the case's `config` file; the plan; the index built at
the merge base, kept in the repository's git directory, `reviewer context`'s place, so that the next
case of the same repository only reads what changed; the lookups), the built-in analyzers, and the
one call into the engine. Its findings — the analyzers' and the model's, as a pull request shows
both — are scored (bot/eval/), and its usage priced.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

import aiohttp

from bot.config.admin import AdminConfig
from bot.config.model import Provider
from bot.engine.providers import ProviderError, make_client, split_model_ref
from bot.engine.usage import Usage
from bot.eval.corpus import Case, Corpus
from bot.eval.judge import JUDGE_SCHEMA, judge_messages, read_verdicts
from bot.eval.report import CaseRun, JudgeRun
from bot.eval.score import Cost, Found, candidate_pairs
from bot.local.change import Change, Refs, read_change
from bot.local.indexes import Indexes
from bot.local.review import review_change
from bot.plan import git


def prepare(corpus: Corpus, case: Case, admin: AdminConfig, indexes: Indexes) -> Change:
    """Raises git.GitError when the repository or a commit cannot be read (the case is unavailable)."""
    config_path = corpus.config_path(case)
    config = Path(config_path).read_bytes() if config_path is not None else None
    return read_change(corpus.repo_path(case), Refs(case.base, case.head), admin, indexes, config_file=config)


def cost_of(usage: Usage, providers: Mapping[str, Provider]) -> Cost:
    """The usage in figures, with money where every model called declares a price."""
    money: float | None = 0.0
    unpriced = 0
    for ref, used in usage.models.items():
        name, model = split_model_ref(ref)
        provider = providers.get(name)
        price = provider.price_of(model) if provider is not None else None
        if price is None:
            unpriced += used.answered
            money = None if used.calls else money
        elif money is not None:
            money += price.cost(used.prompt_tokens, used.answer_tokens)
    return Cost(usage.calls, usage.tool_rounds, usage.prompt_tokens, usage.answer_tokens,
                sum(m.unreported for m in usage.models.values()), money, unpriced)


async def run_case(corpus: Corpus, case: Case, admin: AdminConfig, session: aiohttp.ClientSession,
                   indexes: Indexes, secrets_dir: str | None) -> CaseRun:
    started = time.monotonic()
    try:
        prepared = await asyncio.to_thread(prepare, corpus, case, admin, indexes)
    except git.GitError as error:
        return CaseRun(case, "unavailable", reason=str(error))
    except OSError as error:  # the case's config file went away since it was validated
        return CaseRun(case, "unavailable", reason=f"{error.filename}: {error.strerror}")
    prepare_seconds = time.monotonic() - started
    usage = Usage()
    started = time.monotonic()
    reviewed = await review_change(prepared, admin, session, usage, secrets_dir)
    seconds = time.monotonic() - started
    output = reviewed.output
    if output is None or reviewed.skipped is not None:
        return CaseRun(case, "skipped", reason=reviewed.skipped, prepare_seconds=prepare_seconds, notes=prepared.notes,
                       merge_base=prepared.merge_base, head_sha=prepared.head_sha)
    findings = tuple(Found(f.path, f.start_line, f.end_line, f.severity, f.category, f.message)
                     for f in output.findings)  # the model's and the analyzers', as the pull request shows them
    verification = output.verification
    refuted = tuple(Found(r.finding.path, r.finding.start_line, r.finding.end_line, r.finding.severity,
                          r.finding.category, r.finding.message) for r in verification.refuted) if verification else ()
    return CaseRun(case, output.status, reason=output.failure, findings=findings,
                   cost=cost_of(usage, prepared.providers), seconds=seconds, prepare_seconds=prepare_seconds,
                   model=output.model, notes=(*prepared.notes, *reviewed.notes, *output.notes),
                   merge_base=prepared.merge_base, head_sha=prepared.head_sha, verified=verification is not None,
                   refuted=refuted)


async def judged(run: CaseRun, judge: str, admin: AdminConfig, session: aiohttp.ClientSession,
                 secrets_dir: str | None) -> CaseRun:
    """The run with the judge's verdict on each pair of a must-find item and a finding at its place."""
    pairs = candidate_pairs(run.case.must_find, run.unverified_findings)  # the refuted ones too: scored without
    if not run.counted or not pairs:
        return run if not run.counted else _with_judge(run, JudgeRun({}))
    usage, verdicts, error = Usage(), {}, None
    try:
        name, model = split_model_ref(judge)
        client = make_client(admin.providers[name], session, secrets_dir=secrets_dir, usage=usage)
        findings = run.unverified_findings
        text = await client.complete(model, judge_messages([(run.case.must_find[i], findings[f])
                                                            for i, f in pairs]), JUDGE_SCHEMA)
        said = read_verdicts(text, len(pairs))
        verdicts = {pair: said.get(number) for number, pair in enumerate(pairs)}
        if len(said) < len(pairs):
            error = f"the judge answered for {len(said)} of {len(pairs)} pair(s)"
    except ProviderError as exc:
        error = str(exc)
    return _with_judge(run, JudgeRun(verdicts, cost_of(usage, admin.providers), error))


def _with_judge(run: CaseRun, judge: JudgeRun) -> CaseRun:
    return replace(run, judge=judge)
