"""A plan (and, when a review ran, its outcome) → what the `Reviewer` check run says.

Pure: the conclusion and title of docs/reviews.md's check-run contract, a markdown summary for people,
and one annotation per configuration error at its line. Sending it (50 annotations a request,
65,535 characters a field) is `bot.github.check_runs`' job.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

MAX_ROWS = 40  # rows per table in the summary; the rest is counted

SKIP_TITLES = {
    "disabled": "Skipped: reviews are disabled for this repository",
    "filtered": "Skipped: the pull request does not pass filterExpr",
    "ignored-only": "Skipped: every changed file is ignored",
}


@dataclass(frozen=True)
class CheckRunReport:
    conclusion: str  # success | failure | neutral
    title: str
    summary: str
    text: str = ""
    annotations: list[dict[str, Any]] = field(default_factory=list)


def annotation(path: str, line: int, message: str, title: str, level: str = "failure",
               end_line: int | None = None) -> dict[str, Any]:
    return {"path": path, "start_line": line, "end_line": end_line or line,
            "annotation_level": level, "title": title, "message": message}


def error_annotations(errors: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Errors in repository files become annotations; the admin file is not in the repository."""
    return [annotation(e["path"], max(1, e["line"]), e["message"], e["code"])
            for e in errors if e.get("source") != "admin"]


def _count(items: Sequence[Any], noun: str) -> str:
    return f"{len(items)} {noun}{'' if len(items) == 1 else 's'}"


def _bullets(lines: Sequence[str]) -> list[str]:
    shown = [f"- {line}" for line in lines[:MAX_ROWS]]
    if len(lines) > MAX_ROWS:
        shown.append(f"- … and {len(lines) - MAX_ROWS} more")
    return shown


def _code(text: str) -> str:
    return f"`{text.replace('`', '')}`"


def _paths(paths: Sequence[str], limit: int = 3) -> str:
    shown = ", ".join(_code(p) for p in paths[:limit])
    return shown + (f" and {len(paths) - limit} more" if len(paths) > limit else "")


def _errors_section(errors: Sequence[Mapping[str, Any]]) -> list[str]:
    if not errors:
        return []
    lines = [f"{_code(e['path'])} line {e['line']}, column {e['column']} ({e['source']}): "
             f"**{e['code']}** — {e['message']}" for e in errors]
    return ["", "### Configuration errors", "", *_bullets(lines)]


def _plan_sections(plan: Mapping[str, Any]) -> list[str]:
    out = ["", f"### Files to review ({len(plan['files'])})", ""]
    out += _bullets([_code(p) for p in plan["files"]]) or ["- none"]
    if plan["ignored"]:
        out += ["", f"Ignored: {_paths(plan['ignored'], 10)}"]
    out += ["", f"### Rules that apply ({len(plan['rules'])})", ""]
    rules = [f"{_code(r['id'])} ({r['source']}) — matched {_paths(r['matchedPaths'])}" for r in plan["rules"]]
    out += _bullets(rules) or ["- none"]
    if plan["context"]:
        out += ["", f"### Context files ({len(plan['context'])})", ""]
        out += _bullets([f"{_code(c['path'])} ({c['source']}) — {c['description']}" for c in plan["context"]])
    if plan["agentFiles"]:
        out += ["", f"Agent files: {_paths(plan['agentFiles'], 10)}"]
    models = plan["models"]
    comments = plan["comments"]
    out += ["", "### Settings", "",
            f"- models: review {_code(models['review'] or 'not set')}, fallback {_code(models['fallback'] or 'not set')}",
            f"- feedback: {plan['feedback']}; inline comments: {'on' if comments['inline'] else 'off'}",
            f"- requireSuggestedFix: {str(plan['requireSuggestedFix']).lower()}; approve: {str(plan['approve']).lower()}"]
    return out


def _notes_section(notes: Sequence[str]) -> list[str]:
    return ["", "### Notes", "", *_bullets(list(notes))] if notes else []


def report_for_plan(plan: Mapping[str, Any], notes: Sequence[str] = ()) -> CheckRunReport:
    """The check run for a plan alone (before or without a model review)."""
    errors = plan["errors"]
    notes = [*plan.get("notes", []), *notes]
    head_errors = [e for e in errors if e["source"] == "head"]
    reason = plan["skipReason"]
    if reason == "invalid-config":
        blocking = [e for e in errors if e["source"] != "head"]
        conclusion, title = "failure", f"Invalid configuration: {_count(blocking, 'error')}"
        body = ["The configuration at the merge base is invalid, so the review was skipped.",
                "Fix the errors below (each is also annotated at its line)."]
    elif reason is not None:
        conclusion, title = "neutral", SKIP_TITLES.get(reason, f"Skipped: {reason}")
        body = [f"Review skipped ({reason})."]
    else:
        conclusion = "success"
        title = f"Review planned: {_count(plan['files'], 'file')}, {_count(plan['rules'], 'rule')}"
        body = ["This is the plan the review follows."]
    if head_errors:
        conclusion = "failure"
        title = f"The changed configuration is invalid ({_count(head_errors, 'error')}); " + title[0].lower() + title[1:]
        body.append("This pull request changes the configuration file and its new version is invalid: "
                    "it was reviewed with the merge-base version.")
    sections = _errors_section(errors) + _notes_section(notes)
    if reason is None:
        sections = _plan_sections(plan) + sections
    return CheckRunReport(conclusion, title, "\n".join([*body, *sections]).strip() + "\n",
                          annotations=error_annotations(errors))


def report_for_failure(stage: str, reason: str) -> CheckRunReport:
    """A job that could not finish: the check run must not stay in progress."""
    return CheckRunReport("failure", f"Reviewer could not finish: {stage}",
                          f"Reviewer could not finish this run ({stage}).\n\n{reason}\n\n"
                          "Re-run the check to try again.\n")


def _decisions_section(decisions: Sequence[Mapping[str, Any]]) -> list[str]:
    lines = [f"**{d['kind']}**" + (f" review {d['reviewId']}" if d.get("reviewId") else "") + f" — {d['reason']}"
             + (f" (not done: {d['refused']})" if d.get("refused") else "") for d in decisions]
    return ["", "### Approval", "", *_bullets(lines)] if lines else []


def _failed_attempts(outcome: Mapping[str, Any]) -> list[str]:
    """Why a model was passed over when another one answered (a failed review's summary says it)."""
    if outcome["status"] != "completed":
        return []
    return [f"model {_code(a['model'])} gave no usable answer, so the next one was asked: {a['error']}"
            for a in outcome["attempts"] if a["error"]]


def _cost_section(output: Mapping[str, Any]) -> list[str]:
    """What the review's model calls came to (none when no model was asked)."""
    cost = output.get("cost")
    return ["", "### Cost", "", f"- {cost['line']}"] if cost else []


def _left_out_section(output: Mapping[str, Any]) -> list[str]:
    """Every changed file the review did not read whole, by name, and why: never cut short."""
    items = output.get("leftOut") or []
    if not items:
        return []
    return ["", f"### Left out of this review ({len(items)})", "",
            *(f"- {_code(item['path'])} — {item['why']}" for item in items)]


def _refuted_section(output: Mapping[str, Any]) -> list[str]:
    """The findings a verifier refuted (verify: true), each with its reason: not posted on the pull
    request, so said here, where whoever doubts the verifier can check it."""
    refuted = (output.get("verification") or {}).get("refutedFindings") or []
    if not refuted:
        return []
    return ["", f"### Refuted by a second look, not posted ({len(refuted)})", "",
            *(f"- {_code(str(item['path']) + ':' + str(item['startLine']))} **{item['severity']}** "
              f"{_one_line(item['message'])} — refuted: {_one_line(item['reason'])}" for item in refuted)]


def _one_line(text: str, limit: int = 300) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def with_review(plan_report: CheckRunReport, outcome: Mapping[str, Any], summary: str,
                notes: Sequence[str] = ()) -> CheckRunReport:
    """The plan's report joined with what the review found (`outcome` is `ReviewOutput.to_json()`).

    A failing plan (the changed configuration is invalid) keeps the run failed whatever the review
    found; otherwise the review's conclusion stands.
    """
    conclusion = outcome["conclusion"]
    title = outcome["title"]
    if plan_report.conclusion == "failure":
        conclusion = "failure"
        title = plan_report.title.split(";")[0] + "; " + title[0].lower() + title[1:]
    text = summary.replace("<!-- reviewer:summary -->", "").strip()
    # The review's summary lists its own notes (the repository index's line among them): a note
    # it already says is not said again beneath it.
    unsaid = [n for n in [*_failed_attempts(outcome), *notes] if n not in text]
    body = [text, *_decisions_section(outcome["decisions"]), *_cost_section(outcome), *_left_out_section(outcome),
            *_refuted_section(outcome),
            *_notes_section(unsaid), "", "---", "", "## The plan", "", plan_report.summary]
    return CheckRunReport(conclusion, title, "\n".join(body).strip() + "\n",
                          annotations=[*plan_report.annotations, *outcome["annotations"]])
