"""CEL over `pr`: compiling (names, positions, bounds), evaluating, runtime errors."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from bot.expr import cel_bounds
from bot.expr.cel import (
    PR_FIELDS,
    CelCompileError,
    CelRuntimeError,
    cel_input,
    check_expression,
    compile_expression,
    evaluate_bool,
)
from bot.expr.pr_fields import MAX_FILES, MAX_LABELS, MAX_PATH, STRING_LIMITS

PR = {
    "number": 7, "title": "fix: guard the cache", "body": "", "author": "octocat", "state": "open",
    "open": True, "merged": False, "draft": False, "fork": False, "headRef": "renovate/lodash-4.x",
    "headSha": "a" * 40, "baseRef": "main", "url": "https://github.com/o/r/pull/7",
    "createdAt": "2024-05-01T12:00:00Z", "labels": [{"name": "bug", "color": "d73a4a"}],
    "event": "opened", "files": ["src/app.py", "docs/guide.md"], "additions": 10, "deletions": 2,
    "changedFiles": 2, "commits": 1, "authorAssociation": "MEMBER",
}


def largest_pr() -> dict:
    """The largest `pr` the bounds are stated for: every list and string at its limit."""
    pr = dict(PR)
    pr["files"] = [f"{'d' * 40}/{i:05d}/" + "x" * (MAX_PATH - 60) for i in range(MAX_FILES)]
    pr["labels"] = [{"name": f"label-{i}", "color": "ffffff"} for i in range(MAX_LABELS)]
    for name, limit in STRING_LIMITS.items():
        pr[name] = "y" * limit
    return pr


def test_pr_fields_are_designs() -> None:
    assert set(PR_FIELDS) == {
        "number", "title", "body", "author", "state", "open", "merged", "draft", "fork", "headRef",
        "headSha", "baseRef", "url", "createdAt", "labels", "event", "files", "additions", "deletions",
        "changedFiles", "commits", "authorAssociation"}
    assert PR_FIELDS["files"] == "list(string)" and PR_FIELDS["createdAt"] == "google.protobuf.Timestamp"


@pytest.mark.parametrize(("text", "expected"), [
    ('!pr.draft && !pr.labels.exists(l, l.name == "skip-review")', True),
    ('pr.headRef.startsWith("renovate/")', True),
    ('pr.labels.exists(l, l.name == "bug")', True),
    ('pr.files.exists(f, f.startsWith("docs/"))', True),
    ('pr.files.all(f, f.endsWith(".py"))', False),
    ("size(pr.files) == pr.changedFiles && pr.additions > 5", True),
    ('pr.createdAt > timestamp("2024-01-01T00:00:00Z")', True),
    ('pr.title.matches("^(fix|feat)(\\\\(.+\\\\))?: ")', True),
    ('pr.authorAssociation in ["OWNER", "MEMBER"]', True),
    ('pr["event"] == "opened" && has(pr.body)', True),
    ("pr.files.filter(f, f.endsWith('.md')).size() == 1", True),
    ('pr.labels.map(l, l.name).exists(n, n == "docs")', False),
    ("// a comment\n!pr.fork", True),
])
def test_evaluates(text: str, expected: bool) -> None:
    assert evaluate_bool(compile_expression(text), PR) is expected


def test_compiled_once_per_text() -> None:
    assert compile_expression("pr.number > 1") is compile_expression("pr.number > 1")


def test_checked_once_per_text_and_compiled_from_that_parse() -> None:
    checked = check_expression("pr.number > 2")
    assert check_expression("pr.number > 2") is checked
    compiled = compile_expression("pr.number > 2")
    assert compiled.runner.ast is checked.tree and compiled.cost == checked.cost
    assert evaluate_bool(compiled, PR) is True


@pytest.mark.parametrize(("text", "code", "line", "column", "words"), [
    ("pr.title ==", "cel-syntax", 1, 10, "unexpected end of expression"),
    ("!pr.draft &&\n  pr.title # x", "cel-syntax", 2, 12, "unexpected character '#'"),
    ("pr.titel == ''", "cel-unknown-field", 1, 4, "did you mean 'title'?"),
    ('!pr.draft && pr.labels.exists(l, l.nam == "x")', "cel-unknown-field", 1, 36, "a label has no field 'nam'"),
    ("user.login == 'x'", "cel-unknown-field", 1, 1, "unknown name 'user'"),
    ("pr.title.lower() == 'x'", "cel-unknown-field", 1, 10, "unknown method 'lower'"),
    ("pr.files.reduce(a, f, true)", "cel-unknown-field", 1, 10, "unknown method 'reduce'"),
    ("has(pr)", "cel-syntax", 1, 1, "has() takes a field selection"),
    ('pr.title.matches("(")', "cel-syntax", 1, 18, "invalid regular expression"),
    ("pr.title", "cel-syntax", 1, 1, "must yield a boolean; this one yields string"),
    ("pr.files.exists(f)", "cel-syntax", 1, 10, "takes a variable and an expression"),
    ("pr.title.startsWith()", "cel-syntax", 1, 10, "takes 1 argument(s), not 0"),
    ("google.protobuf.Value{} == null", "cel-syntax", 1, 1, "message construction"),
    ("", "cel-syntax", 1, 1, "empty expression"),
    ("pr.title.matches('\\U0011FFFF')", "cel-syntax", 1, 18, "escape out of range; a character is at most"),
    ("pr.number > 0 && b'\\777' == b''", "cel-syntax", 1, 18, "escape out of range; a byte is at most"),
])
@pytest.mark.parametrize("function", [check_expression, compile_expression])
def test_compile_errors_name_the_problem_and_place(function, text, code, line, column, words) -> None:
    with pytest.raises(CelCompileError) as caught:
        function(text)
    error = caught.value
    assert (error.code, error.line, error.column) == (code, line, column)
    assert words in error.message


HOSTILE = [
    "[" + ",".join(["1"] * 101) + "].size() > 0",  # a literal over the item limit
    "x" * 1025,  # over the source limit
    " || ".join(["pr.draft"] * 101),  # over the node limit
    "!" * 120 + "true",  # over the depth limit
    "(" * 60 + "true" + ")" * 60,  # parentheses past the parser's depth
    "pr.files.exists(f, pr.files.exists(g, f == g))",  # 3000 × 3000
    "pr.files.exists(f, f in pr.files)",  # the same, hidden in `in`
    "pr.labels.exists(a, pr.labels.exists(b, pr.labels.exists(c, true)))",  # three loops deep
    "pr.files.map(f, pr.body + pr.body + pr.body).size() > 0",  # 3000 × 196,608 characters
    "[" + ",".join(["1"] * 100) + "].exists(a, [" + ",".join(["1"] * 100) + "].exists(b, a == b))",
    "pr.files.exists(f, " + " || ".join([f'f.startsWith("{i}")' for i in range(8)]) + ")",
]


@pytest.mark.parametrize("text", HOSTILE)
@pytest.mark.parametrize("function", [check_expression, compile_expression])
def test_hostile_expressions_are_refused_at_validation(function, text: str) -> None:
    with pytest.raises(CelCompileError) as caught:
        function(text)
    assert caught.value.code == "cel-too-complex", caught.value.message


@pytest.mark.parametrize("make", [
    lambda k: "(" * k + "true" + ")" * k, lambda k: "!" * k + "true", lambda k: "[" * k + "1" + "]" * k + " == []",
    lambda k: "size(" * k + "pr.title" + ")" * k + " > 0", lambda k: "{1: " * k + "1" + "}" * k + " == {}",
    lambda k: " && ".join(["pr.draft"] * k), lambda k: 'b"' + "\\x41" * k + '" == bytes(pr.title)',
])
def test_the_largest_checked_expression_compiles(make) -> None:
    """Validation only checks; what it accepts must still compile when a plan first evaluates it."""
    largest = None
    for k in range(1, 300):
        try:
            check_expression(make(k))
        except CelCompileError:
            break
        largest = k
    assert largest is not None and largest < 299  # the family does reach a bound
    assert compile_expression(make(largest)).cost > 0


def _largest(make) -> int | None:
    """The largest k (< 200) for which make(k) is still accepted."""
    best = None
    for k in range(0, 200):
        try:
            compile_expression(make(k))
        except CelCompileError:
            break
        best = k
    return best


def _worst_accepted(make) -> str:
    """The largest expression of a family (make(k)) still accepted, padded up to the bound with a
    loop over the labels and then single tests, so that it costs nearly COST_LIMIT."""
    k = _largest(make)
    assert k is not None
    text = make(k)
    for pad in (lambda j: " || pr.labels.exists(l, size(l.name)" + " + 1" * j + " > 0)" if j else "",
                lambda j: " || !pr.draft" * j):
        text += pad(_largest(lambda j: text + pad(j)) or 0)
    return text


@pytest.mark.parametrize("family", [
    lambda k: "pr.files.exists(f, size(f) " + "+ 1 " * k + "> 0)",  # ints: the slowest nodes
    lambda k: "pr.labels.exists(a, [" + ", ".join(["1"] * (k + 1)) + "].exists(b, b > size(a.name)))",  # nested
])
def test_worst_accepted_expression_over_the_largest_pr_completes(family) -> None:
    text = _worst_accepted(family)
    compiled = compile_expression(text)
    assert compiled.cost > 0.95 * cel_bounds.COST_LIMIT  # a real worst case, close to the bound
    assert evaluate_bool(compiled, cel_input(largest_pr())) in (True, False)


@pytest.mark.parametrize(("text", "words"), [
    ("1 / (pr.number - 7) == 0", "divide by zero"),
    ("[pr.title, 1][0] == 1", "no such overload"),  # dyn: only a run can tell
    ("(pr.draft ? true : 1) == 1 && (pr.number > 0 ? 2 : false)", "yielded an int, not a boolean"),
    ("pr.files[5] == 'x'", "invalid_argument"),
    ('int(pr.title) > 0', "invalid literal"),
])
def test_runtime_errors(text: str, words: str) -> None:
    compiled = compile_expression(text)
    with pytest.raises(CelRuntimeError) as caught:
        evaluate_bool(compiled, PR)
    assert words in caught.value.message


def test_pr_is_clamped_and_completed() -> None:
    data = cel_input({"files": [f"f{i}" for i in range(MAX_FILES + 5)], "title": "t" * 1000, "number": True})
    assert len(data.pr["files"]) == MAX_FILES and len(data.pr["title"]) == STRING_LIMITS["title"]
    assert data.pr["number"] == 0 and data.pr["labels"] == [] and data.pr["createdAt"].startswith("1970")
    assert evaluate_bool(compile_expression("size(pr.files) == 3000 && pr.body == '' && !pr.draft"), data)


def test_nested_record_access_is_checked_in_linear_work() -> None:
    """Each `["a"]` on a map literal once estimated its operand twice: 2^depth visits, so a
    220-character expression stalled validation for minutes (this one, 2^30 visits, for days). Run
    apart, with a bound that only a hang can reach (the check takes milliseconds), so a regression
    fails instead of hanging CI."""
    depth = 30  # about as deep as a check accepts
    text = '{"a":' * depth + "true" + "}" * depth + '["a"]' * depth
    program = f"from bot.expr.cel import check_expression; check_expression({text!r}); print('checked')"
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120,
                          cwd=Path(__file__).resolve().parent.parent.parent)
    assert done.stdout.strip() == "checked", done.stderr
