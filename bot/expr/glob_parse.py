"""Reading a doublestar glob: syntax errors with offsets, brace expansion, segments.

wcmatch reads an unclosed `[` or `{` as a literal, so a typo would silently match nothing; this
scanner reports it instead, the way doublestar libraries (bmatcuk/doublestar v4) do. Braces are
expanded before translation because an alternative may hold `/` or `**` (`{a/**,b}`), which
changes how the segments around it are read.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TypeVar

MAX_PATTERN_LENGTH = 1024
MAX_ALTERNATIVES = 256  # after brace expansion, per pattern
MAX_BRACE_DEPTH = 8


class GlobSyntaxError(ValueError):
    def __init__(self, message: str, offset: int) -> None:
        super().__init__(f"{message} at offset {offset}")
        self.offset = offset


@dataclass(frozen=True, slots=True)
class CharClass:
    negated: bool
    ranges: tuple[tuple[str, str], ...]  # inclusive (low, high); a single character is (c, c)


STAR = "*"  # sentinel tokens; a literal character is a one-character str wrapped in Lit
ANY = "?"
SEP = "/"


@dataclass(frozen=True, slots=True)
class Lit:
    char: str


Token = Lit | CharClass | str  # str: STAR, ANY or SEP


@dataclass(frozen=True, slots=True)
class Brace:
    alternatives: tuple[tuple[Item, ...], ...]


Item = Token | Brace
Segment = tuple[Token, ...] | None  # None: a `**` segment (globstar)


class _Scanner:
    def __init__(self, pattern: str) -> None:
        self.text = pattern
        self.pos = 0

    def sequence(self, depth: int) -> tuple[Item, ...]:
        """Items up to the end, or up to the `,` or `}` that ends a brace alternative."""
        items: list[Item] = []
        while self.pos < len(self.text):
            char = self.text[self.pos]
            if depth and char in ",}":
                break
            self.pos += 1
            if char == "\\":
                items.append(Lit(self._escaped("'\\' at the end escapes nothing")))
            elif char == "*":
                items.append(STAR)
            elif char == "?":
                items.append(ANY)
            elif char == "/":
                items.append(SEP)
            elif char == "[":
                items.append(self._char_class(self.pos - 1))
            elif char == "{":
                items.append(self._brace(self.pos - 1, depth + 1))
            else:
                items.append(Lit(char))
        return tuple(items)

    def _escaped(self, message: str) -> str:
        if self.pos >= len(self.text):
            raise GlobSyntaxError(message, self.pos - 1)
        self.pos += 1
        return self.text[self.pos - 1]

    def _brace(self, start: int, depth: int) -> Brace:
        if depth > MAX_BRACE_DEPTH:
            raise GlobSyntaxError(f"braces nested deeper than {MAX_BRACE_DEPTH}", start)
        alternatives = [self.sequence(depth)]
        while self.pos < len(self.text) and self.text[self.pos] == ",":
            self.pos += 1
            alternatives.append(self.sequence(depth))
        if self.pos >= len(self.text):
            raise GlobSyntaxError("unclosed '{'", start)
        self.pos += 1  # the closing `}`
        return Brace(tuple(alternatives))

    def _char_class(self, start: int) -> CharClass:
        """`[...]` after its `[`: members are single characters or `lo-hi` ranges, in any
        number and order (`[a-z0-9_]`). As in doublestar, a `-` is a range only between two
        members: first, last or right after a range it is literal (`[-x]`, `[x-]`, `[a-b-d]`)."""
        negated = self.pos < len(self.text) and self.text[self.pos] in "^!"
        self.pos += negated
        ranges: list[tuple[str, str]] = []
        while True:
            if self.pos >= len(self.text):
                raise GlobSyntaxError("unclosed '['", start)
            if self.text[self.pos] == "]":
                if not ranges:
                    raise GlobSyntaxError("empty character class '[]'", start)
                self.pos += 1
                return CharClass(negated, tuple(ranges))
            low_at = self.pos
            low = self._class_char()
            if not self._range_follows():
                ranges.append((low, low))
                continue
            self.pos += 1  # the `-`
            high = self._class_char()
            if high < low:
                raise GlobSyntaxError(f"range '{low}-{high}' runs backwards", low_at)
            ranges.append((low, high))

    def _class_char(self) -> str:
        """One member character of a class, `\\` escapes read; never `/`, escaped or not."""
        at = self.pos
        char = self.text[self.pos]
        self.pos += 1
        if char == "\\":
            char = self._escaped("unclosed '['")
        if char == "/":
            raise GlobSyntaxError("'/' inside '[...]': a class matches within one segment", at)
        return char

    def _range_follows(self) -> bool:
        """`a-z`, but not a `-` that ends the class (`[x-]`, a literal `-`)."""
        text, pos = self.text, self.pos
        return pos + 1 < len(text) and text[pos] == "-" and text[pos + 1] != "]"


def parse(pattern: str) -> tuple[Item, ...]:
    """The pattern as items, or GlobSyntaxError naming what is wrong and where."""
    if not pattern:
        raise GlobSyntaxError("empty pattern", 0)
    if len(pattern) > MAX_PATTERN_LENGTH:
        raise GlobSyntaxError(f"longer than {MAX_PATTERN_LENGTH} characters", MAX_PATTERN_LENGTH)
    if pattern.startswith("/"):
        raise GlobSyntaxError("starts with '/': patterns match paths relative to the repository root", 0)
    scanner = _Scanner(pattern)
    items = scanner.sequence(0)
    # `}` and `,` outside braces are literal characters, as in doublestar and bash.
    while scanner.pos < len(pattern):
        scanner.pos += 1
        items += (Lit(pattern[scanner.pos - 1]),) + scanner.sequence(0)
    count = _count(items)
    if count > MAX_ALTERNATIVES:
        raise GlobSyntaxError(f"braces expand to more than {MAX_ALTERNATIVES} alternatives", pattern.index("{"))
    if pattern.endswith("/") and not pattern.endswith("\\/"):
        raise GlobSyntaxError(
            "ends with '/': patterns match file paths; write 'dir/**' for everything under a directory",
            len(pattern) - 1)
    return items


def _count(items: tuple[Item, ...]) -> int:
    total = 1
    for item in items:
        if isinstance(item, Brace):
            total *= sum(_count(alt) for alt in item.alternatives)
            if total > MAX_ALTERNATIVES:
                return total  # stop early: products grow fast
    return total


def expand(items: tuple[Item, ...]) -> list[tuple[Token, ...]]:
    """Every brace alternative spelled out, in order (`a{b,c}` → `ab`, `ac`)."""
    results: list[tuple[Token, ...]] = [()]
    for item in items:
        if isinstance(item, Brace):
            tails = [tail for alt in item.alternatives for tail in expand(alt)]
            results = [head + tail for head in results for tail in tails]
        else:
            results = [head + (item,) for head in results]
    return results


_T = TypeVar("_T")


def split(items: Iterable[_T], separator: object) -> list[list[_T]]:
    """`items` cut at every `separator`, which is dropped: n separators give n + 1 runs, empty
    runs kept (`a//b` has an empty segment). Segments at `/`, chunks at `*`, runs at `**`."""
    runs: list[list[_T]] = [[]]
    for item in items:
        if item == separator:
            runs.append([])
        else:
            runs[-1].append(item)
    return runs


def segments(tokens: tuple[Token, ...]) -> list[Segment]:
    """Split at `/`; a segment that is exactly `**` becomes None (globstar); repeats collapse.

    Elsewhere stars collapse into one `*` (`abc**` matches `abc` and `abcd`, not `abc/d`; `***`
    is `*`, as in doublestar).
    """
    result: list[Segment] = []
    for seg in split(tokens, SEP):
        if seg == [STAR, STAR]:
            if not (result and result[-1] is None):
                result.append(None)
        else:
            result.append(tuple(t for i, t in enumerate(seg) if not (t == STAR and i and seg[i - 1] == STAR)))
    return result
