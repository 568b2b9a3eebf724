"""The report of `reviewer eval`: each case scored, the overall figures, comparisons and the gate,
as the JSON object machines read (`--format json`); text and Markdown render this same object.

Top level: `{version, corpus, adminConfig, judge, cases: [...], overall: {recall, precision, quiet,
findings, calls, tokens, seconds, …}, byTag: {tag: {recall, precision, quiet, …}}}` (the slices of
bot/eval/slices.py), plus `compare` (a second admin file's run and each figure's difference),
`baseline` (the differences from a saved report) and `gate` (the release gate's verdict) when asked
for. Ratios are null where they are undefined (recall of a case without must-find items, precision
of a review without findings). A case whose repository or commits could not be read is
`unavailable`: listed, and left out of every figure; a review that failed or was skipped counts,
with the findings it posted (none).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from bot.eval.bootstrap import Difference
from bot.eval.corpus import Case
from bot.eval.score import SEVERITIES, CaseScore, Cost, Found, Tally, figures, ratio, score_case, tally, total
from bot.eval.slices import by_tag

REPORT_VERSION = 1
Status = Literal["completed", "failed", "skipped", "unavailable"]
GATED = ("recall", "precision", "quiet")  # the figures a baseline gates on: a drop in any fails


@dataclass(frozen=True, slots=True)
class JudgeRun:
    """What the judge said of one case's candidate pairs, and what it cost."""

    verdicts: Mapping[tuple[int, int], bool | None]
    cost: Cost = Cost()
    error: str | None = None  # why (part of) the pairs went unjudged


@dataclass(frozen=True, slots=True)
class CaseRun:
    """What running one case gave: the command fills it, the report scores it."""

    case: Case
    status: Status
    reason: str | None = None  # why it failed, was skipped or is unavailable
    findings: tuple[Found, ...] = ()
    cost: Cost = Cost()
    seconds: float = 0.0  # the review's wall time (the engine's call)
    prepare_seconds: float = 0.0  # planning, the index and the reads before it
    merge_base: str | None = None
    head_sha: str | None = None
    model: str | None = None
    notes: tuple[str, ...] = ()
    judge: JudgeRun | None = None
    verified: bool = False  # the review's findings had a second look (verify: true)
    refuted: tuple[Found, ...] = ()  # findings the verifier refuted: not posted, so not in `findings`

    @property
    def counted(self) -> bool:
        return self.status != "unavailable"

    @property
    def unverified_findings(self) -> tuple[Found, ...]:
        """What the review would have posted without verification: its findings, then the refuted
        ones (so a finding's index is the same in both; the judge is asked about all of them)."""
        return (*self.findings, *self.refuted)

    def score(self) -> CaseScore:
        verdicts = self.judge.verdicts if self.judge is not None else None
        return score_case(self.case.must_find, self.case.must_not, self.findings, verdicts)

    def score_unverified(self) -> CaseScore:
        verdicts = self.judge.verdicts if self.judge is not None else None
        return score_case(self.case.must_find, self.case.must_not, self.unverified_findings, verdicts)

    def tally(self) -> Tally:
        return tally(self.score(), len(self.case.must_find), len(self.case.must_not), self.findings, self.cost,
                     self.seconds)

    def tally_unverified(self) -> Tally:
        return tally(self.score_unverified(), len(self.case.must_find), len(self.case.must_not),
                     self.unverified_findings, self.cost, self.seconds)


@dataclass(frozen=True)
class Run:
    """One admin file's run over the corpus."""

    admin_config: str
    cases: tuple[CaseRun, ...]
    judge: str | None = None

    def counted(self) -> list[CaseRun]:
        return [c for c in self.cases if c.counted]

    def tallies(self) -> dict[str, Tally]:
        return {c.case.id: c.tally() for c in self.counted()}


@dataclass(frozen=True)
class Gate:
    min_recall: float | None = None
    baseline: Mapping[str, Difference] | None = None
    failures: tuple[str, ...] = field(default=())

    @property
    def passed(self) -> bool:
        return not self.failures


def _noise(t: Tally) -> dict:
    counts = {s: getattr(t, s) for s in SEVERITIES}
    return {**counts, "minorShare": ratio(t.minor + t.nit, t.findings)}


def overall_json(t: Tally) -> dict:
    figs = figures(t)
    return {
        "cases": t.cases, "recall": figs["recall"], "precision": figs["precision"], "quiet": figs["quiet"],
        "findings": t.findings, "found": t.found, "items": t.items, "matched": t.matched,
        "quietPlaces": t.quiet, "places": t.places, "noise": _noise(t),
        "perCase": {"findings": ratio(t.findings, t.cases), "calls": ratio(t.calls, t.cases),
                    "seconds": ratio(t.seconds, t.cases)},
        "calls": t.calls, "toolRounds": t.tool_rounds,
        "tokens": {"prompt": t.prompt_tokens, "answer": t.answer_tokens, "unreported": t.unreported},
        "money": figs["money"], "seconds": t.seconds,
    }


def case_json(run: CaseRun) -> dict:
    case, score = run.case, run.score()
    out: dict[str, Any] = {"id": case.id, "status": run.status, "reason": run.reason, "base": case.base,
                           "head": case.head, "mergeBase": run.merge_base, "headSha": run.head_sha,
                           "model": run.model, "tags": list(case.tags)}
    if not run.counted:
        return out
    t = run.tally()
    figs = figures(t)
    out.update({
        "recall": figs["recall"], "precision": figs["precision"], "quiet": figs["quiet"],
        "mustFind": [{**item.to_json(), "matched": bool(score.items[i]),
                      "matches": [{"finding": m.finding, "judge": m.verdict} for m in score.items[i]],
                      "rejected": list(score.rejected[i])} for i, item in enumerate(case.must_find)],
        "mustNot": [{**place.to_json(), "quiet": not score.quiet[i], "findings": list(score.quiet[i])}
                    for i, place in enumerate(case.must_not)],
        "findings": [{**f.to_json(), "matches": list(score.matched_findings[i])} for i, f in enumerate(run.findings)],
        "noise": _noise(t), "cost": run.cost.to_json(), "seconds": run.seconds,
        "prepareSeconds": run.prepare_seconds, "notes": list(run.notes),
        "judge": None if run.judge is None else {"cost": run.judge.cost.to_json(), "error": run.judge.error},
        "tally": t.to_json(),
        "verification": _case_verification(run) if run.verified else None,
    })
    return out


def _case_verification(run: CaseRun) -> dict:
    """A case's refuted findings (each with the must-find items it would have matched) and its
    figures without verification."""
    before = run.score_unverified()
    shown = len(run.findings)
    figs = figures(run.tally_unverified())
    return {"refuted": [{**f.to_json(), "matches": list(before.matched_findings[shown + i])}
                        for i, f in enumerate(run.refuted)],
            "without": {"recall": figs["recall"], "precision": figs["precision"], "quiet": figs["quiet"],
                        "findings": len(run.unverified_findings)}}


def verification_json(run: Run) -> dict | None:
    """The run's figures with and without verification, over the same cases (null when no review
    was verified): `refutedMatched` counts refuted findings that matched a must-find item, which
    the verifier was wrong to refute."""
    counted = run.counted()
    if not any(c.verified for c in counted):
        return None
    with_it, without = total([c.tally() for c in counted]), total([c.tally_unverified() for c in counted])
    wrong = sum(1 for c in counted for i in range(len(c.findings), len(c.unverified_findings))
                if c.score_unverified().matched_findings[i])

    def shown(t: Tally) -> dict:
        figs = figures(t)
        return {"recall": figs["recall"], "precision": figs["precision"], "quiet": figs["quiet"],
                "findings": t.findings, "matched": t.matched, "found": t.found}
    return {"cases": sum(1 for c in counted if c.verified), "refuted": sum(len(c.refuted) for c in counted),
            "refutedMatched": wrong, "with": shown(with_it), "without": shown(without)}


def judge_json(run: Run) -> dict | None:
    judged = [c for c in run.counted() if c.judge is not None]
    if run.judge is None:
        return None
    verdicts = [m.verdict for c in judged for matches in c.score().items for m in matches]
    rejected = sum(len(r) for c in judged for r in c.score().rejected)
    cost = [c.judge.cost for c in judged if c.judge is not None]
    return {"model": run.judge, "confirmed": verdicts.count("confirmed"), "rejected": rejected,
            "unjudged": verdicts.count("unjudged"), "calls": sum(c.calls for c in cost),
            "tokens": {"prompt": sum(c.prompt_tokens for c in cost), "answer": sum(c.answer_tokens for c in cost)}}


def run_json(run: Run) -> dict:
    return {"adminConfig": run.admin_config, "judge": judge_json(run), "verification": verification_json(run),
            "cases": [case_json(c) for c in run.cases], "overall": overall_json(total(list(run.tallies().values()))),
            "byTag": {tag: s.to_json() for tag, s in by_tag((c.case, c.score()) for c in run.counted()).items()}}


def differences_json(diffs: Mapping[str, Difference]) -> dict:
    return {name: d.to_json() for name, d in diffs.items()}


def decide(overall: Tally, min_recall: float | None, baseline: Mapping[str, Difference] | None) -> Gate:
    """The release gate: recall at least `min_recall`, and no gated figure's interval wholly below
    the baseline's."""
    failures = []
    recall = figures(overall)["recall"]
    if min_recall is not None and (recall is None or recall < min_recall):
        shown = "undefined (no must-find items were run)" if recall is None else f"{recall:.2f}"
        failures.append(f"recall {shown} is below --min-recall {min_recall:g}")
    for name in GATED if baseline is not None else ():
        diff = baseline[name]  # type: ignore[index]
        if diff.drop:
            failures.append(f"{name} dropped by {-(diff.delta or 0):.2f} against the baseline (95% interval "
                            f"{diff.low:+.2f} to {diff.high:+.2f})")
    return Gate(min_recall, baseline, tuple(failures))


def report_json(corpus: str, first: Run, second: Run | None = None,
                compared: Mapping[str, Difference] | None = None, baseline_path: str | None = None,
                baseline: Mapping[str, Difference] | None = None, paired: Sequence[str] = (),
                gate: Gate | None = None) -> dict:
    out: dict[str, Any] = {"version": REPORT_VERSION, "corpus": corpus, **run_json(first)}
    if second is not None and compared is not None:
        out["compare"] = {**run_json(second), "differences": differences_json(compared)}
    if baseline_path is not None and baseline is not None:
        out["baseline"] = {"path": baseline_path, "cases": list(paired), "differences": differences_json(baseline)}
    if gate is not None:
        out["gate"] = {"passed": gate.passed, "minRecall": gate.min_recall, "failures": list(gate.failures)}
    return out


class NotAReport(ValueError):
    """A --baseline file that is not a report of `reviewer eval --format json`."""


def saved_tallies(data: Any) -> dict[str, Tally]:
    """case id → tally of a saved report's counted cases."""
    if not isinstance(data, dict) or data.get("version") != REPORT_VERSION or not isinstance(data.get("cases"), list):
        raise NotAReport(f"it is not a version-{REPORT_VERSION} report of `reviewer eval --format json`")
    out = {}
    for index, case in enumerate(data["cases"]):
        if not isinstance(case, dict) or not isinstance(case.get("id"), str):
            raise NotAReport(f"cases[{index}] has no id")
        if case.get("status") == "unavailable":
            continue
        try:
            out[case["id"]] = Tally.from_json(case["tally"])
        except (KeyError, TypeError, ValueError) as error:
            raise NotAReport(f"cases[{index}] ({case['id']}): its tally is not usable ({error})") from None
    return out
