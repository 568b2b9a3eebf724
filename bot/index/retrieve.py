"""What the index adds to one review: definitions, callers, related code, ranked and within budget.

What a reviewer reaches for: the definitions of the names that changed lines use, and every
function that uses what the change altered (a function, a method, a constant, a module's value),
taking turns for the budget (three definitions, then a caller), and last code that search finds
for the same names. Names are resolved, not only matched (bot/index/resolve.py): which of several
same-named definitions a use means is read from the file's imports, the use's qualifier and the
declared types around it. Callers come one piece per calling function (its uses merged), those in
the primary sources before tests and examples, as many as the budget holds (bot/index/lookup.py
finds them). Files the pull request changes are read at the head (their text is given), never
from the index. Every piece says which changed line asked for it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from bot.index.candidates import DEFAULT_SETTINGS, Candidate, ChangedFile, Settings
from bot.index.lookup import CALLABLE, Files, find_callers, find_definitions
from bot.index.store import IndexStore
from bot.store.index.model import Piece

__all__ = ["CALLABLE", "DEFAULT_SETTINGS", "ChangedFile", "Retrieval", "Settings", "retrieve"]
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")


@dataclass
class Retrieval:
    pieces: list[Piece] = field(default_factory=list)
    left_out: int = 0  # pieces ranked but over the budget
    used: int = 0  # bytes
    budget: int = 0

    def counts(self) -> dict[str, int]:
        out = {"definition": 0, "caller": 0, "related": 0}
        for piece in self.pieces:
            out[piece.kind] += 1
        return out

    def summary(self) -> str:
        """One line for the check run and the prompt."""
        c = self.counts()
        text = (f"Repository index: {c['definition']} definition(s), {c['caller']} caller(s), "
                f"{c['related']} related piece(s) ({self.used:,} of {self.budget:,} bytes)")
        return text + (f"; {self.left_out} more left out for the budget" if self.left_out else "")


def _words(change: ChangedFile) -> dict[str, int]:
    words: dict[str, int] = {}
    for line, text in change.added:
        for word in _WORD.findall(text):
            words.setdefault(word, line)
    return words


def _telling(word: str) -> bool:
    """A compound name (`parse_symbols`, `readPatches`) says what code is about; a plain word
    (`value`, `first`) is in every file and would make search slow and its answer arbitrary."""
    return len(word) >= 6 and ("_" in word.strip("_") or any(c.isupper() for c in word[1:]))


def _related(store: IndexStore, files: Files, words: dict[str, str], changed: set[str], taken: set[str],
             settings: Settings) -> list[Candidate]:
    out: list[Candidate] = []
    for path in store.search(list(words), limit=settings.max_related * 4):
        if path in changed or path in taken or len(out) >= settings.max_related:
            continue
        lines = files.lines(path) or []
        hit = next(((i + 1, w) for i, text in enumerate(lines) for w in words if w in text), None)
        if hit is None:
            continue
        line, word = hit
        out.append(Candidate(path, max(1, line - settings.related_window), line + settings.related_window,
                              word, "related", f"mentions {word}, as {words[word]} does"))
    return out


def _piece(c: Candidate, files: Files, settings: Settings, taken: list[Piece]) -> Piece | None:
    """The candidate's lines, none that a piece taken before holds. A piece of one kind overlapping
    one of another (a function the added lines use that also calls what the change altered) keeps
    its lines outside it, or else its anchor line alone (the call): the reader learns both why it
    is there and where, and sees the function's text once."""
    lines = files.lines(c.path)
    if not lines:
        return None
    start, end = c.start, min(c.end, len(lines), c.start + settings.max_piece_lines - 1)
    if start > end:
        return None
    over = [p for p in taken if p.path == c.path and p.start <= end and start <= p.end]
    if over and (any(p.kind == c.kind for p in over) or c.kind == "related"):
        return None
    if over:
        anchor = min(max(c.anchor or start, start), end)
        held = {n for p in over for n in range(p.start, p.end + 1)}
        if anchor in held:
            start = end = anchor
        else:
            while start < anchor and any(n in held for n in range(start, anchor)):
                start += 1
            end = next((n - 1 for n in range(anchor, end + 1) if n in held), end)
    return Piece(c.path, start, end, c.symbol, c.kind, c.reason, "\n".join(lines[start - 1:end]))


def retrieve(store: IndexStore, changes: Sequence[ChangedFile], budget: int,
             settings: Settings = DEFAULT_SETTINGS) -> Retrieval:
    """The pieces of context for `changes`, best first, whose texts fit in `budget` bytes."""
    changed = {c.path for c in changes}
    files = Files(store, changes)
    # Definitions and callers take turns (three definitions, then a caller), so that a change
    # using many names still gets the callers of what it changed within the budget (and the other
    # way round). What only tests and examples use (the code under test) comes after the callers:
    # a change to many tests would otherwise spend the budget on it before its callers.
    definitions = find_definitions(files, changes, store, settings)
    by_code = [d for d in definitions if not d.asked_by_test]
    candidates = _alternate(by_code, find_callers(files, changes, store, settings))
    candidates += [d for d in definitions if d.asked_by_test]
    words: dict[str, str] = {}
    for change in changes:
        where = files.uses(change.path) if change.head_text is not None else None
        added = {line for line, _ in change.added}
        if where is not None:
            for name, uses in where.uses.items():
                line = next((u.line for u in uses if u.line in added and not u.binding), None)
                if line is not None:
                    words.setdefault(name, f"{change.path}:{line}")
        elif change.head_text is not None:  # a file no grammar reads: its words feed search
            for word, line in _words(change).items():
                words.setdefault(word, f"{change.path}:{line}")
    telling = sorted((w for w in words if _telling(w)), key=lambda w: (-len(w), w))[: settings.max_search_words]
    candidates += _related(store, files, {w: words[w] for w in telling}, changed, {c.path for c in candidates},
                           settings)
    return _fit(candidates, files, budget, settings)


def _alternate(first: list[Candidate], second: list[Candidate], ratio: int = 3) -> list[Candidate]:
    """`ratio` of `first`, then one of `second`, and so on, until both are used up."""
    out: list[Candidate] = []
    for index in range(max(len(first), len(second) * ratio)):
        out += first[index:index + 1]
        if index % ratio == ratio - 1:
            out += second[index // ratio:index // ratio + 1]
    return out


def _fit(candidates: list[Candidate], files: Files, budget: int, settings: Settings) -> Retrieval:
    result = Retrieval(budget=budget)
    for candidate in candidates:
        piece = _piece(candidate, files, settings, result.pieces)
        if piece is None:
            continue
        size = len(piece.text.encode("utf-8")) + len(piece.label) + len(piece.reason) + 32
        if result.used + size > budget:
            result.left_out += 1
            continue
        result.pieces.append(piece)
        result.used += size
    return result
