"""The shapes the index passes around: what a file defines and uses, a piece of context, and what
the index store keeps of a file (bot/store/index/). They are the store's, below it, so that the
store imports nothing above it; bot/index/ builds and reads them."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Definition:
    """A named definition; lines are 1-based and inclusive."""

    name: str
    kind: str  # function, method, class, struct, interface, enum, trait, type, module, ...
    scope: str  # the enclosing definitions' names, joined by "." ("" at the top level)
    signature: str  # the text before the body, whitespace collapsed, at most 200 characters
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class FileSymbols:
    """What one file defines and which names it uses where (not counting the names it defines)."""

    language: str | None
    definitions: tuple[Definition, ...] = ()
    references: dict[str, tuple[int, ...]] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Located:
    """A definition and the file it lives in."""

    path: str
    definition: Definition


@dataclass(frozen=True, slots=True)
class Piece:
    """One piece of context for a review: docs/reviews.md's `reviewer context` entry, plus its text."""

    path: str
    start: int
    end: int
    symbol: str
    kind: str  # definition | caller | related
    reason: str  # names the changed line that asked for it
    text: str

    @property
    def label(self) -> str:
        return f"{self.path}:{self.start}-{self.end}"

    def to_json(self) -> dict:
        return {"path": self.path, "startLine": self.start, "endLine": self.end, "symbol": self.symbol,
                "kind": self.kind, "reason": self.reason}


@dataclass(frozen=True, slots=True)
class StoredFile:
    path: str
    text: str
    symbols: FileSymbols
    blob: str  # the git blob id, so that an update reads only what changed
    size: int


@dataclass(frozen=True, slots=True)
class Reference:
    path: str
    name: str
    lines: tuple[int, ...]
