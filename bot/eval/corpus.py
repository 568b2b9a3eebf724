"""An evaluation corpus, loaded: `CORPUS/corpus.yaml` read with positions, validated to the letter
(every error at its line: `corpus.yaml:12:9: line-range: …`), and typed.

What needs the disk — a case's repository and commits, its `config` file — is checked by
`reviewer eval` when it runs the case; this module only reads the text it is given.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bot.config.corpus_schema import CORPUS
from bot.config.document import load_checked, sorted_diagnostics
from bot.documents.diagnostics import Diagnostic
from bot.documents.pointers import human_pointer
from bot.documents.yamldoc import YamlDocument
from bot.plan.references import normalise

CORPUS_FILE = "corpus.yaml"
# A corpus is data, not settings: a public benchmark's hundreds of cases, each item with its
# reviewers' descriptions, pass the 256 KiB of a configuration file.
MAX_CORPUS_BYTES = 16 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class Place:
    """A `must_find` item (with `about`) or a `must_not` place (`lines` None: the whole file).

    `about` is the first description; `also` holds the others when several reviewers described
    the same defect at the same lines (a benchmark's duplicates collapsed into one item)."""

    path: str
    lines: tuple[int, int] | None
    about: str = ""
    also: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()

    @property
    def descriptions(self) -> tuple[str, ...]:
        return (self.about, *self.also) if self.about else self.also

    def to_json(self) -> dict:
        return {"path": self.path, "lines": list(self.lines) if self.lines else None, "about": self.about or None,
                "also": list(self.also), "tags": list(self.tags)}


@dataclass(frozen=True, slots=True)
class Case:
    id: str
    repo: str  # as written: relative to the corpus directory, or absolute
    base: str
    head: str
    must_find: tuple[Place, ...]
    must_not: tuple[Place, ...] = ()
    config: str | None = None  # as written: relative to the corpus directory
    config_at: tuple[int, int] = (1, 1)  # where `config` is written, for an error about the file
    index: int = 0  # its place in the corpus: /cases/<index>
    tags: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Corpus:
    path: str  # the corpus file
    cases: tuple[Case, ...]

    @property
    def root(self) -> str:
        return os.path.dirname(self.path) or "."

    def repo_path(self, case: Case) -> str:
        return case.repo if os.path.isabs(case.repo) else os.path.normpath(os.path.join(self.root, case.repo))

    def config_path(self, case: Case) -> str | None:
        if case.config is None:
            return None
        return case.config if os.path.isabs(case.config) else os.path.normpath(os.path.join(self.root, case.config))

    def only(self, ids: Sequence[str]) -> tuple[Corpus, list[str]]:
        """The corpus narrowed to `ids` (in the corpus's order), and the ids it does not hold."""
        wanted = set(ids)
        unknown = [i for i in dict.fromkeys(ids) if i not in {c.id for c in self.cases}]
        return Corpus(self.path, tuple(c for c in self.cases if c.id in wanted)), unknown


def corpus_file(path: str) -> str:
    """`CORPUS` names the directory (its corpus.yaml) or the file itself."""
    return os.path.join(path, CORPUS_FILE) if os.path.isdir(path) else path


def load_corpus(text: str | bytes, path: str) -> tuple[Corpus | None, list[Diagnostic]]:
    """The corpus at `path`, or None and every error when it is invalid."""
    doc, data, problems = load_checked(text, CORPUS, "the evaluation corpus", MAX_CORPUS_BYTES)
    if doc is None:
        return None, problems
    problems += _duplicate_ids(data, doc)
    if problems:
        return None, sorted_diagnostics(problems)
    return Corpus(path, tuple(_case(i, c, doc) for i, c in enumerate(data.get("cases") or ()))), []


def _duplicate_ids(data: Mapping[str, Any], doc: YamlDocument) -> list[Diagnostic]:
    """The second use of a case id is the error (a malformed case is the shape check's to report)."""
    cases = data.get("cases")
    first: dict[str, int] = {}
    out = []
    for index, case in enumerate(cases if isinstance(cases, list) else ()):
        if not isinstance(case, dict) or not isinstance(case.get("id"), str):
            continue
        seen = first.setdefault(case["id"], index)
        if seen != index:
            pointer = f"/cases/{index}/id"
            line, column = doc.locate(pointer)
            out.append(Diagnostic(line, column, pointer, "duplicate-id",
                                  f"{human_pointer(pointer)}: case id `{case['id']}` is already used at line "
                                  f"{doc.locate(f'/cases/{seen}/id')[0]}; each case needs its own id"))
    return out


def _tags(data: Mapping[str, Any]) -> tuple[str, ...]:
    """As written, a repeated tag once."""
    return tuple(dict.fromkeys(data.get("tags") or ()))


def _place(data: Mapping[str, Any]) -> Place:
    """`./src/a.py` and `src/b/../a.py` are `src/a.py`, as findings name it."""
    lines = data.get("lines")
    about = data.get("about", "")
    first, *also = [about] if isinstance(about, str) else about
    return Place(normalise(data["path"]), (lines[0], lines[1]) if lines else None, first, tuple(also), _tags(data))


def _case(index: int, data: Mapping[str, Any], doc: YamlDocument) -> Case:
    return Case(data["id"], data["repo"], data["base"], data["head"],
                tuple(_place(p) for p in data["must_find"]), tuple(_place(p) for p in data.get("must_not", ())),
                data.get("config"), doc.locate(f"/cases/{index}/config"), index, _tags(data))
