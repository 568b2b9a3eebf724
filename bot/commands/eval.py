"""`reviewer eval CORPUS --admin-config FILE [--compare FILE] [--only ID…] [--jobs N]
[--format text|json|markdown] [--min-recall X] [--baseline REPORT.json]`: each case of the corpus
reviewed as a pull request would be, scored against its known defects (bot/eval/).

Exit 0 when the run is done (and the gate, when asked for, passed); 1 when the gate failed, or the
corpus, a case's config file or an admin file is invalid (each error `path:line:col: code:
message` on stderr); 2 on a usage error, an unreadable file, or when no case could be run. The
report goes to stdout; a progress bar to stderr, only when stderr is a terminal.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import IO, Any

import aiohttp

from bot.commands.doctor_checks import providers
from bot.commands.eval_cases import judged, run_case
from bot.config.admin import AdminConfig, load_admin_config
from bot.config.repo import load_repo_config
from bot.documents.diagnostics import Diagnostic, dumps, format_text
from bot.documents.jsonbody import JsonBodyError, parse_json
from bot.eval.bootstrap import Difference, paired
from bot.eval.corpus import Corpus, corpus_file, load_corpus
from bot.eval.render import render_markdown, render_text
from bot.eval.report import CaseRun, NotAReport, Run, decide, report_json, saved_tallies
from bot.eval.score import total
from bot.local.indexes import Indexes

FORMATS = ("text", "json", "markdown")


class Stop(Exception):
    """The run cannot go on: `code` is the exit status, the message is printed."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


def _read(path: str, what: str) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError as error:
        raise Stop(2, f"cannot read the {what} {path}: {error.strerror or error}") from None


def _invalid(path: str, problems: Sequence[Diagnostic], what: str) -> Stop:
    lines = "\n".join(format_text(path, problems))
    return Stop(1, f"{lines}\nreviewer eval: the {what} {path} is invalid ({len(problems)} error(s))")


def load_inputs(args: argparse.Namespace) -> tuple[Corpus, list[AdminConfig]]:
    path = corpus_file(args.corpus)
    corpus, problems = load_corpus(_read(path, "corpus"), path)
    if corpus is None:
        raise _invalid(path, problems, "corpus")
    admins = []
    for admin_path in (args.admin_config, *([args.compare] if args.compare else [])):
        admin, problems = load_admin_config(_read(admin_path, "admin configuration"), admin_path)
        if admin is None:
            raise _invalid(admin_path, problems, "admin configuration")
        admins.append(admin)
    if args.only:
        corpus, unknown = corpus.only(args.only)
        if unknown:
            raise Stop(2, f"--only: the corpus has no case {', '.join(unknown)}")
    _check_configs(corpus, admins)
    return corpus, admins


def _check_configs(corpus: Corpus, admins: list[AdminConfig]) -> None:
    """A case's `config` file: present, and valid against every admin file it will be used with."""
    missing = []
    for case in corpus.cases:
        config = corpus.config_path(case)
        if config is None:
            continue
        if not os.path.isfile(config):
            line, column = case.config_at
            missing.append(Diagnostic(line, column, f"/cases/{case.index}/config", "missing-file",
                                      f"`cases[{case.index}].config`: {config} does not exist"))
            continue
        for admin in admins:
            _, problems = load_repo_config(_read(config, "case configuration"), config, admin, None)
            if problems:
                raise _invalid(config, problems, f"configuration of case {case.id}")
    if missing:
        raise _invalid(corpus.path, missing, "corpus")


def baseline_tallies(path: str) -> dict:
    try:
        return saved_tallies(parse_json(_read(path, "baseline report")))
    except JsonBodyError as error:
        raise Stop(2, f"--baseline {path} is not JSON: {error.message}") from None
    except NotAReport as error:
        raise Stop(2, f"--baseline {path}: {error}") from None


class Progress:
    """`[#####-----] 12/30 case-id` on stderr, redrawn in place; silent unless stderr is a terminal."""

    WIDTH = 24

    def __init__(self, total: int, stream: IO[str]) -> None:
        self.total, self.done, self.stream = total, 0, stream
        self.on = total > 0 and stream.isatty()

    def advance(self, label: str) -> None:
        self.done += 1
        if self.on:
            filled = self.WIDTH * self.done // self.total
            self.stream.write(f"\r\x1b[2K[{'#' * filled}{'-' * (self.WIDTH - filled)}] {self.done}/{self.total} "
                              f"{label[:40]}")
            self.stream.flush()

    def close(self) -> None:
        if self.on:
            self.stream.write("\r\x1b[2K")
            self.stream.flush()


async def run_all(corpus: Corpus, admins: list[AdminConfig], jobs: int, secrets_dir: str | None,
                  advance: Callable[[str], None]) -> list[list[CaseRun]]:
    """Every case with every admin file, at most `jobs` cases at once; the first admin file's judge
    (if any) judges every run, so that runs differ only in what they review with."""
    limit, indexes = asyncio.Semaphore(jobs), Indexes.in_git_dir()
    judge = admins[0].judge
    async with aiohttp.ClientSession() as session:
        async def one(case: Any, admin: AdminConfig) -> CaseRun:
            async with limit:
                run = await run_case(corpus, case, admin, session, indexes, secrets_dir)
                if judge is not None:
                    run = await judged(run, judge, admins[0], session, secrets_dir)
                advance(case.id)
                return run
        return [list(await asyncio.gather(*(one(case, admin) for case in corpus.cases))) for admin in admins]


def _paired(before: dict, after: dict) -> tuple[dict[str, Difference], list[str]]:
    """Each figure's change from `before` to `after` (case id → tally), over the cases both ran."""
    ids = [i for i in after if i in before]
    return paired([before[i] for i in ids], [after[i] for i in ids]), ids


@contextlib.contextmanager
def _engine_warnings_in_the_report() -> Iterator[None]:
    """The engine logs each model that gave no answer; the report already says so per case, and
    33 copies of one connection error on stderr would bury it. Errors still get through."""
    engine = logging.getLogger("reviewer.engine")
    level = engine.level
    engine.setLevel(logging.ERROR)
    try:
        yield
    finally:
        engine.setLevel(level)


def _providers_answer(admins: list[AdminConfig]) -> None:
    """Each provider of the admin files asked once (as `reviewer doctor` asks it), before any case:
    one that does not answer stops the run with the doctor's line, instead of failing every case."""
    for admin in admins:
        lines = [check.line() for check in asyncio.run(providers(admin, os.environ.get("REVIEWER_SECRETS_DIR"),
                                                                  os.environ)) if check.level == "fail"]
        if lines:
            raise Stop(2, "\n".join(lines) + f"\nreviewer eval: a model provider of {admin.path} does not answer; "
                                             "no case was run (`reviewer doctor` checks a configuration)")


def evaluate(args: argparse.Namespace, stderr: IO[str]) -> tuple[dict, bool]:
    corpus, admins = load_inputs(args)
    baseline = baseline_tallies(args.baseline) if args.baseline else None
    if not any(p for a in admins for p in a.declared_providers(None)):
        print("reviewer eval: the admin file declares no model provider: every case is skipped", file=stderr)
    _providers_answer(admins)
    progress = Progress(len(corpus.cases) * len(admins), stderr)
    try:
        with _engine_warnings_in_the_report():
            runs = asyncio.run(run_all(corpus, admins, args.jobs, os.environ.get("REVIEWER_SECRETS_DIR"),
                                       progress.advance))
    finally:
        progress.close()
    paths = [args.admin_config, *([args.compare] if args.compare else [])]
    first, *rest = [Run(path, tuple(cases), admins[0].judge) for path, cases in zip(paths, runs, strict=True)]
    if not first.counted():
        raise Stop(2, "no case could be run: " + "; ".join(f"{c.case.id}: {c.reason}" for c in first.cases[:5]))
    second = rest[0] if rest else None
    compared = _paired(first.tallies(), second.tallies())[0] if second else None
    against, ids = _paired(baseline, first.tallies()) if baseline is not None else (None, [])
    gated = args.min_recall is not None or baseline is not None
    gate = decide(total(list(first.tallies().values())), args.min_recall, against) if gated else None
    report = report_json(corpus.path, first, second, compared, args.baseline, against, ids, gate)
    return report, gate is None or gate.passed


def run(args: argparse.Namespace) -> int:
    try:
        report, passed = evaluate(args, sys.stderr)
    except Stop as stop:
        print(stop if stop.code == 1 or str(stop).startswith("fail ") else f"reviewer eval: {stop}", file=sys.stderr)
        return stop.code
    if args.format == "json":
        print(dumps(report))
    else:
        sys.stdout.write(render_markdown(report) if args.format == "markdown" else render_text(report))
    return 0 if passed else 1
