"""The ledger of one head (pure): every finding that stands there, from every source, counted once.

A pull request is read as one reviewer's work, so the numbers it shows must come from one place.
The engine feeds the ledger the model's findings (new, found again, carried from an earlier head,
withheld for lacking a fix) and the analyzers feed it theirs (bot/analyzers/feed.py); each is an
`Entry` with its source (`model` or `analyzer:<tool>`), its fingerprint, its place, whether it is
on the diff, and whether it was posted before. `build` keeps each finding once (the same
fingerprint, or an analyzer's same rule at overlapping lines of the same file), then spends one
noise budget over the inline comments of every source (`NoiseBudget`: the admin file's
`reviews.maxInlineComments` and `inlineSeverityFloor`). What the pull request shows is read from
the result: the check run's conclusion and title (`verdict`), the approval (`deciding`), the
summary's and the review's counts (`Standing`), what to post (`posting`, `inline`), and what to
remember (`records`).

Only the diff decides: a finding none of whose lines the pull request's diff shows is listed, and
counted as outside the diff, but fails no check run and withholds no approval.

Used without GitHub or a store: give `build` entries made from plain findings (`model_entry`,
or the analyzers' `bot.analyzers.feed.entries`), read `to_json()` for the findings with their
sources.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from bot.reviews.diff import FilePatch, in_diff
from bot.reviews.findings import SEVERITIES, Finding
from bot.reviews.fingerprints import PostedFinding, fingerprint
from bot.reviews.shaping import Placed, RuleRef

MODEL = "model"
ANALYZER = "analyzer:"  # + the tool's name
DEFAULT_MAX_INLINE = 10  # inline comments a review posts unless the admin file says otherwise
MAX_TITLE = 255
RANK = {severity: len(SEVERITIES) - index for index, severity in enumerate(SEVERITIES)}  # blocking highest


@dataclass(frozen=True, slots=True)
class Entry:
    """One finding that stands at a head, as one source found it."""

    finding: Finding  # an analyzer's message ends with its tool and rule: `... (ruff F401)`
    source: str  # MODEL, or ANALYZER + the tool's name
    fingerprint: str
    in_diff: bool  # one of its lines is a line the diff shows: it decides the check run and the approval
    posted_before: bool = False  # on the pull request already: counted, not posted again
    withheld: bool = False  # requireSuggestedFix: no fix to offer, so never posted; still counted
    inline: bool = False  # new, and posted as an inline comment (the source's wish, then the noise budget's)
    carried: bool = False  # posted at an earlier head and not repeated by an incremental review: lines as then
    rule: str | None = None  # an analyzer's rule id
    rules: tuple[RuleRef, ...] = ()  # the repository's rules a model finding names
    comment: str | None = None  # the inline comment its source rendered (analyzers); None: the review's templates
    code: str = ""  # its lines as the diff shows them, remembered with it ("" for a secret: never kept)
    # An analyzer's message as the plain text it is (its finding's message is the Markdown that shows
    # it, every punctuation mark escaped): for plain-text places, a check run's annotations and
    # `reviewer review`'s outputs. None: the finding's message is plain already (a model's).
    plain: str | None = None

    @property
    def text(self) -> str:
        """Its words as plain text."""
        return self.plain if self.plain is not None else self.finding.message

    @property
    def posting(self) -> bool:
        """New at this head and postable: this review posts it (inline or in the summary)."""
        return not self.posted_before and not self.withheld

    @property
    def tool(self) -> str | None:
        return self.source.removeprefix(ANALYZER) if self.source.startswith(ANALYZER) else None

    def record(self, head_sha: str) -> PostedFinding:
        """The review memory's row for it, once posted."""
        f = self.finding
        return PostedFinding(self.fingerprint, f.path, f.severity, f.category, self.code, f.message, head_sha,
                             self.source, self.rule, f.start_line, f.end_line)

    def to_json(self) -> dict[str, Any]:
        """The finding as `reviewer review --format json` prints it: `{path, startLine, endLine,
        severity, category, message, source, rule?, suggestedFix?}`."""
        f = self.finding
        out: dict[str, Any] = {"path": f.path, "startLine": f.start_line, "endLine": f.end_line,
                               "severity": f.severity, "category": f.category, "message": f.message,
                               "source": self.source}
        if self.rule:
            out["rule"] = self.rule
        if f.suggested_fix is not None:
            out["suggestedFix"] = f.suggested_fix
        return out

    def state_json(self) -> dict[str, Any]:
        """Where it stands in the ledger: its fingerprint, on the diff or not, posted or not."""
        return {"fingerprint": self.fingerprint, "inDiff": self.in_diff, "postedBefore": self.posted_before,
                "withheld": self.withheld, "inline": self.inline, "carried": self.carried}


@dataclass(frozen=True, slots=True)
class NoiseBudget:
    """How many inline comments one review posts, whatever their source, and the lowest severity
    posted inline (the admin file's `reviews`): the rest are listed in the summary, which says so."""

    max_inline: int | None = DEFAULT_MAX_INLINE  # None: no limit
    floor: str = "nit"


@dataclass(frozen=True, slots=True)
class Severities:
    blocking: int = 0
    important: int = 0
    minor: int = 0
    nit: int = 0

    @property
    def total(self) -> int:
        return self.blocking + self.important + self.minor + self.nit

    def words(self) -> str:
        return f"{self.blocking} blocking, {self.important} important, {self.minor} minor, {self.nit} nit"


def severities(entries: Iterable[Entry]) -> Severities:
    counted = Counter(e.finding.severity for e in entries)
    return Severities(counted["blocking"], counted["important"], counted["minor"], counted["nit"])


@dataclass(frozen=True)
class Ledger:
    """The findings that stand at `head_sha`, each once, in the order fed (the model's first)."""

    head_sha: str = ""
    entries: tuple[Entry, ...] = ()
    notes: tuple[str, ...] = ()  # what the noise budget moved, and findings two sources both made
    below_floor: int = 0
    over_cap: int = 0
    duplicates: int = 0

    @property
    def deciding(self) -> tuple[Entry, ...]:
        """What decides the check run and the approval: the findings on the diff."""
        return tuple(e for e in self.entries if e.in_diff)

    @property
    def outside(self) -> tuple[Entry, ...]:
        return tuple(e for e in self.entries if not e.in_diff)

    @property
    def posting(self) -> tuple[Entry, ...]:
        """What this review posts, every source, in order."""
        return tuple(e for e in self.entries if e.posting)

    @property
    def inline(self) -> tuple[Entry, ...]:
        return tuple(e for e in self.entries if e.posting and e.inline)

    @property
    def sources(self) -> dict[str, int]:
        """Standing findings by source: `{"model": 2, "ruff": 1}` (a tool by its name)."""
        counted = Counter(e.tool or e.source for e in self.entries)
        return dict(sorted(counted.items(), key=lambda item: (item[0] != MODEL, item[0])))

    def records(self) -> tuple[PostedFinding, ...]:
        """The review memory's rows of what this review posts."""
        return tuple(e.record(self.head_sha) for e in self.posting)

    def standing(self) -> Standing:
        return Standing.of(self)

    def to_json(self) -> dict[str, Any]:
        return {"headSha": self.head_sha, "findings": [{**e.to_json(), **e.state_json()} for e in self.entries],
                "standing": self.standing().to_json(), "notes": list(self.notes)}


@dataclass(frozen=True, slots=True)
class Standing:
    """The numbers every place shows for a head (summary, check run, review body, approval)."""

    all: Severities
    deciding: Severities
    outside: int
    withheld: int
    posting: int
    inline: int
    sources: tuple[tuple[str, int], ...]

    @classmethod
    def of(cls, ledger: Ledger) -> Standing:
        return cls(severities(ledger.entries), severities(ledger.deciding), len(ledger.outside),
                   sum(e.withheld for e in ledger.entries), len(ledger.posting), len(ledger.inline),
                   tuple(ledger.sources.items()))

    @property
    def total(self) -> int:
        return self.all.total

    def by_source(self) -> str:
        """"model 2, ruff 1": a breakdown names sources, never severities."""
        return ", ".join(f"{name} {count}" for name, count in self.sources)

    def line(self) -> str:
        """One sentence: "3 findings stand at this head: 1 blocking, 1 important, 1 minor, 0 nit
        (model 2, ruff 1); 1 outside the diff, which decides nothing." """
        if not self.total:
            return "No findings stand at this head."
        noun = "finding stands" if self.total == 1 else "findings stand"
        out = f"{self.total} {noun} at this head: {self.all.words()} ({self.by_source()})"
        if self.outside:
            out += f"; {self.outside} outside the diff, which {'decides' if self.outside == 1 else 'decide'} nothing"
        return out + "."

    def to_json(self) -> dict[str, Any]:
        return {"total": self.total, "blocking": self.all.blocking, "important": self.all.important,
                "minor": self.all.minor, "nit": self.all.nit, "deciding": self.deciding.total,
                "outsideDiff": self.outside, "withheld": self.withheld, "posted": self.posting,
                "inline": self.inline, "sources": [f"{name} {count}" for name, count in self.sources],
                "line": self.line()}


DEFAULT_BUDGET = NoiseBudget()


def build(head_sha: str, found: Iterable[Entry], budget: NoiseBudget = DEFAULT_BUDGET) -> Ledger:
    """The ledger of `found` (every source's entries, the model's first): each finding once, the
    noise budget spent over the new inline comments of every source."""
    kept: list[Entry] = []
    prints: set[str] = set()
    duplicates = 0
    for entry in found:
        if entry.fingerprint in prints or any(same_rule_at(entry, other) for other in kept):
            duplicates += 1
            continue
        prints.add(entry.fingerprint)
        kept.append(entry)
    spent, below, over = _spend(kept, budget)
    notes = _budget_notes(below, over, budget)
    if duplicates:
        notes.append(f"{duplicates} finding(s) two sources both made (the same fingerprint, or the same rule at the "
                     "same lines) are counted and posted once")
    return Ledger(head_sha, tuple(spent), tuple(notes), below, over, duplicates)


def same_rule_at(entry: Entry, other: Entry | PostedFinding) -> bool:
    """Whether two findings are one rule's at one place: the same path, overlapping lines and the
    same rule id (CI's ruff and the built-in ruff, say). A model finding has no rule id."""
    if not entry.rule or entry.rule != other.rule:
        return False
    theirs = other.finding if isinstance(other, Entry) else other
    start, end = (theirs.start_line, theirs.end_line)
    ours = entry.finding
    return theirs.path == ours.path and start <= ours.end_line and ours.start_line <= end and end > 0


def _spend(entries: list[Entry], budget: NoiseBudget) -> tuple[list[Entry], int, int]:
    """The entries with the inline flags the budget leaves: below the floor to the summary, then
    past the limit the lowest severities first (of one severity, the later ones first)."""
    floor = RANK.get(budget.floor, 0)
    lowest = min(RANK.values())
    wanted = [i for i, e in enumerate(entries) if e.posting and e.inline]
    moved: set[int] = set()
    for i in wanted:
        # The lowest floor is no floor: a severity we do not know (rank 0) moves only under a higher one.
        if floor > lowest and RANK.get(entries[i].finding.severity, 0) < floor:
            moved.add(i)
    below = len(moved)
    left = [i for i in wanted if i not in moved]
    over = max(0, len(left) - budget.max_inline) if budget.max_inline is not None else 0
    moved.update(sorted(left, key=lambda i: (RANK.get(entries[i].finding.severity, 0), -i))[:over])
    return [replace(e, inline=False) if i in moved else e for i, e in enumerate(entries)], below, over


def _budget_notes(below: int, over: int, budget: NoiseBudget) -> list[str]:
    out = []
    if below:
        out.append(f"{_findings(below)} below the inline floor ({budget.floor}) {'is' if below == 1 else 'are'} "
                   "listed in this summary only")
    if over:
        out.append(f"{_findings(over)} past the limit of {budget.max_inline} inline comments a review "
                   f"{'is' if over == 1 else 'are'} listed in this summary only (the lowest severities first)")
    return out


def _findings(count: int) -> str:
    return f"{count} finding{'s' if count != 1 else ''}"


def verdict(ledger: Ledger, *, held_by_budget: bool = False) -> tuple[str, str]:
    """(conclusion, title) of the check run for a completed review, from the findings on the diff.
    A review a budget held (no model ran) is `neutral`, unless a blocking finding fails it."""
    deciding = severities(e for e in ledger.deciding if not e.withheld)
    held = severities(e for e in ledger.deciding if e.withheld)
    blocking, important = deciding.blocking + held.blocking, deciding.important + held.important
    note = f" ({held.blocking} withheld: no suggested fix)" if held.blocking else ""
    outside = f"; {len(ledger.outside)} outside the diff" if ledger.outside else ""
    if blocking:
        return "failure", f"{blocking} blocking finding(s){note}{outside}"[:MAX_TITLE]
    calm = "neutral" if held_by_budget else "success"
    if important:
        return calm, f"{important} important finding(s), nothing blocking{outside}"[:MAX_TITLE]
    return calm, ("Nothing blocking or important" if ledger.entries else "No findings") + outside


def model_entry(placed: Placed, patches: Mapping[str, FilePatch], *, posted_before: bool = False) -> Entry:
    """A model finding placed by shaping (bot/reviews/shaping.py) as an entry of the ledger."""
    f = placed.finding
    printed = fingerprint(f, patches)
    return Entry(f, MODEL, printed.fingerprint, in_diff(patches.get(f.path), f.start_line, f.end_line),
                 posted_before=posted_before, inline=placed.inline, rules=placed.rules, code=printed.code)


def withheld_entry(finding: Finding, patches: Mapping[str, FilePatch]) -> Entry:
    """A model finding `requireSuggestedFix` holds back: counted, never posted."""
    printed = fingerprint(finding, patches)
    return Entry(finding, MODEL, printed.fingerprint, in_diff(patches.get(finding.path), finding.start_line,
                 finding.end_line), withheld=True, code=printed.code)


def carried_entry(posted: PostedFinding) -> Entry:
    """An earlier model finding an incremental review could not repeat and which still stands (its
    code is unchanged: bot/reviews/fingerprints.py `still_standing`). It is on the diff when its
    code is; its lines are those of the head it was posted at."""
    start = posted.start_line or 1
    finding = Finding(posted.path, start, max(posted.end_line, start), posted.severity, posted.category,
                      posted.message)
    return Entry(finding, posted.source, posted.fingerprint, bool(posted.code), posted_before=True, carried=True,
                 rule=posted.rule, code=posted.code)


def from_json(data: Mapping[str, Any]) -> Ledger:
    """A ledger as `asdict` wrote it (a job's journal, bot/pipeline/journal.py)."""
    entries = tuple(Entry(**{**e, "finding": Finding(**{**e["finding"], "rules": tuple(e["finding"]["rules"])}),
                             "rules": tuple(RuleRef(**r) for r in e["rules"])}) for e in data["entries"])
    return Ledger(data["head_sha"], entries, tuple(data["notes"]), data["below_floor"], data["over_cap"],
                  data["duplicates"])


def placed(entries: Sequence[Entry]) -> tuple[Placed, ...]:
    """Entries as shaping's placed findings (the templates' and the annotations' reading)."""
    return tuple(Placed(e.finding, e.rules, e.inline) for e in entries)



EMPTY = Ledger()
