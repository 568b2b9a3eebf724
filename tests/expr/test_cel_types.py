"""CEL types checked at validation (`cel-type`): wrong operands are refused at their place, with
the operator and the operand types named; every valid expression the project shows still passes."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from bot.expr.cel import CelCompileError, check_expression, compile_expression, evaluate_bool
from tests.expr.test_cel import PR

ROOT = Path(__file__).resolve().parent.parent.parent


@pytest.mark.parametrize(("text", "line", "column", "words"), [
    ('pr.additions > "100"', 1, 1, """operator '>' cannot compare int (pr.additions) with string ("100"); write a number"""),
    ('!pr.draft &&\n  pr.additions >= 1.5', 2, 3, "cannot compare int (pr.additions) with double (1.5); CEL does not mix"),
    ("pr.number < 1u", 1, 1, "cannot compare int (pr.number) with uint (1u)"),
    ("pr.draft == 0", 1, 1, "operator '==' cannot compare bool (pr.draft) with int (0)"),
    ("pr.title != 1", 1, 1, "operator '!=' cannot compare string (pr.title) with int (1)"),
    ("pr.number == null", 1, 1, "operator '==' cannot compare int (pr.number) with null (null)"),
    ("pr.files < pr.files", 1, 1, "cannot compare list(string) (pr.files) with list(string) (pr.files)"),
    ("pr.files == [1]", 1, 1, "cannot compare list(string) (pr.files) with list(int)"),
    ('pr.createdAt > "2024-01-01"', 1, 1, "cannot compare timestamp (pr.createdAt) with string"),
    ("pr.additions + 1.0 > 2.0", 1, 1, "operator '+' cannot add int (pr.additions) and double (1.0)"),
    ('pr.title + 1 == ""', 1, 1, "operator '+' cannot add string (pr.title) and int (1)"),
    ("2.0 % 2.0 == 0.0", 1, 1, "operator '%' cannot take the remainder of double"),
    ("pr.number - pr.title == 1", 1, 1, "operator '-' cannot subtract int (pr.number) and string (pr.title)"),
    ("!pr.title", 1, 1, "operator '!' cannot take string (pr.title): it takes bool"),
    ("-pr.title == 1", 1, 1, "operator '-' cannot take string (pr.title): it takes double or int"),
    ("pr.draft || pr.title", 1, 13, "each side of '||' must be a bool, not string (pr.title)"),
    ("pr.number ? true : false", 1, 1, "the test of '? :' must be a bool, not int (pr.number)"),
    ('"bug" in pr.labels', 1, 1, """operator 'in' cannot look for string ("bug") in list(map(string, string)) (pr.labels)"""),
    ("1 in pr.files", 1, 1, "cannot look for int (1) in list(string) (pr.files): its items are string"),
    ('"fix" in pr.title', 1, 1, "needs a list or a map on its right, not string (pr.title); for text, use contains()"),
    ('1 in {"a": true}', 1, 1, "its keys are string"),
    ("size(pr.number) > 0", 1, 6, "size() cannot take int (pr.number): it takes bytes or list or map or string"),
    ("pr.draft.size() > 0", 1, 1, "size() cannot be called on bool (pr.draft)"),
    ('pr.number.startsWith("1")', 1, 1, "startsWith() cannot be called on int (pr.number): it takes string"),
    ("pr.title.endsWith(1)", 1, 19, "endsWith() cannot take int (1)"),
    ("matches(pr.title, 1)", 1, 19, "matches() cannot take int (1)"),
    ("pr.title.getFullYear() > 2000", 1, 1, "getFullYear() cannot be called on string (pr.title): it takes timestamp"),
    ("pr.createdAt.getHours(1) > 0", 1, 23, "getHours() cannot take int (1)"),
    ("pr.files.exists(f, f)", 1, 20, "the condition of exists() must be a bool, not string (f)"),
    ("pr.labels.all(l, l.name)", 1, 18, "the condition of all() must be a bool, not string (l.name)"),
    ("pr.files.filter(f, size(f)).size() > 0", 1, 20, "the condition of filter() must be a bool, not int"),
    ("pr.number.exists(n, true)", 1, 11, "exists() cannot be called on int (pr.number): it loops over a list or a map"),
    ('pr.title.x == "a"', 1, 10, "cannot select field 'x' of string (pr.title): only maps have fields"),
    ('pr.labels.exists(l, l.name.first == "a")', 1, 28, "cannot select field 'first' of string (l.name)"),
    ('pr.files["x"] == ""', 1, 10, """cannot index list(string) (pr.files) with string ("x"): its index is int"""),
    ("pr.number[0] == 1", 1, 1, "cannot index int (pr.number): only lists and maps have items"),
    ('pr.labels.map(l, size(l.name)).exists(n, n == "x")', 1, 42, "operator '==' cannot compare int (n) with string"),
    ('pr.labels[0].name > 1', 1, 1, "cannot compare string with int (1)"),
])
@pytest.mark.parametrize("function", [check_expression, compile_expression])
def test_type_errors_name_the_operator_the_operands_and_the_place(function, text, line, column, words) -> None:
    with pytest.raises(CelCompileError) as caught:
        function(text)
    error = caught.value
    assert (error.code, error.line, error.column) == ("cel-type", line, column), error.message
    assert words in error.message


@pytest.mark.parametrize(("text", "expected"), [
    ("pr.title != null && !(pr.labels == null) && pr.createdAt != null", True),  # null: all but numbers
    ("[pr.title, 1][0] != 2 || true", True),  # an item of a mixed list: known only when run
    ("(pr.draft ? 1 : 'a') != 2 || true", True),
    ('pr.labels == [] || pr.labels[0] == {"name": "bug", "color": "d73a4a"}', True),
    ('pr.labels.map(l, l.name) == ["bug"]', True),
    ('{"a": 1}.a == 1 && {"a": 1}["a"] + 1 == 2', True),
    ('pr.createdAt - duration("1h") < pr.createdAt && pr.createdAt - pr.createdAt == duration("0s")', True),
    ('duration("1h") + pr.createdAt > pr.createdAt', True),
    ("pr.additions + pr.deletions * 2 - 1 > 0 && pr.commits % 2 == 1 && pr.number / 2 == 3", True),
    ("-pr.number < 0 && -1.5 < 0.0 && 1u + 2u == 3u", True),
    ('pr.title + "!" > pr.title && b"a" + b"b" == b"ab"', True),
    ('pr.files + ["x"] == ["src/app.py", "docs/guide.md", "x"]', True),
    ('"src/app.py" in pr.files && "a" in {"a": 1} && pr.event in ["opened", "edited"]', True),
    ("size(pr.title) > 0 && pr.files.size() == 2 && size(pr.labels[0]) == 2 && size(b'ab') == 2", True),
    ('pr.labels.exists_one(l, l.name.startsWith("b")) && pr.files.all(f, f.contains("/"))', True),
    ('pr.labels.filter(l, l.name.endsWith("g")).map(l, size(l.name)).exists(n, n > 2)', True),
    ("type(pr.title) == string && type(pr.number) == int", True),
    ('int(pr.createdAt) > 0 && string(pr.number) == "7" && double(pr.number) > 1.5', True),
    ('pr.createdAt.getFullYear() > 2000 && pr.createdAt.getHours("UTC") >= 0', True),
    ('pr["labels"].exists(l, l["name"] == "bug") && pr["number"] > 1', True),
    ("pr.draft == false && !(pr.number < 1) && (pr.fork ? false : true)", True),
    ("has(pr.title) && pr.title < 'z' && true < true == false", True),
])
def test_valid_expressions_pass_and_run(text: str, expected: bool) -> None:
    """No false positives: each is accepted and evaluates, to the value written."""
    assert evaluate_bool(compile_expression(text), PR) is expected


def _yaml_expressions(node: object) -> list[str]:
    if isinstance(node, dict):
        found = [v for k, v in node.items() if k in ("filterExpr", "whenExpr") and isinstance(v, str)]
        return found + [e for v in node.values() for e in _yaml_expressions(v)]
    if isinstance(node, list):
        return [e for v in node for e in _yaml_expressions(v)]
    return []


def _shown_expressions() -> list[tuple[str, str]]:
    """Every expression the project shows as valid: in its valid examples and its documentation
    (YAML blocks, and inline code that reads as CEL over `pr`)."""
    found: list[tuple[str, str]] = []
    files = [*(ROOT / "tests/data/config/valid").glob("*.yaml"), ROOT / "tests/data/config/admin.yaml",
             *(ROOT / "docs").rglob("*.yaml")]
    for path in files:
        for document in YAML(typ="safe").load_all(path.read_text()):
            found += [(e, path.name) for e in _yaml_expressions(document)]
    for path in [ROOT / "README.md", *(ROOT / "docs").glob("*.md")]:
        for number, line in enumerate(path.read_text().splitlines(), 1):
            where = f"{path.name}:{number}"
            declared = re.match(r"\s*(?:filterExpr|whenExpr):\s*(.+)", line)
            if declared:
                found.append((YAML(typ="safe").load(declared.group(1)), where))
            elif "cel-type" not in line:  # the lines that document the error show it
                found += [(span, where) for span in re.findall(r"`([^`]*\bpr\.[^`]*)`", line)]
    return found


def test_no_expression_the_project_shows_is_a_type_error() -> None:
    shown = _shown_expressions()
    assert len(shown) > 20
    typed = []
    for text, where in shown:
        try:
            check_expression(text)
        except CelCompileError as error:
            if error.code == "cel-type":
                typed.append((where, text, error.message))
    assert typed == []
