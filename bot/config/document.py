"""Text → a validated mapping and its diagnostics: the steps the repository and admin files share.

YAML is loaded with positions (`bot.documents.yamldoc`), the root must be a mapping, the value is checked
against its shape, and CEL errors are moved from the scalar to the exact place in the expression.
"""

from __future__ import annotations

from bot.config.checks import cel_error, expression_position
from bot.documents.diagnostics import Diagnostic, sort_key
from bot.documents.pointers import get_at
from bot.documents.yamldoc import MAX_BYTES, YamlDocument, load_yaml
from bot.shapes import Shape, describe, to_diagnostics, validate


def load_checked(text: str | bytes, shape: Shape, what: str,
                 max_bytes: int = MAX_BYTES) -> tuple[YamlDocument | None, dict, list[Diagnostic]]:
    """(document, mapping, diagnostics). The mapping is {} for an empty file or an unusable one.

    `what` names the file in the not-a-mapping message ("the repository configuration").
    """
    doc, problems = load_yaml(text, max_bytes)
    if doc is None:
        return None, {}, problems
    if doc.value is None:
        return doc, {}, problems
    if not isinstance(doc.value, dict):
        line, column = doc.start
        problems.append(Diagnostic(line, column, "", "not-a-mapping",
                                   f"{what} must be a mapping of settings (`key: value` lines); "
                                   f"got {describe(doc.value)}"))
        return doc, {}, problems
    issues = validate(shape, doc.value)
    unreadable = {p.pointer for p in problems if p.pointer}  # a scalar the loader refused, left null
    found = [d for d in to_diagnostics(issues, doc) if d.pointer not in unreadable]
    if any(d.code.startswith("cel-") for d in found):
        found = _place_cel(found, doc, text)
    return doc, doc.value, problems + found


def _place_cel(found: list[Diagnostic], doc: YamlDocument, text: str | bytes) -> list[Diagnostic]:
    source = text.decode("utf-8-sig") if isinstance(text, bytes) else text
    lines = [line.removesuffix("\r") for line in source.split("\n")]  # as editors count lines, not splitlines()
    out = []
    for diag in found:
        value = get_at(doc.value, diag.pointer)
        error = cel_error(value) if diag.code.startswith("cel-") and isinstance(value, str) else None
        if error is not None and error.line and error.column:
            line, column = expression_position(lines, diag.line, diag.column, value, error.line, error.column)
            diag = Diagnostic(line, column, diag.pointer, diag.code, diag.message)
        out.append(diag)
    return out


def sorted_diagnostics(diags: list[Diagnostic]) -> list[Diagnostic]:
    return sorted(diags, key=sort_key)
