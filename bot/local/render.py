"""A local review's report as text for a terminal, Markdown, or GitHub workflow commands (pure).

Text and Markdown group the findings by file, in path order, each with its lines at the head
(`lines`: a file's lines by path; a finding whose lines are not there is shown without them).
Workflow commands (`::error file=…,line=…::message`) make GitHub Actions annotate the lines:
blocking and important are `error`, minor `warning`, nit `notice`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import groupby

from bot.analyzers.neutral import plain_text
from bot.local.report import Report, Reported
from bot.reviews.findings import SEVERITIES
from bot.reviews.ledger import ANALYZER

MAX_SHOWN_LINES = 8  # of a finding's lines in text and Markdown; the rest is counted
COMMAND_LEVELS = {"blocking": "error", "important": "error", "minor": "warning", "nit": "notice"}


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def tally(findings: Sequence[Reported]) -> str:
    """`3 findings: 1 blocking, 2 minor`, or `no findings`."""
    if not findings:
        return "no findings"
    counts = [f"{sum(1 for f in findings if f.severity == s)} {s}" for s in SEVERITIES
              if any(f.severity == s for f in findings)]
    return f"{_plural(len(findings), 'finding')}: {', '.join(counts)}"


def _where(finding: Reported) -> str:
    if finding.start_line == finding.end_line:
        return f"line {finding.start_line}"
    return f"lines {finding.start_line}-{finding.end_line}"


def _label(finding: Reported) -> str:
    label = f"{finding.source} {finding.rule}" if finding.rule else finding.source
    return label if finding.in_diff else f"{label}, outside the diff"


def _shown(finding: Reported, lines: Mapping[str, Sequence[str]]) -> tuple[list[tuple[int, str]], int]:
    """(number, text) of the finding's lines at the head, at most MAX_SHOWN_LINES; how many more."""
    text = (lines.get(finding.path) or ()) if finding.quotable else ()
    numbers = [n for n in range(finding.start_line, finding.end_line + 1) if 1 <= n <= len(text)]
    return [(n, text[n - 1]) for n in numbers[:MAX_SHOWN_LINES]], max(0, len(numbers) - MAX_SHOWN_LINES)


def _header(report: Report) -> str:
    return (f"Reviewer: {report.base}...{report.head} (merge base {report.merge_base[:7]}, head "
            f"{report.head_sha[:7]}): {tally(report.findings)}")


def _usage_line(report: Report) -> str | None:
    spent = report.spent
    if not spent.calls:
        return None
    return (f"{', '.join(spent.models)}: {_plural(spent.calls, 'model call')}, {spent.prompt_tokens:,} prompt "
            f"tokens, {spent.answer_tokens:,} answer tokens")


def _status_lines(report: Report) -> list[str]:
    out = []
    if report.invalid_config is not None:
        out.append(f"The configuration is invalid: {report.invalid_config}")
        out += [f"  {e['path']}:{e['line']}:{e['column']}: {e['code']}: {e['message']} ({e['source']})"
                for e in report.plan.get("errors", [])]
    if report.status == "failed":
        out.append(f"The review could not be finished: {report.reason}")
    elif report.status == "skipped":
        out.append(f"The review was skipped: {report.reason}")
    elif report.status == "analyzers-only":
        out.append(f"No model reviewed the change ({report.reason}): only the analyzers ran.")
    return out


def render_text(report: Report, lines: Mapping[str, Sequence[str]]) -> str:
    out = [_header(report)]
    for path, group in groupby(report.findings, key=lambda f: f.path):
        out += ["", path]
        for finding in group:
            out.append(f"  {_where(finding)}  {finding.severity} · {finding.category} · {_label(finding)}")
            out += [f"    {line}" for line in finding.message.strip().splitlines()]
            shown, more = _shown(finding, lines)
            width = len(str(shown[-1][0])) if shown else 0
            out += [f"      {n:>{width}} | {text}" for n, text in shown]
            if more:
                out.append(f"      … {_plural(more, 'more line')}")
            if finding.suggested_fix is not None:
                out.append("    suggested fix:" if finding.suggested_fix else "    suggested fix: delete these lines")
                out += [f"      {line}" for line in finding.suggested_fix.splitlines()]
    tail = [*_status_lines(report), *filter(None, [_usage_line(report)]), *(f"note: {n}" for n in report.notes)]
    return "\n".join([*out, *([""] if tail else []), *tail]) + "\n"


def _fence(text: str) -> str:
    """A fence longer than any run of backticks in `text`."""
    longest = max((len(run) for run in text.split("\n") for run in _backtick_runs(run)), default=0)
    return "`" * max(3, longest + 1)


def _backtick_runs(line: str) -> list[str]:
    runs, current = [], ""
    for char in line:
        if char == "`":
            current += char
        elif current:
            runs.append(current)
            current = ""
    return [*runs, current] if current else runs


def _markdown_words(finding: Reported) -> str:
    """A finding's words on one line of Markdown: an analyzer's plain text shown as the text it is
    (bot/analyzers/neutral.py), as the App shows it."""
    words = " ".join(finding.message.split())
    return plain_text(words) if finding.source.startswith(ANALYZER) else words


def render_markdown(report: Report, lines: Mapping[str, Sequence[str]]) -> str:
    out = [f"## Reviewer: {tally(report.findings)}", "",
           f"`{report.base}...{report.head}`, merge base `{report.merge_base[:7]}`, head `{report.head_sha[:7]}`."]
    for path, group in groupby(report.findings, key=lambda f: f.path):
        out += ["", f"### `{path}`", ""]
        for finding in group:
            out.append(f"- **{finding.severity}** · {finding.category} · {_label(finding)} — {_where(finding)}: "
                       + _markdown_words(finding))
            shown, more = _shown(finding, lines)
            if shown:
                code = "\n".join(text for _, text in shown) + (f"\n… {_plural(more, 'more line')}" if more else "")
                fence = _fence(code)
                out += ["", f"  {fence}", *(f"  {line}" for line in code.splitlines()), f"  {fence}"]
            if finding.suggested_fix:
                fence = _fence(finding.suggested_fix)
                out += ["", "  Suggested fix:", "", f"  {fence}",
                        *(f"  {line}" for line in finding.suggested_fix.splitlines()), f"  {fence}", ""]
    tail = [*_status_lines(report), *filter(None, [_usage_line(report)]), *report.notes]
    if tail:
        out += ["", *(f"> {line}" for line in tail)]
    return "\n".join(out) + "\n"


def _data(text: str) -> str:
    """A workflow command's message: `%`, CR and LF escaped as the runner reads them."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    """A workflow command's property value: also `:` and `,`."""
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def render_github(report: Report) -> str:
    """One workflow command per finding, then one line saying what was found."""
    out = []
    for f in report.findings:
        title = f"Reviewer: {f.severity} {f.category} ({_label(f)})"
        properties = (f"file={_property(f.path)},line={f.start_line},endLine={f.end_line},"
                      f"title={_property(title)}")
        out.append(f"::{COMMAND_LEVELS[f.severity]} {properties}::{_data(f.message.strip())}")
    if report.invalid_config is not None:
        for e in report.plan.get("errors", []):
            out.append(f"::error file={_property(e['path'])},line={e['line']},col={e['column']},"
                       f"title={_property('Reviewer: ' + e['code'])}::{_data(e['message'])}")
    if report.status in ("failed", "skipped", "analyzers-only"):
        out.append(f"::{'error' if report.status == 'failed' else 'notice'}::"
                   f"{_data(_status_lines(report)[-1])}")
    out.append(_header(report))
    return "\n".join(out) + "\n"
