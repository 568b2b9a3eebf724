"""Analyzer findings fed to the head's ledger (pure; bot/reviews/ledger.py): shaped by the
repository's `feedback`, `comments` and `requireSuggestedFix` as a model's findings are
(bot/reviews/shaping.py), marked posted before when the pull request has them already (the same
fingerprint, or the same rule at overlapping lines of the same file, whichever source posted it:
the `review_findings` rows, bot/store/reviews.py), and rendered as inline comments. The ledger puts
them beside the model's in the one review of the head; bot/reviews/overlap.py keeps the model from
saying again what they say.

A secret scanner's finding is remembered with no code ("" — the line holds the secret) and its
message never quotes the value (bot/analyzers/builtin/secrets.py makes it so).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace

from bot.analyzers.builtin.secrets import TOOL as SECRETS_TOOL
from bot.analyzers.filter import Placement
from bot.analyzers.findings import AnalyzerFinding
from bot.analyzers.neutral import https_link, plain_text
from bot.reviews.diff import FilePatch, in_diff
from bot.reviews.findings import Finding
from bot.reviews.fingerprints import PostedFinding, code_of
from bot.reviews.ledger import Entry, same_rule_at
from bot.reviews.markdown import suggestion
from bot.reviews.shaping import MINIMAL_CATEGORIES

MAX_MESSAGE_CHARS = 2000
MAX_NAME_CHARS = 200  # a tool's, a rule's or a path's name as shown


@dataclass(frozen=True)
class Fed:
    """What the analyzers give the ledger at one head, and what their shaping left out, in words."""

    entries: tuple[Entry, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def new(self) -> tuple[Entry, ...]:
        return tuple(e for e in self.entries if e.posting)


def entries(placement: Placement, plan: dict, posted: Iterable[PostedFinding],
            patches: Mapping[str, FilePatch]) -> Fed:
    """The placed findings as the plan's feedback settings keep them, each an entry of the ledger;
    `posted`: the pull request's posted findings, of every source."""
    feedback = plan.get("feedback", "standard")
    inline_on = bool((plan.get("comments") or {}).get("inline", True))
    require_fix = bool(plan.get("requireSuggestedFix"))
    rows = list(posted)
    prints = {row.fingerprint for row in rows}
    out: list[Entry] = []
    minimal = 0
    placed = [(f, True) for f in placement.inline] + [(f, False) for f in placement.summary]
    for finding, is_inline in placed:
        if feedback == "minimal" and finding.category not in MINIMAL_CATEGORIES:
            minimal += 1
            continue
        entry = entry_of(finding, patches)
        if require_fix and finding.fix is None:
            out.append(replace(entry, withheld=True))
            continue
        before = finding.fingerprint in prints or any(same_rule_at(entry, row) for row in rows)
        inline = is_inline and inline_on and not (feedback == "standard" and finding.severity == "nit")
        out.append(replace(entry, posted_before=before, inline=inline and not before))
    return Fed(tuple(out), tuple(_notes(placement, minimal, out)))


def entry_of(finding: AnalyzerFinding, patches: Mapping[str, FilePatch]) -> Entry:
    """One analyzer finding as the ledger holds it: its message and label made safe to show, its
    inline comment rendered, its code as its memory row keeps it (none for a secret)."""
    shown = finding.to_finding()
    label = plain_name(f"{finding.tool} {finding.rule_id}" if finding.rule_id else finding.tool)
    rules = (finding.rule_id,) if finding.rule_id else ()
    shown = Finding(shown.path, shown.start_line, shown.end_line, shown.severity, shown.category,
                    f"{_message(finding)} ({label})", shown.suggested_fix, rules)
    return Entry(shown, finding.source, finding.fingerprint,
                 in_diff(patches.get(finding.path), finding.start_line, finding.end_line),
                 rule=finding.rule_id, comment=comment_body(finding),
                 code=posted_record(finding, patches, "").code, plain=f"{_cut(finding.message)} ({label})")


def _notes(placement: Placement, minimal: int, out: list[Entry]) -> Iterable[str]:
    yield from _placement_notes(placement)
    if minimal:
        yield f"{minimal} analyzer finding(s) left out by `feedback: minimal`"
    withheld = sum(e.withheld for e in out)
    if withheld:
        yield f"{withheld} analyzer finding(s) withheld by `requireSuggestedFix` (no fix)"
    before = sum(e.posted_before for e in out)
    if before:
        yield f"{before} analyzer finding(s) were posted on this pull request before"


def _placement_notes(placement: Placement) -> Iterable[str]:
    for tool, count in sorted(placement.dropped.items()):
        yield f"{plain_name(tool)}: {count} result(s) outside the diff filter were dropped"
    for tool, count in sorted(placement.over_cap.items()):
        yield f"{plain_name(tool)}: {count} result(s) past the inline cap went to the summary"


def _label(finding: AnalyzerFinding) -> str:
    tool = code_span(finding.tool)
    return f"{tool} {code_span(finding.rule_id)}" if finding.rule_id else tool


def code_span(text: str) -> str:
    """An uploader's name (a tool, a rule, a path) as one Markdown code span."""
    return f"`{plain_name(text)}`"


def plain_name(text: str) -> str:
    """An uploader's name on one line, cut short, with no backtick to end a code span early and no
    way to open or close an HTML comment (our markers): SARIF's `ruleId` and `tool.driver.name` are
    whatever the uploader wrote."""
    flat = " ".join(text.split()).replace("`", "'")
    if len(flat) > MAX_NAME_CHARS:
        flat = flat[:MAX_NAME_CHARS - 1] + "…"
    return _unmarked(flat)


def _unmarked(text: str) -> str:
    return text.replace("<!--", "&lt;!--").replace("-->", "--&gt;")


def _cut(message: str) -> str:
    """The tool's message, cut short."""
    text = message.strip()
    return text[:MAX_MESSAGE_CHARS - 1] + "…" if len(text) > MAX_MESSAGE_CHARS else text


def _message(finding: AnalyzerFinding) -> str:
    """The tool's message, cut short, shown as the plain text it is (bot/analyzers/neutral.py):
    no markup, mention, link or marker of its own."""
    return plain_text(_cut(finding.message))


def comment_body(finding: AnalyzerFinding) -> str:
    """An inline comment: severity, category, tool and rule, the message, a help link, the fix."""
    lines = [f"**{finding.severity}** · {finding.category} · {_label(finding)}", "", _message(finding)]
    if (link := https_link(finding.help_uri)) is not None:
        lines += ["", f"[About this rule]({link})"]
    if finding.fix is not None:
        lines += ["", suggestion(finding.fix.replacement)]
    return "\n".join(lines)


def posted_record(finding: AnalyzerFinding, patches: Mapping[str, FilePatch], head_sha: str) -> PostedFinding:
    """The `review_findings` row of a finding posted now: a secret's line is never kept."""
    code = ""
    if finding.tool != SECRETS_TOOL and finding.start_line and finding.end_line:
        code = code_of(patches.get(finding.path), finding.start_line, finding.end_line)
    start = finding.start_line or 1
    return PostedFinding(finding.fingerprint, finding.path, finding.severity, finding.category, code,
                         finding.to_finding().message, head_sha, finding.source, finding.rule_id, start,
                         finding.end_line or start)
