"""Doublestar glob semantics, pinned: the table of bmatcuk/doublestar v4 (the cases that apply to
relative repository paths), our own additions, errors, and agreement with wcmatch elsewhere."""

from __future__ import annotations

import fnmatch
import random
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from wcmatch import glob as wc

from bot.expr.globs import GlobSet, glob_match, glob_syntax_error

# bmatcuk/doublestar v4's `matchTests` (doublestar_test.go at v4.9.1), every row, transcribed:
# (pattern, path, shouldMatch, expectedErr is ErrBadPattern). The flags for Glob on disk, case
# folding and Windows are left out: Match is case-sensitive and always splits at `/`.
DOUBLESTAR_V4 = [
    ('', '', True, False), ('*', '', True, False), ('*', '/', False, False), ('/*', '/', True, False),
    ('/*', '/debug/', False, False), ('/*', '//', False, False), ('abc', 'abc', True, False),
    ('*', 'abc', True, False), ('*c', 'abc', True, False), ('*/', 'a/', True, False), ('a*', 'a', True, False),
    ('a*', 'abc', True, False), ('a*', 'ab/c', False, False), ('a*/b', 'abc/b', True, False),
    ('a*/b', 'a/c/b', False, False), ('a*/c/', 'a/b', False, False), ('a*b*c*d*e*', 'axbxcxdxe', True, False),
    ('a*b*c*d*e*/f', 'axbxcxdxe/f', True, False), ('a*b*c*d*e*/f', 'axbxcxdxexxx/f', True, False),
    ('a*b*c*d*e*/f', 'axbxcxdxe/xxx/f', False, False), ('a*b*c*d*e*/f', 'axbxcxdxexxx/fff', False, False),
    ('a*b?c*x', 'abxbbxdbxebxczzx', True, False), ('a*b?c*x', 'abxbbxdbxebxczzy', False, False),
    ('ab[c]', 'abc', True, False), ('ab[b-d]', 'abc', True, False), ('ab[e-g]', 'abc', False, False),
    ('ab[^c]', 'abc', False, False), ('ab[^b-d]', 'abc', False, False), ('ab[^e-g]', 'abc', True, False),
    ('a\\*b', 'ab', False, False), ('a?b', 'a☺b', True, False), ('a[^a]b', 'a☺b', True, False),
    ('a[!a]b', 'a☺b', True, False), ('a???b', 'a☺b', False, False), ('a[^a][^a][^a]b', 'a☺b', False, False),
    ('[a-ζ]*', 'α', True, False), ('*[a-ζ]', 'A', False, False), ('a?b', 'a/b', False, False),
    ('a*b', 'a/b', False, False), ('[\\]a]', ']', True, False), ('[\\-]', '-', True, False),
    ('[x\\-]', 'x', True, False), ('[x\\-]', '-', True, False), ('[x\\-]', 'z', False, False),
    ('[\\-x]', 'x', True, False), ('[\\-x]', '-', True, False), ('[\\-x]', 'a', False, False),
    ('[]a]', ']', False, True), ('[-]', '-', True, False), ('[x-]', 'x', True, False), ('[x-]', '-', True, False),
    ('[x-]', 'z', False, False), ('[-x]', 'x', True, False), ('[-x]', '-', True, False), ('[-x]', 'a', False, False),
    ('[a-b-d]', 'a', True, False), ('[a-b-d]', 'b', True, False), ('[a-b-d]', '-', True, False),
    ('[a-b-d]', 'c', False, False), ('[a-b-x]', 'x', True, False), ('\\', 'a', False, True), ('[', 'a', False, True),
    ('[^', 'a', False, True), ('[^bc', 'a', False, True), ('a[', 'a', False, True), ('a[', 'ab', False, True),
    ('ad[', 'ab', False, True), ('*x', 'xxx', True, False), ('[abc]', 'b', True, False),
    ('[abc123]', '1', True, False), ('[a-z0-9]', '1', True, False), ('**', '', True, False),
    ('a/**', 'a', True, False), ('a/**/', 'a', True, False), ('a/**', 'a/', True, False),
    ('a/**/', 'a/', True, False), ('a/**', 'a/b', True, False), ('a/**', 'a/b/c', True, False),
    ('**/c', 'c', True, False), ('**/c', 'b/c', True, False), ('**/c', 'a/b/c', True, False),
    ('**/c', 'a/b', False, False), ('**/c', 'abcd', False, False), ('**/c', 'a/abc', False, False),
    ('a/**/b', 'a/b', True, False), ('a/**/c', 'a/b/c', True, False), ('a/**/d', 'a/b/c/d', True, False),
    ('a/\\**', 'a/b/c', False, False), ('a/\\[*\\]', 'a/bc', False, False), ('a/b/c', 'a/b//c', False, False),
    ('a/', 'a', False, False), ('ab{c,d}', 'abc', True, False), ('ab{c,d,*}', 'abcde', True, False),
    ('ab{c,d}[', 'abcd', False, True), ('a{,bc}', 'a', True, False), ('a{,bc}', 'abc', True, False),
    ('a/{b/c,c/b}', 'a/b/c', True, False), ('a/{b/c,c/b}', 'a/c/b', True, False), ('a/a*{b,c}', 'a/abc', True, False),
    ('{a/{b,c},abc}', 'a/b', True, False), ('{a/{b,c},abc}', 'a/c', True, False),
    ('{a/{b,c},abc}', 'abc', True, False), ('{a/{b,c},abc}', 'a/b/c', False, False),
    ('{a/ab*}', 'a/abc', True, False), ('{a/*}', 'a/b', True, False), ('{a/abc}', 'a/abc', True, False),
    ('{a/b,a/c}', 'a/c', True, False), ('abc/**', 'abc/b', True, False), ('**/abc', 'abc', True, False),
    ('abc**', 'abc/b', False, False), ('**/*.txt', 'abc/【test】.txt', True, False),
    ('**/【*', 'abc/【test】.txt', True, False), ('**/{a,b}', 'a/b', True, False), ('a/*/*/d', 'a/b/c/d', True, False),
    ('broken-symlink', 'broken-symlink', True, False), ('broken-symlink/*', 'a', False, False),
    ('broken*/*', 'a', False, False), ('working-symlink/c/*', 'working-symlink/c/d', True, False),
    ('working-sym*/*', 'working-symlink/c', True, False), ('b/**/f', 'b/symlink-dir/f', True, False),
    ('*/symlink-dir/*', 'b/symlink-dir/f', True, False), ('e/\\[x\\]/*', 'e/[x]/[y]', True, False),
    ('e/\\[x\\]/*/z', 'e/[x]/[y]/z', True, False), ('e/**', 'e/**', True, False), ('e/**', 'e/*', True, False),
    ('e/**', 'e/?', True, False), ('e/**', 'e/[', True, False), ('e/**', 'e/]', True, False),
    ('e/**', 'e/[]', True, False), ('e/**', 'e/{', True, False), ('e/**', 'e/}', True, False),
    ('e/**', 'e/\\', True, False), ('e/*', 'e/*', True, False), ('e/?', 'e/?', True, False),
    ('e/?', 'e/*', True, False), ('e/?', 'e/[', True, False), ('e/?', 'e/]', True, False),
    ('e/?', 'e/{', True, False), ('e/?', 'e/}', True, False), ('e/\\[', 'e/[', True, False),
    ('e/[', 'e/[', False, True), ('e/]', 'e/]', True, False), ('e/\\]', 'e/]', True, False),
    ('e/\\{', 'e/{', True, False), ('e/\\}', 'e/}', True, False), ('e/[\\*\\?]', 'e/*', True, False),
    ('e/[\\*\\?]', 'e/?', True, False), ('e/[\\*\\?]', 'e/**', False, False), ('e/[\\*\\?]?', 'e/**', True, False),
    ('e/{\\*,\\?}', 'e/*', True, False), ('e/{\\*,\\?}', 'e/?', True, False), ('e/\\*', 'e/*', True, False),
    ('e/\\?', 'e/?', True, False), ('e/\\?', 'e/**', False, False), ('*\\}', '}', True, False),
    ('case-sensitive/fi*', 'case-sensitive/file', True, False),
    ('case-sensitive/FI*', 'case-sensitive/FILE', True, False),
    ('case-sensitive/Fi*', 'case-sensitive/File', True, False), ('nonexistent-path', 'a', False, False),
    ('nonexistent-path/', 'a', False, False), ('nonexistent-path/file', 'a', False, False),
    ('nonexistent-path/*', 'a', False, False), ('nonexistent-path/**', 'a', False, False),
    ('nopermission/*', 'nopermission/file', True, False), ('nopermission/dir/', 'nopermission/dir', False, False),
    ('nopermission/file', 'nopermission/file', True, False),
]


def _repository_path(path: str) -> bool:
    """What a pull request can change: a relative file path, never empty, never a directory."""
    return bool(path) and not path.startswith("/") and not path.endswith("/")


def _relative_file_pattern(pattern: str) -> bool:
    """Rows testing absolute or directory patterns (`/*`, `a/**/`) or the empty pattern apply to
    what is an error here; a trailing escaped `/` would still be a file pattern."""
    return _repository_path(pattern)


@pytest.mark.parametrize(("pattern", "path", "expected", "bad"), DOUBLESTAR_V4)
def test_doublestar_table(pattern: str, path: str, expected: bool, bad: bool) -> None:
    if bad or not _relative_file_pattern(pattern):
        assert glob_syntax_error(pattern) is not None
    elif not _repository_path(path):
        pytest.skip("the path is absolute, a directory or empty: never a changed file")
    else:
        assert glob_syntax_error(pattern) is None
        assert glob_match(pattern, path) is expected


def test_doublestar_table_is_whole() -> None:
    """Every row is run: the only ones not matched are for paths no pull request has."""
    assert len(DOUBLESTAR_V4) == 166
    assert ("[a-z0-9]", "1", True, False) in DOUBLESTAR_V4
    unmatched = [row for row in DOUBLESTAR_V4 if not row[3] and _relative_file_pattern(row[0])
                 and not _repository_path(row[1])]
    assert unmatched == [("*", "", True, False), ("*", "/", False, False), ("**", "", True, False),
                         ("a/**", "a/", True, False)]


# Our additions: the shapes configurations use, dotfiles, and the index's shortcuts.
OURS = [
    ("**", "a/b/c", True), ("**", "x", True), ("**/*.py", "setup.py", True),
    ("**/*.py", "src/a/b.py", True), ("**/*.py", "src/a/b.pyc", False), ("**/*.py", ".py", True),
    ("*.py", "src/a.py", False), ("*.py", "a.py", True), ("**/*.tar.gz", "d/x.tar.gz", True),
    ("**/*.tar.gz", "d/x.gz", False), ("docs/**", "docs", True), ("docs/**", "docs/a/b.md", True),
    ("docs/**", "docsx/a", False), ("docs/**", "src/docs/a", False), ("**/Makefile", "Makefile", True),
    ("**/Makefile", "a/b/Makefile", True), ("**/Makefile", "a/Makefile.in", False),
    ("src/**/BUILD", "src/BUILD", True), ("src/**/BUILD", "lib/BUILD", False),
    ("*", ".github", True), ("**", ".github/workflows/ci.yml", True),
    (".github/**/*.yml", ".github/workflows/ci.yml", True), ("*/*.md", "docs/a.md", True),
    ("**/x/**", "x", True), ("**/x/**", "p/x/q", True), ("**/x/**", "px/q", False),
    ("**/b/**/c", "bx/b/c", True), ("**/b/**/c", "bx/bc/c", False), ("a/**/**/b", "a/b", True),
    ("**/test_*.py", "tests/test_a.py", True), ("**/test_*.py", "tests/a_test.py", False),
    ("src/{api,web}/**/*.{ts,tsx}", "src/web/x/y.tsx", True),
    ("src/{api,web}/**/*.{ts,tsx}", "src/cli/y.ts", False), ("a}b", "a}b", True), ("a,b", "a,b", True),
    ("**/view3*", "a/view3x.ts", True), ("**/view3*", "view3", True), ("**/view3*", "a/view4.ts", False),
    ("**/view3*", "view3/x", False), ("**/te*", "t", False), ("**/?est_*", "a/test_x.py", True),
    ("a//b/c", "a/b/c", False), ("README.md", "README.md", True), ("README.md", "docs/README.md", False), ("Src/*", "src/a", False),
    ("*a*a*a*a*a*a*a*a*a*a*b", "a" * 2000, False), ("**/a/**/a/**/a/**/b", "a/" * 500 + "c", False),
]


@pytest.mark.parametrize(("pattern", "path", "expected"), OURS)
def test_match_table(pattern: str, path: str, expected: bool) -> None:
    assert glob_syntax_error(pattern) is None
    assert glob_match(pattern, path) is expected


@pytest.mark.parametrize(("pattern", "path", "expected"), [
    ("[a-z0-9]", "-", False), ("[0-9a-f]", "7", True), ("[0-9a-f]", "c", True), ("[0-9a-f]", "g", False),
    ("[a-zA-Z]", "Q", True), ("[a-zA-Z]", "-", False), ("[a-cx-z]", "y", True), ("[a-cx-z]", "m", False),
    ("[!a-cx-z]", "m", True), ("[^0-9a-f]", "a", False), ("v[0-9][0-9a-z_].txt", "v1_.txt", True),
    ("[a-b-dx-z]", "y", True), ("[a-b-dx-z]", "c", False), ("[--0]", "+", False), ("[--0]", ".", True),
    ("a[.-0]b", "a.b", True), ("a[.-0]b", "a/b", False), ("a[!.-0]b", "a/b", False),
])
def test_classes_with_several_ranges(pattern: str, path: str, expected: bool) -> None:
    """Members after a range are read as members again: `[a-z0-9]` is two ranges, not
    `a-z`, `0`, `-`, `9`; and a range that spans `/` still stays within its segment."""
    assert glob_syntax_error(pattern) is None
    assert glob_match(pattern, path) is expected


# Class members the two dialects spell alike: no `\` (fnmatch has no escapes), no `!`, `^` or
# `]` (placement rules differ), no `-` but at the ends, no `[` (a nested set to Python's re). All
# below U+0300, so no surrogates: no `codec="utf-8"`, which costs Hypothesis a walk of all Unicode
# (2.3 CPU-seconds wherever .hypothesis/ holds no cached copy, as in CI) for the same characters.
_MEMBER = st.characters(exclude_characters="\\!^]-[/", max_codepoint=0x2FF)


@st.composite
def _char_class(draw: st.DrawFn) -> tuple[str, str]:
    """A random class in our spelling and in fnmatch's (which negates with `!` only)."""
    members = draw(st.lists(st.one_of(_MEMBER, st.tuples(_MEMBER, _MEMBER).map(sorted)), min_size=1, max_size=4))
    body = "".join(m if isinstance(m, str) else f"{m[0]}-{m[1]}" for m in members)
    dash = draw(st.sampled_from(["", "-"]))
    body = dash + body if draw(st.booleans()) else body + dash
    negation = draw(st.sampled_from(["", "!", "^"]))
    return f"[{negation}{body}]", f"[{'!' if negation else ''}{body}]"


@settings(derandomize=True, max_examples=400, deadline=None)
@given(_char_class(), st.sampled_from(["", "a", "*", "?"]), st.sampled_from(["", "z", "*"]), st.data())
def test_classes_agree_with_fnmatch(cls: tuple[str, str], before: str, after: str, data: st.DataObject) -> None:
    """Within one segment a class means what it means to Python's fnmatch.translate."""
    ours, theirs = cls
    near = st.sampled_from(sorted(set(theirs.strip("[]!")) | {"a", "z", "-", "^"}))
    name = data.draw(st.text(st.one_of(near, _MEMBER), min_size=1, max_size=4))
    pattern = before + ours + after
    assert glob_syntax_error(pattern) is None
    expected = re.fullmatch(fnmatch.translate(before + theirs + after), name) is not None
    assert glob_match(pattern, name) is expected, (pattern, name)


@pytest.mark.parametrize(("pattern", "message"), [
    ("[", "unclosed '[' at offset 0"), ("a[", "unclosed '[' at offset 1"), ("[^", "unclosed '[' at offset 0"),
    ("[^bc", "unclosed '[' at offset 0"), ("ab{c,d}[", "unclosed '[' at offset 7"),
    ("src/{a,b", "unclosed '{' at offset 4"), ("{a,{b}", "unclosed '{' at offset 0"),
    ("[]a]", "empty character class '[]' at offset 0"), ("\\", "'\\' at the end escapes nothing at offset 0"),
    ("[z-a]", "range 'z-a' runs backwards at offset 1"), ("a[/]b", "'/' inside '[...]'"),
    ("a[\\/]b", "one segment at offset 2"), ("a[.-/]b", "one segment at offset 4"),
    ("[a-z9-0]", "range '9-0' runs backwards at offset 4"),
    ("/src/**", "starts with '/'"), ("docs/", "ends with '/'"), ("", "empty pattern"),
    ("{a,b}" * 9, "more than 256 alternatives"), ("x" * 1025, "longer than 1024 characters"),
    ("{" * 9 + "}" * 9, "nested deeper than 8"),
])
def test_syntax_errors(pattern: str, message: str) -> None:
    error = glob_syntax_error(pattern)
    assert error is not None and message in error
    with pytest.raises(ValueError):
        GlobSet([pattern])


def test_set_names_every_matching_pattern() -> None:
    patterns = ["**/*.py", "src/**", "src/app.py", "**/app.py", "*.md", "docs/**/*.md", "**", "tests/**"]
    globs = GlobSet(patterns)
    assert globs.matching("src/app.py") == [0, 1, 2, 3, 6]
    assert globs.matching("README.md") == [4, 6]
    assert globs.matching("docs/a/b.md") == [5, 6]
    assert globs.any("anything") and not GlobSet(["src/**"]).any("lib/x")
    assert GlobSet([]).matching("x") == [] and not GlobSet([]).any("x")


def _random_pattern(rng: random.Random) -> str:
    pieces = ["a", "b", "ab", ".", "*", "?", "[ab]", "[!a]", "{a,b}", "{a,bb/a}", "/", "/", "**/", "/**/"]
    text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 6)))
    text = text.replace("//", "/").strip("/")
    return text or "a"


def _random_path(rng: random.Random) -> str:
    """Repository paths never hold `.` or `..` segments (wcmatch treats those specially)."""
    segs = ("".join(rng.choice("ab.") for _ in range(rng.randint(1, 3))) for _ in range(rng.randint(1, 4)))
    return "/".join(seg if seg.strip(".") else seg + "a" for seg in segs)


def test_agrees_with_wcmatch_outside_pinned_differences() -> None:
    """wcmatch (GLOBSTAR|BRACE|DOTGLOB) is the reference where the semantics agree; the pinned
    differences are a trailing `/**` matching its directory and the errors above."""
    rng = random.Random(7)
    flags = wc.GLOBSTAR | wc.BRACE | wc.DOTGLOB
    compared = 0
    for _ in range(3000):
        pattern, path = _random_pattern(rng), _random_path(rng)
        if glob_syntax_error(pattern) or pattern.endswith("**") or "**}" in pattern:
            continue
        compared += 1
        assert glob_match(pattern, path) == wc.globmatch(path, pattern, flags=flags), (pattern, path)
    assert compared > 1000
