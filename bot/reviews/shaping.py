"""From the model's findings to what gets posted, as the configuration asks (source 2.1).

The steps run in a fixed order, each counting what it holds back, so the summary can say exactly
why a finding the model gave is not where the author might look for it:
`feedback: minimal` drops categories other than bug/risk/breaking-change/security (and `other`); then
`requireSuggestedFix` withholds findings without a fix; then rule ids are checked against the rules
that apply; then each finding is placed inline or in the summary (`comments.inline`, nits under
`standard`, lines outside the diff — which also decide nothing: bot/reviews/ledger.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from bot.reviews.diff import FilePatch, in_diff, placeable
from bot.reviews.findings import Finding

# `other` too: the model named a category of its own (bot.reviews.findings), and under minimal feedback
# it was asked for bugs, risks, breaking changes and security alone, so it may be any of them; a
# finding is never left out for our not knowing its label.
MINIMAL_CATEGORIES = frozenset({"bug", "risk", "breaking-change", "security", "other"})
RULE_TEXT_CHARS = 100


@dataclass(frozen=True, slots=True)
class Counts:
    """Findings that were not posted as the model gave them, by reason."""

    malformed: int = 0  # broke the findings schema
    over_limit: int = 0  # past the most findings one review posts
    without_fix: int = 0  # requireSuggestedFix: no suggested fix, not posted
    outside_diff: int = 0  # no line the diff shows: listed in the summary, and deciding nothing
    across_hunks: int = 0  # on the diff, but not within one hunk (GitHub takes no comment there): in the summary
    nits_in_summary: int = 0  # feedback standard: nits kept to the summary
    filtered_by_minimal: int = 0  # feedback minimal: category not bug/risk/breaking/security
    unknown_rule_ids: int = 0  # rule ids no applying rule has, removed from their findings
    already_posted: int = 0  # posted on the pull request before (same path, code and message)
    refuted: int = 0  # verify: true: refuted by the verifier, citing the lines it read; not posted

    def to_json(self) -> dict:
        return {
            "malformed": self.malformed,
            "overLimit": self.over_limit,
            "withoutFix": self.without_fix,
            "outsideDiff": self.outside_diff,
            "acrossHunks": self.across_hunks,
            "nitsInSummary": self.nits_in_summary,
            "filteredByMinimal": self.filtered_by_minimal,
            "unknownRuleIds": self.unknown_rule_ids,
            "alreadyPosted": self.already_posted,
            "refuted": self.refuted,
        }


@dataclass(frozen=True, slots=True)
class RuleRef:
    id: str
    text: str  # a short text naming what the rule checks


@dataclass(frozen=True, slots=True)
class Placed:
    finding: Finding  # its `rules` already reduced to known ids
    rules: tuple[RuleRef, ...]
    inline: bool  # True: an inline comment on the diff; False: listed in the summary


@dataclass(frozen=True, slots=True)
class ShapedFindings:
    posted: tuple[Placed, ...]  # in the model's order
    withheld: tuple[Finding, ...]  # requireSuggestedFix: found, but not posted for lacking a fix
    counts: Counts


def short_text(text: str) -> str:
    """The first non-empty line, without Markdown heading marks, cut to a short length."""
    for line in text.splitlines():
        line = line.strip().lstrip("#").strip()
        if line:
            return line if len(line) <= RULE_TEXT_CHARS else line[: RULE_TEXT_CHARS - 1] + "…"
    return ""


def rule_refs(plan: dict, files: Mapping[str, str]) -> dict[str, RuleRef]:
    """The rules that apply, by id, each with its short text (a file rule's from its content)."""
    refs: dict[str, RuleRef] = {}
    for rule in plan.get("rules", []):
        text = rule.get("rule")
        if text is None and rule.get("file"):
            text = short_text(files.get(rule["file"], "")) or f"see {rule['file']}"
        refs[rule["id"]] = RuleRef(rule["id"], short_text(text or "") or rule["id"])
    return refs


def shape_findings(
    findings: tuple[Finding, ...],
    plan: dict,
    *,
    patches: Mapping[str, FilePatch],
    files: Mapping[str, str],
) -> ShapedFindings:
    feedback = plan.get("feedback", "standard")
    inline_on = bool(plan.get("comments", {}).get("inline", True))
    require_fix = bool(plan.get("requireSuggestedFix"))
    known = rule_refs(plan, files)
    posted: list[Placed] = []
    withheld: list[Finding] = []
    minimal = no_fix = unknown = nits = outside = across = 0
    for finding in findings:
        if feedback == "minimal" and finding.category not in MINIMAL_CATEGORIES:
            minimal += 1
            continue
        if require_fix and finding.suggested_fix is None:
            no_fix += 1
            withheld.append(finding)
            continue
        kept = tuple(r for r in finding.rules if r in known)
        unknown += len(finding.rules) - len(kept)
        finding = replace(finding, rules=kept)
        inline = inline_on
        patch = patches.get(finding.path)
        if not in_diff(patch, finding.start_line, finding.end_line):
            inline, outside = False, outside + 1
        elif inline and feedback == "standard" and finding.severity == "nit":
            inline, nits = False, nits + 1
        elif inline and not placeable(patch, finding.start_line, finding.end_line):
            inline, across = False, across + 1
        posted.append(Placed(finding, tuple(known[r] for r in kept), inline))
    counts = Counts(
        without_fix=no_fix, outside_diff=outside, across_hunks=across, nits_in_summary=nits,
        filtered_by_minimal=minimal, unknown_rule_ids=unknown,
    )
    return ShapedFindings(tuple(posted), tuple(withheld), counts)
