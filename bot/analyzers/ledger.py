"""Analyzer findings in the pull request's one ledger of findings (pure): shaped by the repository's
`feedback`, `comments` and `requireSuggestedFix` as a model's findings are (bot/reviews/shaping.py),
deduplicated by fingerprint against what was posted on the pull request before (the
`review_findings` rows, bot/store/reviews.py), and rendered as the comments of a review of their
own. Beside the model's findings they are set by bot/reviews/overlap.py.

A secret scanner's finding is remembered with no code ("" — the line holds the secret) and its
message never quotes the value (bot/analyzers/builtin/secrets.py makes it so).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from bot.analyzers.builtin.secrets import TOOL as SECRETS_TOOL
from bot.analyzers.filter import Placement
from bot.analyzers.findings import AnalyzerFinding
from bot.analyzers.neutral import https_link, plain_text
from bot.reviews.diff import FilePatch
from bot.reviews.fingerprints import PostedFinding, code_of
from bot.reviews.markdown import suggestion
from bot.reviews.shaping import MINIMAL_CATEGORIES

MAX_MESSAGE_CHARS = 2000
MAX_NAME_CHARS = 200  # a tool's, a rule's or a path's name as shown


@dataclass(frozen=True)
class Shaped:
    """What to post now, and what stands at this head (posted before or now, or withheld)."""

    inline: tuple[AnalyzerFinding, ...] = ()
    summary: tuple[AnalyzerFinding, ...] = ()
    withheld: tuple[AnalyzerFinding, ...] = ()  # requireSuggestedFix: no fix, not posted; still counted
    already: tuple[AnalyzerFinding, ...] = ()  # posted on the pull request before: not again
    filtered_by_minimal: int = 0
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def new(self) -> tuple[AnalyzerFinding, ...]:
        return self.inline + self.summary

    @property
    def standing(self) -> tuple[AnalyzerFinding, ...]:
        """Every analyzer finding at this head that decides approval and the check run."""
        return self.inline + self.summary + self.already + self.withheld


def shape(placement: Placement, plan: dict, posted: Iterable[str]) -> Shaped:
    """The placed findings as the plan's feedback settings keep them; `posted`: the fingerprints
    already on the pull request."""
    feedback = plan.get("feedback", "standard")
    inline_on = bool((plan.get("comments") or {}).get("inline", True))
    require_fix = bool(plan.get("requireSuggestedFix"))
    seen = set(posted)
    inline: list[AnalyzerFinding] = []
    summary: list[AnalyzerFinding] = []
    withheld: list[AnalyzerFinding] = []
    already: list[AnalyzerFinding] = []
    minimal = 0
    placed = [(f, True) for f in placement.inline] + [(f, False) for f in placement.summary]
    for finding, is_inline in placed:
        if feedback == "minimal" and finding.category not in MINIMAL_CATEGORIES:
            minimal += 1
            continue
        if require_fix and finding.fix is None:
            withheld.append(finding)
            continue
        if finding.fingerprint in seen:
            already.append(finding)
            continue
        seen.add(finding.fingerprint)
        if is_inline and inline_on and not (feedback == "standard" and finding.severity == "nit"):
            inline.append(finding)
        else:
            summary.append(finding)
    notes = list(_placement_notes(placement))
    if minimal:
        notes.append(f"{minimal} analyzer finding(s) left out by `feedback: minimal`")
    if withheld:
        notes.append(f"{len(withheld)} analyzer finding(s) withheld by `requireSuggestedFix` (no fix)")
    if already:
        notes.append(f"{len(already)} analyzer finding(s) were posted on this pull request before")
    return Shaped(tuple(inline), tuple(summary), tuple(withheld), tuple(already), minimal, tuple(notes))


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


def _message(finding: AnalyzerFinding) -> str:
    """The tool's message, cut short, shown as the plain text it is (bot/analyzers/neutral.py):
    no markup, mention, link or marker of its own."""
    text = finding.message.strip()
    if len(text) > MAX_MESSAGE_CHARS:
        text = text[:MAX_MESSAGE_CHARS - 1] + "…"
    return plain_text(text)


def comment_body(finding: AnalyzerFinding) -> str:
    """An inline comment: severity, category, tool and rule, the message, a help link, the fix."""
    lines = [f"**{finding.severity}** · {finding.category} · {_label(finding)}", "", _message(finding)]
    if (link := https_link(finding.help_uri)) is not None:
        lines += ["", f"[About this rule]({link})"]
    if finding.fix is not None:
        lines += ["", suggestion(finding.fix.replacement)]
    return "\n".join(lines)


def summary_line(finding: AnalyzerFinding) -> str:
    where = code_span(finding.path) + (f" line {finding.start_line}" if finding.start_line else "") \
        if finding.path else "(no file)"
    return f"- **{finding.severity}** · {finding.category} · {_label(finding)} — {where}: {_message(finding)}"


def review_body(shaped: Shaped, mark: str) -> str:
    """The body of the analyzers' review: counts, the findings not placed inline, the notes."""
    tools = sorted({plain_name(f.tool) for f in shaped.new})
    parts = [mark, f"Analyzers ({', '.join(tools)}): {len(shaped.new)} new finding(s), "
                   f"{len(shaped.inline)} inline."] if mark else \
        [f"Analyzers ({', '.join(tools)}): {len(shaped.new)} new finding(s), {len(shaped.inline)} inline."]
    if shaped.summary:
        parts += ["", "Findings outside the lines this pull request adds:", *map(summary_line, shaped.summary)]
    if shaped.notes:
        parts += ["", *(f"_{note}_" for note in shaped.notes)]
    return "\n".join(parts)


def posted_record(finding: AnalyzerFinding, patches: Mapping[str, FilePatch], head_sha: str) -> PostedFinding:
    """The `review_findings` row of a finding posted now: a secret's line is never kept."""
    code = ""
    if finding.tool != SECRETS_TOOL and finding.start_line and finding.end_line:
        code = code_of(patches.get(finding.path), finding.start_line, finding.end_line)
    return PostedFinding(finding.fingerprint, finding.path, finding.severity, finding.category, code,
                         finding.to_finding().message, head_sha)
