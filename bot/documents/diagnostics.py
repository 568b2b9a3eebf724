"""The one shape every user-facing error takes, and its renderings.

A configuration or resource error is reported the way a compiler reports one: where (file, line,
column, JSON pointer), which rule (a stable kebab-case `code` that scripts and docs rely on) and
what is allowed (the message). Every loader and validator returns these; nothing raises them.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass, replace


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One problem in one document: 1-based line and column, a JSON pointer into the document."""

    line: int
    column: int
    pointer: str
    code: str
    message: str
    document: int | None = None  # 0-based index in a multi-document stream, else None

    def to_json(self) -> dict:
        data = asdict(self)
        if self.document is None:
            del data["document"]
        return data

    def in_document(self, index: int) -> Diagnostic:
        return replace(self, document=index)


def sort_key(diag: Diagnostic) -> tuple:
    return (diag.document or 0, diag.line, diag.column, diag.pointer, diag.code)


def format_text(path: str, diags: Iterable[Diagnostic]) -> list[str]:
    """`path:line:col: code: message`, the form editors and CI logs link to."""
    return [f"{path}:{d.line}:{d.column}: {d.code}: {d.message}" for d in diags]


def _escape_workflow(value: str, *, prop: bool = False) -> str:
    value = value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    if prop:
        value = value.replace(":", "%3A").replace(",", "%2C")
    return value


def format_github(path: str, diags: Iterable[Diagnostic]) -> list[str]:
    """GitHub Actions workflow commands, so a CI step annotates the file inline."""
    return [
        f"::error file={_escape_workflow(path, prop=True)},line={d.line},col={d.column},"
        f"title={_escape_workflow(d.code, prop=True)}::{_escape_workflow(d.message)}"
        for d in diags
    ]


def dumps(data: object) -> str:
    return json.dumps(data, indent=2, sort_keys=False, ensure_ascii=False)
