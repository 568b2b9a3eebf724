"""The rules of the configuration files that a JSON Schema cannot state, as named `Check`s.

Each check is pure and cached by the checked text: a configuration is validated on every pull
request, and the same globs and expressions come back each time, so checking a CEL expression
(the slow part: parsing it) happens once per distinct text, not once per validation. Validation
only checks an expression (`check_expression`); its runner is built when a plan first evaluates it.
"""

from __future__ import annotations

from functools import lru_cache

from bot.expr.cel import CelCompileError, check_expression
from bot.expr.globs import glob_syntax_error
from bot.shapes import Check, describe

CACHE_SIZE = 4096


def path_problem(value: str) -> tuple[str, str] | None:
    """A repository path: relative, and still inside the root once `.` and `..` are resolved."""
    if value.startswith("/"):
        return ("path-absolute",
                f"must be a path relative to the repository root, not an absolute one; got {describe(value)}")
    depth = 0
    for segment in value.split("/"):
        if segment == "..":
            depth -= 1
            if depth < 0:
                return ("path-escapes",
                        f"must stay inside the repository: `..` leads above its root; got {describe(value)}")
        elif segment not in ("", "."):
            depth += 1
    return None


@lru_cache(maxsize=CACHE_SIZE)
def glob_problem(value: str) -> tuple[str, str] | None:
    error = glob_syntax_error(value)
    if error is None:
        return None
    return ("glob-syntax", f"is not a valid doublestar glob: {error}; got {describe(value)}")


@lru_cache(maxsize=CACHE_SIZE)
def cel_error(text: str) -> CelCompileError | None:
    """The error of checking `text` as CEL over `pr`, or None (the check itself is cached by bot.expr)."""
    try:
        check_expression(text)
    except CelCompileError as error:
        return error
    return None


def cel_problem(value: str) -> tuple[str, str] | None:
    error = cel_error(value)
    if error is None:
        return None
    return (error.code, f"is not a valid CEL expression over `pr`: {error.message}")


# The exported pattern states the source's rule (no leading `/`, no leading `..` segment); the
# check adds the stricter one, no escaping the root after normalisation (`a/../../x`).
RELATIVE_PATH = Check("relative-path", path_problem, schema={"pattern": r"^(?!/)(?!\.\.(/|$))"})
GLOB_SYNTAX = Check("glob-syntax", glob_problem)
CEL_COMPILES = Check("cel-compiles", cel_problem)

# What each check may report: the schema-agreement test and docs rely on this table.
CHECK_CODES = {
    "relative-path": ("path-absolute", "path-escapes"),
    "glob-syntax": ("glob-syntax",),
    "cel-compiles": ("cel-syntax", "cel-unknown-field", "cel-type", "cel-too-complex"),
}


def clear_caches() -> None:
    """Forget checked expressions and globs (the benchmark's cold runs)."""
    glob_problem.cache_clear()
    cel_error.cache_clear()


def expression_position(lines: list[str], line: int, column: int, value: str,
                        error_line: int, error_column: int) -> tuple[int, int]:
    """Where, in the file, an error at (error_line, error_column) of an expression was written.

    The expression starts at (line, column), the position of its YAML scalar. The offset is added
    only when the source text proves where the expression's line sits: a one-line plain or quoted
    scalar written verbatim, or a literal block (`|`) line. Otherwise (folded, escaped) the
    scalar's own position is the honest answer.
    """
    parts = value.split("\n")
    if not (1 <= error_line <= len(parts)) or line > len(lines):
        return line, column
    target = parts[error_line - 1]
    source = lines[line - 1]
    head = source[column - 1:column]
    if head == "|":
        return _in_literal_block(lines, line, target, error_line, error_column) or (line, column)
    if len(parts) == 1:
        start = column + 1 if head in ("'", '"') else column
        if source[start - 1:start - 1 + len(target)] == target:
            return line, start + error_column - 1
    return line, column


def _in_literal_block(lines: list[str], line: int, target: str, error_line: int,
                      error_column: int) -> tuple[int, int] | None:
    first = lines[line] if line < len(lines) else ""
    indent = len(first) - len(first.lstrip(" "))
    at = line + error_line  # content starts on the line after `|`
    if at > len(lines) or lines[at - 1][indent:].rstrip("\r") != target:
        return None
    return at, indent + error_column
