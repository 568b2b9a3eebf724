"""What the index adds to one review: definitions, callers, related code, ranked and within budget.

What a reviewer reaches for: the definitions of the names that changed lines use (defined in
other files) and the callers of the functions whose definition changed, taking turns for the
budget (three definitions, then a caller), and last code that search finds for the same names. Files the pull request changes are read at the head
(their text is given), never from the index. Every piece says which changed line asked for it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from bot.index.model import Definition, FileSymbols, Located, Piece
from bot.index.parse import parse_symbols
from bot.index.store import IndexStore

CALLABLE = frozenset({"function", "method", "constructor", "macro", "variable"})
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")


@dataclass(frozen=True, slots=True)
class ChangedFile:
    """One file of the change: its text at the head (None when deleted) and its changed lines."""

    path: str
    head_text: str | None
    added: tuple[tuple[int, str], ...]  # (new-file line, text) of every added line
    touched: tuple[int, ...]  # new-file lines added, or next to a removal


@dataclass(frozen=True, slots=True)
class Settings:
    max_definitions_per_name: int = 2
    ambiguous_name: int = 8  # a name defined in more files than this is too common to guess from
    max_callers_per_name: int = 8
    caller_window: int = 6  # lines either side of a call in a long caller
    max_related: int = 3
    max_piece_lines: int = 40
    related_window: int = 8  # lines either side of the first mention
    max_search_words: int = 16


DEFAULT_SETTINGS = Settings()


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


@dataclass
class _Candidate:
    path: str
    start: int
    end: int
    symbol: str
    kind: str
    reason: str


class _Texts:
    """File texts: the head's for changed files, the index's for the rest; read once each."""

    def __init__(self, store: IndexStore, changes: Sequence[ChangedFile]) -> None:
        self._store = store
        self._cache: dict[str, list[str] | None] = {
            c.path: (c.head_text.splitlines() if c.head_text is not None else None) for c in changes}

    def lines(self, path: str) -> list[str] | None:
        if path not in self._cache:
            text = self._store.text(path)
            self._cache[path] = text.splitlines() if text is not None else None
        return self._cache[path]


def _uses(change: ChangedFile, symbols: FileSymbols) -> dict[str, int]:
    """Names used on the added lines → the line to name as the reason: the first that calls it
    (`name(`), else the first that uses it (an import). A file no grammar reads (a Makefile, a
    YAML file) has words, not names: they feed search, not definitions."""
    added = dict(change.added)
    uses: dict[str, int] = {}
    for name, lines in symbols.references.items():
        hits = sorted(n for n in lines if n in added)
        if hits:
            call = re.compile(rf"\b{re.escape(name)}\s*\(")
            uses[name] = next((n for n in hits if call.search(added[n])), hits[0])
    return uses


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


def _is_test(path: str) -> bool:
    parts = path.lower().split("/")
    name = parts[-1]
    return any(p in ("test", "tests", "spec", "__tests__") for p in parts[:-1]) or name.startswith("test_") \
        or ".test." in name or ".spec." in name or name.endswith(("_test.go", "_test.py", "test.java"))


def _changed_functions(change: ChangedFile, symbols: FileSymbols) -> dict[str, tuple[int, bool]]:
    """Callables whose definition holds a touched line → (that line, whether it is a method)."""
    out: dict[str, tuple[int, bool]] = {}
    for d in symbols.definitions:
        if d.kind not in CALLABLE:
            continue
        hit = next((n for n in change.touched if d.start <= n <= d.end), None)
        if hit is not None:
            out.setdefault(d.name, (hit, bool(d.scope)))
    return out


def _distance(a: str, b: str) -> int:
    """How far apart two paths are in the tree: a definition next to the change ranks first."""
    pa, pb = a.split("/")[:-1], b.split("/")[:-1]
    common = 0
    for x, y in zip(pa, pb, strict=False):
        if x != y:
            break
        common += 1
    return len(pa) + len(pb) - 2 * common


def _definitions(uses: dict[tuple[str, str], int], found: list[Located], settings: Settings) -> list[_Candidate]:
    by_name: dict[str, list[Located]] = {}
    for loc in found:
        by_name.setdefault(loc.definition.name, []).append(loc)
    out: list[tuple[tuple, _Candidate]] = []
    for (path, name), line in uses.items():
        places = [loc for loc in by_name.get(name, []) if loc.path != path]
        files = {loc.path for loc in places}
        if not places or len(files) > settings.ambiguous_name:
            continue
        places.sort(key=lambda loc: (_distance(loc.path, path), loc.path, loc.definition.start))
        for loc in places[: settings.max_definitions_per_name]:
            d = loc.definition
            # Functions before types (a call names the function; its class comes along when it
            # is small), names defined once before shared ones, top-level before methods (a
            # method's name is often shared by unrelated classes), code before tests.
            rank = (0 if d.kind in CALLABLE else 1, len(files) > 1, bool(d.scope),
                    _is_test(loc.path) and not _is_test(path), len(files), path, line)
            label = f"{d.scope}.{d.name}" if d.scope else d.name
            out.append((rank, _Candidate(loc.path, d.start, d.end, label, "definition",
                                         f"{name} is used on {path}:{line}")))
    return [c for _, c in sorted(out, key=lambda item: item[0])]


def _enclosing(definitions: Iterable[Definition], line: int) -> Definition | None:
    best = None
    for d in definitions:
        if d.start <= line <= d.end and d.kind in CALLABLE and (best is None or d.start >= best.start):
            best = d
    return best


def _callers(store: IndexStore, changed_fns: dict[str, tuple[str, int, bool]], changed: set[str],
             settings: Settings) -> list[_Candidate]:
    """Uses of the changed functions in unchanged files, the function's own enclosing each. A
    method's name used in many files is most often another class's method (`join`, `get`), so
    such names give no callers; callers of top-level functions rank first."""
    refs = [r for r in store.references(changed_fns, limit=5000) if r.path not in changed]
    spread: dict[str, int] = {}
    for ref in refs:
        spread[ref.name] = spread.get(ref.name, 0) + 1
    refs = [r for r in refs if not (changed_fns[r.name][2] and spread[r.name] > settings.ambiguous_name)]
    refs.sort(key=lambda r: (changed_fns[r.name][2], spread[r.name], -len(r.lines), r.path))
    per_name: dict[str, int] = {}
    out: list[_Candidate] = []
    defs_cache: dict[str, list[Definition]] = {}
    for ref in refs:
        if per_name.get(ref.name, 0) >= settings.max_callers_per_name:
            continue
        per_name[ref.name] = per_name.get(ref.name, 0) + 1
        path, line, _ = changed_fns[ref.name]
        defs = defs_cache.setdefault(ref.path, store.definitions_in(ref.path))
        # The first use inside a function is the call; one outside (an import, a prototype) is not.
        inside = [(line, _enclosing(defs, line)) for line in ref.lines]
        first, outer = next(((n, d) for n, d in inside if d is not None), (ref.lines[0], None))
        start, end = max(1, first - settings.caller_window), first + settings.caller_window
        if outer is not None and outer.end - outer.start < 2 * settings.caller_window + 4:
            start, end = outer.start, outer.end  # a short caller is shown whole
        elif outer is not None:
            start = max(start, outer.start)
            end = min(end, outer.end)
        symbol = outer.name if outer else ref.name
        out.append(_Candidate(ref.path, start, end, symbol, "caller",
                              f"uses {ref.name}, whose definition changed at {path}:{line}"))
    return out


def _related(store: IndexStore, texts: _Texts, words: dict[str, str], changed: set[str], taken: set[str],
             settings: Settings) -> list[_Candidate]:
    out: list[_Candidate] = []
    for path in store.search(list(words), limit=settings.max_related * 4):
        if path in changed or path in taken or len(out) >= settings.max_related:
            continue
        lines = texts.lines(path) or []
        hit = next(((i + 1, w) for i, text in enumerate(lines) for w in words if w in text), None)
        if hit is None:
            continue
        line, word = hit
        out.append(_Candidate(path, max(1, line - settings.related_window), line + settings.related_window,
                              word, "related", f"mentions {word}, as {words[word]} does"))
    return out


def _piece(c: _Candidate, texts: _Texts, settings: Settings) -> Piece | None:
    lines = texts.lines(c.path)
    if not lines:
        return None
    end = min(c.end, len(lines), c.start + settings.max_piece_lines - 1)
    if c.start > end:
        return None
    return Piece(c.path, c.start, end, c.symbol, c.kind, c.reason, "\n".join(lines[c.start - 1:end]))


def _overlaps(piece: Piece, taken: list[Piece]) -> bool:
    return any(p.path == piece.path and p.start <= piece.end and piece.start <= p.end for p in taken)


def retrieve(store: IndexStore, changes: Sequence[ChangedFile], budget: int,
             settings: Settings = DEFAULT_SETTINGS) -> Retrieval:
    """The pieces of context for `changes`, best first, whose texts fit in `budget` bytes."""
    changed = {c.path for c in changes}
    head = {c.path: parse_symbols(c.path, c.head_text) for c in changes if c.head_text is not None}
    uses: dict[tuple[str, str], int] = {}
    changed_fns: dict[str, tuple[str, int, bool]] = {}
    for change in changes:
        symbols = head.get(change.path)
        if symbols is None:
            continue
        own = {d.name for d in symbols.definitions}
        for name, line in _uses(change, symbols).items():
            if name not in own:
                uses[(change.path, name)] = line
        for name, (line, method) in _changed_functions(change, symbols).items():
            changed_fns.setdefault(name, (change.path, line, method))
    names = {name for _, name in uses}
    found = [loc for loc in store.definitions(names, limit=5000) if loc.path not in changed]
    found += [Located(p, d) for p, s in head.items() for d in s.definitions if d.name in names]
    # Definitions and callers take turns (three definitions, then a caller), so that a change using many names still gets the
    # callers of what it changed within the budget (and the other way round).
    candidates = _alternate(_definitions(uses, found, settings),
                            _callers(store, changed_fns, changed, settings))
    texts = _Texts(store, changes)
    words = {name: f"{path}:{line}" for (path, name), line in uses.items()}
    for change in changes:
        if change.path in head and head[change.path].language is None:
            for word, line in _words(change).items():
                words.setdefault(word, f"{change.path}:{line}")
    telling = sorted((w for w in words if _telling(w)), key=lambda w: (-len(w), w))[: settings.max_search_words]
    candidates += _related(store, texts, {w: words[w] for w in telling}, changed, {c.path for c in candidates},
                           settings)
    return _fit(candidates, texts, budget, settings)


def _alternate(first: list[_Candidate], second: list[_Candidate], ratio: int = 3) -> list[_Candidate]:
    """`ratio` of `first`, then one of `second`, and so on, until both are used up."""
    out: list[_Candidate] = []
    for index in range(max(len(first), len(second) * ratio)):
        out += first[index:index + 1]
        if index % ratio == ratio - 1:
            out += second[index // ratio:index // ratio + 1]
    return out


def _fit(candidates: list[_Candidate], texts: _Texts, budget: int, settings: Settings) -> Retrieval:
    result = Retrieval(budget=budget)
    for candidate in candidates:
        piece = _piece(candidate, texts, settings)
        if piece is None or _overlaps(piece, result.pieces):
            continue
        size = len(piece.text.encode("utf-8")) + len(piece.label) + len(piece.reason) + 32
        if result.used + size > budget:
            result.left_out += 1
            continue
        result.pieces.append(piece)
        result.used += size
    return result
