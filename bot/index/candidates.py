"""The shapes retrieval passes between its steps (bot/index/lookup.py finds, bot/index/retrieve.py
ranks and fits): a file of the change, a candidate piece with the reason that asked for it, and
the settings that bound how far the lookups go."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ChangedFile:
    """One file of the change: its text at the head (None when deleted) and its changed lines."""

    path: str
    head_text: str | None
    added: tuple[tuple[int, str], ...]  # (new-file line, text) of every added line
    touched: tuple[int, ...]  # new-file lines added, or next to a removal


@dataclass(frozen=True, slots=True)
class Settings:
    max_definitions_per_name: int = 2  # when the files do not say which definition: guesses at most
    max_overloads: int = 3  # when they do and it has overloads: at most these (those whose arity fits first)
    ambiguous_name: int = 8  # a name defined in more files than this is too common to guess from
    max_callers_per_name: int = 40  # callers found by a guess (the word, a likely receiver)
    max_sure_callers_per_name: int = 120  # callers the files bind to the changed definition
    callers_in_full: int = 12  # of one name's callers, these come whole (or windowed); the rest as call sites
    max_caller_files: int = 300  # files read for the callers of one change
    caller_window: int = 6  # lines either side of a use in a long caller
    call_site_window: int = 1  # lines either side of the use, for a name's callers past callers_in_full
    max_related: int = 3
    max_piece_lines: int = 40
    related_window: int = 8  # lines either side of the first mention
    max_search_words: int = 16


@dataclass
class Candidate:
    path: str
    start: int
    end: int
    symbol: str
    kind: str
    reason: str
    anchor: int = 0  # the line that makes it one (a caller's first use of the target); 0: start
    asked_by_test: bool = False  # a definition that only a test's or an example's lines use


DEFAULT_SETTINGS = Settings()
