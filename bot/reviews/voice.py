"""What the pull request reads of a head's ledger (pure): the body of the one review that carries the
inline comments, an upload's review, and a finding listed in a body. Every number in them is the
ledger's (bot/reviews/ledger.py), so that the review, the summary comment and the check run agree.
"""

from __future__ import annotations

from collections.abc import Iterable

from bot.reviews.ledger import Entry, Ledger

MAX_SHOWN_CHARS = 2000


def review_body(ledger: Ledger, mark: str = "") -> str:
    """"Reviewer at `abc1234`: this review posts 3 findings, 2 of them inline. 4 findings stand at
    this head: … (model 3, ruff 1). The summary comment has the overview." """
    posting, inline = len(ledger.posting), len(ledger.inline)
    text = (f"**Reviewer** at `{ledger.head_sha[:7]}`: this review posts {_findings(posting)}, "
            f"{inline} of them inline. {ledger.standing().line()} The summary comment has the overview.")
    return f"{mark}\n{text}" if mark else text


def upload_body(ledger: Ledger, mark: str = "") -> str:
    """The body of an upload's one review: what it adds (the ledger holds the upload's findings
    alone), the findings it could not place inline, and its notes."""
    tools = ", ".join(sorted({plain(e.tool or e.source) for e in ledger.posting}))
    parts = [f"**Reviewer**: an upload ({tools}) adds {_findings(len(ledger.posting))} at "
             f"`{ledger.head_sha[:7]}`, {len(ledger.inline)} inline."]
    listed = [e for e in ledger.posting if not e.inline]
    if listed:
        parts += ["", "Not placed inline:", *listing(listed)]
    if ledger.notes:
        parts += ["", *(f"_{note}_" for note in ledger.notes)]
    body = "\n".join(parts)
    return f"{mark}\n{body}" if mark else body


def listing(entries: Iterable[Entry]) -> list[str]:
    """One line per finding: "- **minor** · style · `src/a.py` line 3: message (ruff F401)"."""
    out = []
    for e in entries:
        f = e.finding
        lines = f"line {f.start_line}" if f.start_line == f.end_line else f"lines {f.start_line}–{f.end_line}"
        out.append(f"- **{f.severity}** · {f.category} · {code_span(f.path)} {lines}: {shown(f.message)}")
    return out


def code_span(text: str) -> str:
    """A name (a path) as one Markdown code span that nothing in it can end early."""
    return f"`{plain(text)}`"


def plain(name: str) -> str:
    """A name (a tool's, a path) on one line, with no backtick and no way to open a marker."""
    return shown(" ".join(name.split()).replace("`", "'"))


def shown(text: str) -> str:
    """Text cut short, unable to open or close an HTML comment (the app's markers)."""
    text = text.strip()
    if len(text) > MAX_SHOWN_CHARS:
        text = text[:MAX_SHOWN_CHARS - 1] + "…"
    return text.replace("<!--", "&lt;!--").replace("-->", "--&gt;")


def _findings(count: int) -> str:
    return f"{count} finding{'s' if count != 1 else ''}"
