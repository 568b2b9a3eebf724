"""What a model's lookups read: a name's definitions, its callers, a search, a file's lines (pure).

A review's model may ask for more than retrieval gave it (bot/engine/lookups.py offers the
tools). The answers come from the same two places as retrieval's: the files the pull request
changes, read at its head, and the rest from the repository index (the default branch); a
changed file is never read from the index, where its text is stale. Names are resolved as
retrieval resolves them (bot/index/lookup.py): a definition asked for with the place that uses
it is the one that use means; callers are every function that uses the definition, one piece
each, primary sources first. Every answer fits the bytes it is given, cut at a line, and says
where each piece was read. A question this cannot answer raises `Unanswerable` with a sentence
for the model.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from bot.index.candidates import DEFAULT_SETTINGS, Candidate, ChangedFile
from bot.index.languages import CONTAINER_KINDS, VALUE_KINDS
from bot.index.lookup import CALLABLE, Files, find_callers, find_definitions
from bot.index.paths import is_test
from bot.index.resolve import is_member
from bot.index.store import IndexStore
from bot.index.uses import module_stem
from bot.store.index.model import Located

MAX_DEFINITIONS = 6  # shown whole (up to MAX_PIECE_LINES); more are named
MAX_TARGETS = 3  # definitions of one name whose callers are looked for
MAX_CALLERS = 12
MAX_SEARCH_FILES = 8
MAX_SEARCH_LINES = 3  # per file
MAX_PIECE_LINES = 80
MAX_READ_LINES = 300
MAX_LINE_CHARACTERS = 400  # of one line in a search hit
_NOTE_ROOM = 240  # bytes kept for the closing line that names what was not shown
_WORD = re.compile(r"[A-Za-z0-9_]+")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class Unanswerable(Exception):
    """A lookup that has no answer: the message is said to the model."""


@dataclass(frozen=True, slots=True)
class HeadView:
    """The pull request's head as lookups see it: the changed files read there."""

    texts: Mapping[str, str]  # changed path → its text at the head
    changed: frozenset[str]  # every path the pull request changes (never read from the index)
    removed: frozenset[str] = frozenset()
    ignored: frozenset[str] = frozenset()  # changed paths the configuration ignores: never shown

    @classmethod
    def of(cls, entries: Sequence[Mapping], texts: Mapping[str, str], ignored: Sequence[str] = ()) -> HeadView:
        """From GitHub's per-file entries of the pull request (`filename`, `status`,
        `previous_filename`): a renamed file's old path is gone at the head, as a removed one is."""
        gone = {e["filename"] for e in entries if e.get("status") == "removed"}
        gone |= {e["previous_filename"] for e in entries if e.get("previous_filename")}
        return cls(texts, frozenset(e["filename"] for e in entries) | gone, frozenset(gone), frozenset(ignored))

    def changes(self) -> list[ChangedFile]:
        return [ChangedFile(p, self.texts.get(p) if p not in self.ignored else None, (), ())
                for p in sorted(self.changed)]


Span = tuple[str, int, int]  # (path, first line, last line)


@dataclass(frozen=True, slots=True)
class Answer:
    text: str  # for the model
    found: str  # what it returned, in words for the check run's notes
    shown: tuple[Span, ...] = ()  # the numbered lines the text shows, by file: what a verdict may cite


class _Lines:
    """An answer's text as it is built: its lines, and which numbered line of which file each shows."""

    def __init__(self, title: str) -> None:
        self.out = [title]
        self.length = len(title)
        self.numbered: list[tuple[str, int, int]] = []  # (path, line number, end of its text in the answer)

    def add(self, text: str, path: str | None = None, number: int = 0) -> None:
        self.out.append(text)
        self.length += 1 + len(text)
        if path is not None:
            self.numbered.append((path, number, self.length))

    def fitted(self, limit: int) -> tuple[str, tuple[Span, ...]]:
        """The text within `limit` bytes (bot/index/queries.py `_fit`), and the lines it still shows."""
        text, kept = _fit("\n".join(self.out), limit)
        return text, spans((path, number) for path, number, end in self.numbered if end <= kept)


def spans(lines: Iterable[tuple[str, int]]) -> tuple[Span, ...]:
    """(path, line) pairs as runs of consecutive lines of one file, in the order first seen."""
    out: list[list] = []
    for path, number in lines:
        if out and out[-1][0] == path and out[-1][2] + 1 == number:
            out[-1][2] = number
        else:
            out.append([path, number, number])
    return tuple((path, first, last) for path, first, last in out)


@dataclass(frozen=True, slots=True)
class _Piece:
    path: str
    start: int
    end: int
    heading: str
    lines: tuple[str, ...]


def answer(store: IndexStore, head: HeadView, tool: str, args: Mapping, limit: int) -> Answer:
    """The answer to one lookup whose arguments were checked (bot/engine/lookups.py), in at most
    `limit` bytes."""
    return _TOOLS[tool](store, head, args, limit)


def _inline(text: str) -> str:
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group(0)):02x}", text)


def _where(head: HeadView, path: str) -> str:
    return "head" if path in head.changed else "default branch"


def _files(store: IndexStore, head: HeadView) -> Files:
    return Files(store, head.changes())


def _split_name(name: str) -> tuple[str | None, str]:
    """`Error::syntax`, `Cart.total`, `pricing.apply` → (qualifier, name)."""
    parts = [p for p in re.split(r"\.|::|#|->", name) if p]
    return (parts[-2] if len(parts) > 1 else None), parts[-1]


def _qualified(loc: Located, qualifier: str | None) -> bool:
    if qualifier is None:
        return True
    scope = loc.definition.scope.split(".")
    return qualifier in scope or module_stem(loc.path) == qualifier or qualifier in loc.path.split("/")[:-1]


def _named(store: IndexStore, head: HeadView, files: Files, name: str) -> list[Located]:
    """Every definition of `name`: in the changed files at the head, elsewhere from the index."""
    found = [loc for loc in store.definitions([name], limit=500) if loc.path not in head.changed]
    for path in sorted(head.changed - head.ignored):
        where = files.uses(path, frozenset({name})) if files.text(path) is not None else None
        found += [Located(path, d) for d in (where.definitions if where else ()) if d.name == name]
    return found


def _ranked(locs: list[Located], qualifier: str | None, near: str | None = None) -> list[Located]:
    def rank(loc: Located) -> tuple:
        d = loc.definition
        group = 0 if d.kind in CALLABLE else 1 if d.kind in VALUE_KINDS else 2
        return (not _qualified(loc, qualifier), loc.path != near, is_test(loc.path), group, is_member(loc),
                loc.path, d.start)
    return sorted(locs, key=rank)


def _piece_of(files: Files, head: HeadView, path: str, start: int, end: int, heading: str,
              max_lines: int = MAX_PIECE_LINES) -> _Piece | None:
    lines = files.lines(path)
    if not lines or start > len(lines):
        return None
    end = min(end, len(lines))
    shown = tuple(lines[start - 1:min(end, start + max_lines - 1)])
    cut = f" (first {len(shown)} of {end - start + 1} lines)" if len(shown) < end - start + 1 else ""
    return _Piece(path, start, start + len(shown) - 1,
                  f"{_inline(path)}:{start}-{start + len(shown) - 1} ({_where(head, path)}) — {heading}{cut}", shown)


def _render(title: str, pieces: Sequence[_Piece], limit: int,
            more: Sequence[str] = ()) -> tuple[str, tuple[Span, ...]]:
    """The title, each piece with its numbered lines, and what else was found, within `limit`
    bytes: a piece that does not fit whole is cut at a line, and the later ones only named; and
    the lines it shows."""
    out = _Lines(title)
    left = limit - _size(title) - _NOTE_ROOM
    unshown: list[str] = []
    cut = False
    for piece in pieces:
        heading = f"\n#### {piece.heading}" if piece.heading else ""
        if cut or left < _size(heading) + 64:
            unshown.append(f"{_inline(piece.path)}:{piece.start}-{piece.end}")
            cut = True
            continue
        if heading:
            out.add(heading)
            left -= _size(heading) + 1
        for number, text in enumerate(piece.lines, piece.start):
            line = f"{number:>6} {text}"
            if _size(line) + 1 > left:
                out.add(f"(cut here for the lookup budget: lines {number}-{piece.end} not shown)")
                cut = True
                break
            out.add(line, piece.path, number)
            left -= _size(line) + 1
    unshown += more
    if unshown:
        out.add("Not shown, for the budget or the limit: " + ", ".join(unshown))
    return out.fitted(limit)


def _fit(text: str, limit: int) -> tuple[str, int]:
    """`text` cut at a line boundary to at most `limit` bytes, and how many of its characters were kept."""
    if _size(text) <= limit:
        return text, len(text)
    kept = text.encode("utf-8")[:max(0, limit - 40)].decode("utf-8", errors="ignore").rsplit("\n", 1)[0]
    return kept + "\n(cut for the lookup budget)", len(kept)


def _size(text: str) -> int:
    return len(text.encode("utf-8"))


def _definition(store: IndexStore, head: HeadView, args: Mapping, limit: int) -> Answer:
    name = args["name"]
    qualifier, base = _split_name(name)
    files = _files(store, head)
    locs: list[Located] = []
    how = ""
    if "path" in args and "line" in args:
        locs = _resolved(store, head, files, base, args["path"], args["line"])
        how = f" as used on {_inline(args['path'])}:{args['line']}" if locs else ""
    if not locs:
        locs = _ranked(_named(store, head, files, base), qualifier, args.get("path"))
    if not locs:
        raise Unanswerable(f"no definition of {name!r} in the changed files or the repository index")
    locs = [loc for loc in locs if _qualified(loc, qualifier)] or locs
    pieces = [p for p in (_piece_of(files, head, loc.path, loc.definition.start, loc.definition.end,
                                    f"{loc.definition.kind} `{_inline(_label(loc))}`: "
                                    f"{_inline(loc.definition.signature)}")
                          for loc in locs[:MAX_DEFINITIONS]) if p is not None]
    more = [f"{loc.path}:{loc.definition.start}" for loc in locs[MAX_DEFINITIONS:MAX_DEFINITIONS + 20]]
    title = f"{len(locs)} definition(s) of `{_inline(name)}`{how}:"
    text, shown = _render(title, pieces, limit, more)
    return Answer(text, f"{len(locs)} definition(s)" + (f": {_places(pieces)}" if pieces else ""), shown)


def _label(loc: Located) -> str:
    d = loc.definition
    return f"{d.scope}.{d.name}" if d.scope else d.name


def _places(pieces: Sequence[_Piece], at_most: int = 4) -> str:
    shown = ", ".join(f"{p.path}:{p.start}-{p.end}" for p in pieces[:at_most])
    return shown + (f" and {len(pieces) - at_most} more" if len(pieces) > at_most else "")


def _resolved(store: IndexStore, head: HeadView, files: Files, name: str, path: str, line: int) -> list[Located]:
    """The definitions a use of `name` on `path:line` means, as retrieval resolves it."""
    lines = files.lines(path)
    if not lines or not 1 <= line <= len(lines) or name not in lines[line - 1]:
        return []
    use = ChangedFile(path, files.text(path), ((line, lines[line - 1]),), ())
    changes = [use, *(c for c in head.changes() if c.path != path)]
    found = find_definitions(files, changes, store, DEFAULT_SETTINGS)
    out = []
    for c in found:
        for d in store.definitions_in(c.path) if c.path not in head.changed else _head_definitions(files, c.path):
            if d.name == name and d.start == c.start:
                out.append(Located(c.path, d))
    if not out:  # the file's own definition, which retrieval leaves out (the diff shows it)
        where = files.uses(path)
        out = [Located(path, d) for d in (where.definitions if where else ()) if d.name == name]
    return out


def _head_definitions(files: Files, path: str) -> tuple:
    where = files.uses(path)
    return where.definitions if where else ()


def _callers(store: IndexStore, head: HeadView, args: Mapping, limit: int) -> Answer:
    name = args["name"]
    qualifier, base = _split_name(name)
    files = _files(store, head)
    locs = _ranked(_named(store, head, files, base), qualifier, args.get("path"))
    locs = [loc for loc in locs if _qualified(loc, qualifier)] or locs
    if "path" in args:
        locs = [loc for loc in locs if loc.path == args["path"]] or locs
    targets = [loc for loc in locs if loc.definition.kind not in CONTAINER_KINDS][:MAX_TARGETS]
    if not locs:
        raise Unanswerable(f"no definition of {name!r} in the changed files or the repository index; "
                           "search finds its mentions")
    if not targets:
        raise Unanswerable(f"{name!r} is a {locs[0].definition.kind}: ask for the callers of one of its "
                           "methods, or search for it")
    by_path: dict[str, list[int]] = {}
    for loc in targets:
        by_path.setdefault(loc.path, []).append(loc.definition.start)
    changes = [ChangedFile(p, files.text(p), (), tuple(starts)) for p, starts in by_path.items()]
    changes += [c for c in head.changes() if c.path not in by_path]
    found = [c for c in find_callers(files, changes, store, DEFAULT_SETTINGS)
             if c.path not in head.ignored]
    pieces = [p for p in (_caller_piece(files, head, c) for c in found[:MAX_CALLERS]) if p is not None]
    more = [f"{c.path}:{c.start}" for c in found[MAX_CALLERS:MAX_CALLERS + 20]]
    of = ", ".join(f"{loc.path}:{loc.definition.start}" for loc in targets)
    title = f"{len(found)} caller(s) of `{_inline(name)}` (defined at {_inline(of)}):"
    text, shown = _render(title, pieces, limit, more)
    return Answer(text, f"{len(found)} caller(s)" + (f": {_places(pieces)}" if pieces else ""), shown)


def _caller_piece(files: Files, head: HeadView, c: Candidate) -> _Piece | None:
    uses = c.reason.split(",")[0]  # retrieval's "uses x, whose definition changed at …": nothing changed here
    return _piece_of(files, head, c.path, c.start, c.end, f"caller `{_inline(c.symbol)}`: {_inline(uses)}")


def _search(store: IndexStore, head: HeadView, args: Mapping, limit: int) -> Answer:
    text = args["text"]
    words = list(dict.fromkeys(_WORD.findall(text)))[:8]
    if not words:
        raise Unanswerable("search needs a word: letters, digits or `_`")
    files = _files(store, head)
    paths = [p for p in sorted(head.texts) if p not in head.ignored and _mentions(head.texts[p], words)]
    paths += [p for p in store.search(words, limit=MAX_SEARCH_FILES * 3) if p not in head.changed]
    out = _Lines(f"Files that mention {', '.join(f'`{w}`' for w in words)} (best first):")
    hits: list[str] = []
    for path in paths[:MAX_SEARCH_FILES]:
        matches = _matching(files.lines(path) or [], text, words)
        if not matches:
            continue
        hits.append(path)
        out.add(f"\n#### {_inline(path)} ({_where(head, path)})")
        for n, line in matches[:MAX_SEARCH_LINES]:
            out.add(f"{n:>6} {line[:MAX_LINE_CHARACTERS]}", path, n)
    if not hits:
        raise Unanswerable(f"nothing in the changed files or the repository index mentions {text!r}")
    answer_text, shown = out.fitted(limit)
    return Answer(answer_text, f"{len(hits)} file(s): {', '.join(hits[:4])}" + (" …" if len(hits) > 4 else ""),
                  shown)


def _mentions(text: str, words: Sequence[str]) -> bool:
    lowered = text.lower()
    return any(w.lower() in lowered for w in words)


def _matching(lines: Sequence[str], text: str, words: Sequence[str]) -> list[tuple[int, str]]:
    """Lines holding the whole text first, then all its words, then any of them."""
    tests: list[Callable[[str], bool]] = [lambda s: text.lower() in s.lower(),
                                          lambda s: all(w.lower() in s.lower() for w in words),
                                          lambda s: any(w.lower() in s.lower() for w in words)]
    for test in tests:
        found = [(n, line) for n, line in enumerate(lines, 1) if test(line)]
        if found:
            return found
    return []


def _read(store: IndexStore, head: HeadView, args: Mapping, limit: int) -> Answer:
    path = args["path"]
    if path in head.ignored:
        raise Unanswerable(f"{path} is ignored by the repository's configuration")
    if path in head.removed:
        raise Unanswerable(f"{path} is deleted (or renamed) by this pull request")
    if path in head.changed and path not in head.texts:
        raise Unanswerable(f"{path} is changed by this pull request but has no text at its head to read "
                           "(a symbolic link, a binary or very large file, or past the first changed files read)")
    text = head.texts[path] if path in head.changed else store.text(path)
    if text is None:
        raise Unanswerable(f"no file {path!r} in the repository index (it holds the default branch's text files)")
    lines = text.splitlines()
    start = args.get("start", 1)
    asked = args.get("end", start + MAX_READ_LINES - 1)
    if start > len(lines):
        raise Unanswerable(f"{path} has {len(lines)} lines")
    end = min(asked, len(lines), start + MAX_READ_LINES - 1)
    note = f" (at most {MAX_READ_LINES} lines a read)" if asked > end < len(lines) else ""
    title = f"{_inline(path)} ({_where(head, path)}, {len(lines)} lines), lines {start}-{end}{note}:"
    piece = _Piece(path, start, end, "", tuple(lines[start - 1:end]))
    answer_text, shown = _render(title, [piece], limit)
    return Answer(answer_text, f"lines {start}-{end} of {len(lines)} ({_where(head, path)})", shown)


_TOOLS: dict[str, Callable[[IndexStore, HeadView, Mapping, int], Answer]] = {
    "definition": _definition, "callers": _callers, "search": _search, "read": _read}
TOOL_NAMES = tuple(_TOOLS)
