"""Running one case of `reviewer eval` (I/O): the steps a pull request goes through on the server,
with git in place of the GitHub API, and the review step itself.

For a case: the merge base of base and head; the configuration there (or the case's `config`
file), layered on the admin file and planned with the same planner; the files the plan names,
read at the merge base; the diff as GitHub's per-file entries; the repository index built at the
merge base (kept in the repository's git directory, `reviewer context`'s place, so that the next
case of the same repository only reads what changed) and what it retrieves for the change. Then
`review_step`: the one call into the engine (bot.engine.engine.run_review), with the admin file's
providers and, as on the server, the lookups the model may ask for (the changed files at the head,
the rest from the index at the merge base), so that a case's cost counts their rounds, and the
built-in analyzers' findings (bot/commands/eval_analyzers.py): beside the model's in its call, and
among the case's findings, as a pull request shows both.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TypeVar

import aiohttp

from bot.commands.eval_analyzers import case_analyzers
from bot.config.admin import AdminConfig
from bot.config.model import REPO_CONFIG_NAMES, Provider
from bot.engine.engine import run_review
from bot.engine.index_context import changed_files
from bot.engine.lookups import RepositoryLookups
from bot.engine.providers import ProviderError, make_client, split_model_ref
from bot.engine.request import DEFAULT_BUDGETS
from bot.engine.usage import Usage
from bot.eval.corpus import Case, Corpus
from bot.eval.judge import JUDGE_SCHEMA, judge_messages, read_verdicts
from bot.eval.report import CaseRun, JudgeRun
from bot.eval.score import Cost, Found, candidate_pairs
from bot.index.build import sync
from bot.index.gitdiff import diff_entries
from bot.index.gitsource import GitSnapshot
from bot.index.queries import Answer, HeadView
from bot.index.retrieve import Retrieval, retrieve
from bot.index.store import IndexStore
from bot.pipeline.configure import referenced_paths
from bot.plan import git
from bot.plan.config_files import changes_config, present_names
from bot.plan.pr import pr_from_git
from bot.plan.prepare import plan_change
from bot.reviews.diff import read_patches
from bot.reviews.ledger import Entry
from bot.reviews.output import ReviewOutput
from bot.store.index import open_sqlite_index
from bot.store.model import StoreError

APP_LOGIN = "reviewer[bot]"  # the login a review would run as; eval approves and dismisses nothing
T = TypeVar("T")
INDEX_NAME = "local"  # the index's name in the repository's index file, shared with `reviewer context`


@dataclass(frozen=True)
class Prepared:
    """Everything the review step takes, read from git for one case."""

    plan: dict
    providers: Mapping[str, Provider]
    files: dict[str, str]  # the files the plan names, at the merge base
    patches: list[dict]  # GitHub's per-file entries of merge base...head
    index: Retrieval | None
    merge_base: str
    head_sha: str
    notes: tuple[str, ...] = ()
    lookups: RepositoryLookups | None = None  # with the index: what the model may look up
    repo: str = ""  # the case's git repository, and its name on GitHub (the analyzers' settings)
    full_name: str | None = None


class Indexes:
    """One lock per repository: cases of one repository take turns at its index (each moves it to
    its own merge base), while cases of other repositories build theirs at the same time."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._locks: dict[str, threading.Lock] = {}

    def lock(self, repo: str) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault(os.path.realpath(repo), threading.Lock())


def _index_file(repo: str) -> str:
    folder = git.git(repo, "rev-parse", "--absolute-git-dir").decode().strip()
    os.makedirs(os.path.join(folder, "reviewer"), exist_ok=True)
    return os.path.join(folder, "reviewer", "index.sqlite3")


def _retrieval(repo: str, merge_base: str, head_sha: str, patches: list[dict], admin: AdminConfig,
               ignore: list[str], indexes: Indexes, ignored: list[str]) -> tuple[Retrieval, RepositoryLookups]:
    changed = [e["filename"] for e in patches if e.get("status") != "removed"]
    texts = {p: d.decode("utf-8", errors="replace") for p, d in GitSnapshot(repo, head_sha).read(changed).items()}

    def at_merge_base(work: Callable[[IndexStore], T]) -> T:
        """`work` over the index at this case's merge base: cases of one repository take turns
        at its index, and another case may have moved it to its own merge base meanwhile."""
        with indexes.lock(repo):
            with open_sqlite_index(_index_file(repo), INDEX_NAME) as store:
                if store.commit() != merge_base:
                    sync(store, GitSnapshot(repo, merge_base), limits=admin.index_limits, ignore=ignore)
                return work(store)

    async def read(work: Callable[[IndexStore], Answer]) -> Answer:
        return await asyncio.to_thread(at_merge_base, work)

    changes = changed_files(read_patches(patches), texts)
    retrieval = at_merge_base(lambda store: retrieve(store, changes, DEFAULT_BUDGETS.index))
    head = HeadView.of(patches, texts, ignored)
    return retrieval, RepositoryLookups(read, head)


def prepare(corpus: Corpus, case: Case, admin: AdminConfig, indexes: Indexes) -> Prepared:
    """Raises git.GitError when the repository or a commit cannot be read (the case is unavailable)."""
    repo = corpus.repo_path(case)
    git.check_repository(repo)
    base_sha, head_sha = git.resolve(repo, case.base), git.resolve(repo, case.head)
    merge_base = git.merge_base(repo, base_sha, head_sha)
    tree = git.list_tree(repo, merge_base)
    changed = git.changed_paths(repo, merge_base, head_sha)
    full_name = git.origin_full_name(repo)
    config_path = corpus.config_path(case)
    head = None
    if config_path is not None:
        config_files: dict[str, bytes] = {REPO_CONFIG_NAMES[0]: Path(config_path).read_bytes()}
    else:
        config_files = {n: git.read_blob(repo, merge_base, n) for n in present_names(tree)}
        if changes_config(changed):
            head_tree = git.list_tree(repo, head_sha)
            head = ({n: git.read_blob(repo, head_sha, n) for n in present_names(head_tree)}, head_tree)
    pr = pr_from_git(git.head_facts(repo, merge_base, head_sha), case.base, case.head, changed)
    plan, config = plan_change(admin, full_name, pr, changed, tree, config_files, head)
    plan_json = plan.to_json()
    patches = diff_entries(repo, merge_base, head_sha)
    files = {p: git.read_blob(repo, merge_base, p).decode("utf-8", errors="replace")
             for p in sorted(referenced_paths(plan_json)) if p in tree}
    index: Retrieval | None = None
    lookups: RepositoryLookups | None = None
    notes: tuple[str, ...] = ()
    if config.enabled and plan.decision == "review":
        try:
            index, lookups = _retrieval(repo, merge_base, head_sha, patches, admin,
                                        [g.pattern for g in config.ignore], indexes, plan_json["ignored"])
        except (OSError, StoreError) as error:  # as on the server: the index helps, it never stops a review
            notes = (f"the repository index was not used: {error}",)
    return Prepared(plan_json, config.providers, files, patches, index, merge_base, head_sha, notes, lookups, repo,
                    full_name)


async def review_step(prepared: Prepared, session: aiohttp.ClientSession, usage: Usage,
                      secrets_dir: str | None, analyzers: tuple[Entry, ...] = ()) -> ReviewOutput:
    """The review of one prepared case: one call into the engine, as the server makes it."""
    return await run_review(prepared.plan, files=prepared.files, patches=prepared.patches,
                            providers=prepared.providers, session=session, head_sha=prepared.head_sha,
                            app_login=APP_LOGIN, secrets_dir=secrets_dir, index=prepared.index, usage=usage,
                            lookups=prepared.lookups, analyzers=analyzers)


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


def _skip_reason(prepared: Prepared) -> str | None:
    plan = prepared.plan
    if plan["decision"] != "review":
        return f"the plan skips it ({plan['skipReason']})"
    if not prepared.providers:
        return "the admin file declares no model provider"
    if not any(plan["models"].values()):
        return "no model is chosen (models.review and models.fallback are unset)"
    return None


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
    skipped = _skip_reason(prepared)
    if skipped is not None:
        return CaseRun(case, "skipped", reason=skipped, prepare_seconds=prepare_seconds, notes=prepared.notes,
                       merge_base=prepared.merge_base, head_sha=prepared.head_sha)
    usage = Usage()
    started = time.monotonic()
    analyzed, analyzer_notes = await case_analyzers(prepared.repo, prepared.full_name, prepared.head_sha,
                                                    prepared.plan, prepared.patches, admin)
    outcome = await review_step(prepared, session, usage, secrets_dir, analyzed)
    seconds = time.monotonic() - started
    findings = tuple(Found(f.path, f.start_line, f.end_line, f.severity, f.category, f.message)
                     for f in outcome.findings)  # the model's and the analyzers', as the pull request shows them
    verification = outcome.verification
    refuted = tuple(Found(r.finding.path, r.finding.start_line, r.finding.end_line, r.finding.severity,
                          r.finding.category, r.finding.message) for r in verification.refuted) if verification else ()
    return CaseRun(case, outcome.status, reason=outcome.failure, findings=findings,
                   cost=cost_of(usage, prepared.providers), seconds=seconds, prepare_seconds=prepare_seconds,
                   model=outcome.model, notes=(*prepared.notes, *analyzer_notes, *outcome.notes),
                   merge_base=prepared.merge_base,
                   head_sha=prepared.head_sha, verified=verification is not None, refuted=refuted)


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
