"""Doublestar glob semantics, pinned: the table of bmatcuk/doublestar v4 (the cases that apply to
relative repository paths), our own additions, errors, and agreement with wcmatch elsewhere."""

from __future__ import annotations

import random

import pytest
from wcmatch import glob as wc

from bot.expr.globs import GlobSet, glob_match, glob_syntax_error

# (pattern, path, matches) — from bmatcuk/doublestar v4's match table.
DOUBLESTAR_V4 = [
    ("abc", "abc", True), ("*", "abc", True), ("*c", "abc", True), ("a*", "a", True),
    ("a*", "abc", True), ("a*", "ab/c", False), ("a*/b", "abc/b", True), ("a*/b", "a/c/b", False),
    ("a*b*c*d*e*", "axbxcxdxe", True), ("a*b*c*d*e*/f", "axbxcxdxe/f", True),
    ("a*b*c*d*e*/f", "axbxcxdxexxx/f", True), ("a*b*c*d*e*/f", "axbxcxdxe/xxx/f", False),
    ("a*b*c*d*e*/f", "axbxcxdxexxx/fff", False), ("a*b?c*x", "abxbbxdbxebxczzx", True),
    ("a*b?c*x", "abxbbxdbxebxczzy", False), ("ab[c]", "abc", True), ("ab[b-d]", "abc", True),
    ("ab[e-g]", "abc", False), ("ab[^c]", "abc", False), ("ab[^b-d]", "abc", False),
    ("ab[^e-g]", "abc", True), ("a\\*b", "ab", False), ("a?b", "a☺b", True), ("a[^a]b", "a☺b", True),
    ("a[!a]b", "a☺b", True), ("a???b", "a☺b", False), ("a[^a][^a][^a]b", "a☺b", False),
    ("[a-ζ]*", "α", True), ("*[a-ζ]", "A", False), ("a?b", "a/b", False), ("a*b", "a/b", False),
    ("[\\]a]", "]", True), ("[\\-]", "-", True), ("[x\\-]", "x", True), ("[x\\-]", "-", True),
    ("[x\\-]", "z", False), ("[\\-x]", "x", True), ("[\\-x]", "-", True), ("[\\-x]", "a", False),
    ("[-]", "-", True), ("[x-]", "x", True), ("[x-]", "-", True), ("[x-]", "z", False),
    ("[-x]", "x", True), ("[-x]", "-", True), ("[-x]", "a", False), ("[a-b-d]", "a", True),
    ("[a-b-d]", "b", True), ("[a-b-d]", "-", True), ("[a-b-d]", "c", False), ("[a-b-x]", "x", True),
    ("*x", "xxx", True), ("[abc]", "b", True), ("a/**", "a", True), ("a/**", "a/b", True),
    ("a/**", "a/b/c", True), ("**/c", "c", True), ("**/c", "b/c", True), ("**/c", "a/b/c", True),
    ("**/c", "a/b", False), ("**/c", "abcd", False), ("**/c", "a/abc", False), ("a/**/b", "a/b", True),
    ("a/**/c", "a/b/c", True), ("a/**/d", "a/b/c/d", True), ("a/\\**", "a/b/c", False),
    ("a/\\[*\\]", "a/bc", False), ("a//b/c", "a/b/c", False), ("a/b/c", "a/b//c", False),
    ("ab{c,d}", "abc", True), ("ab{c,d,*}", "abcde", True), ("a{,bc}", "a", True),
    ("a{,bc}", "abc", True), ("a/{b/c,c/b}", "a/b/c", True), ("a/{b/c,c/b}", "a/c/b", True),
    ("{a/{b,c},abc}", "a/b", True), ("{a/{b,c},abc}", "a/c", True), ("{a/{b,c},abc}", "abc", True),
    ("{a/{b,c},abc}", "a/b/c", False), ("{a/ab*}", "a/abc", True), ("{a/*}", "a/b", True),
    ("{a/abc}", "a/abc", True), ("{a/b,a/c}", "a/c", True), ("abc/**", "abc/b", True),
    ("**/abc", "abc", True), ("abc**", "abc/b", False), ("**/*.txt", "abc/【test】.txt", True),
    ("**/【*", "abc/【test】.txt", True),
]

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
    ("README.md", "README.md", True), ("README.md", "docs/README.md", False), ("Src/*", "src/a", False),
    ("*a*a*a*a*a*a*a*a*a*a*b", "a" * 2000, False), ("**/a/**/a/**/a/**/b", "a/" * 500 + "c", False),
]


@pytest.mark.parametrize(("pattern", "path", "expected"), DOUBLESTAR_V4 + OURS)
def test_match_table(pattern: str, path: str, expected: bool) -> None:
    assert glob_syntax_error(pattern) is None
    assert glob_match(pattern, path) is expected


@pytest.mark.parametrize(("pattern", "message"), [
    ("[", "unclosed '[' at offset 0"), ("a[", "unclosed '[' at offset 1"), ("[^", "unclosed '[' at offset 0"),
    ("[^bc", "unclosed '[' at offset 0"), ("ab{c,d}[", "unclosed '[' at offset 7"),
    ("src/{a,b", "unclosed '{' at offset 4"), ("{a,{b}", "unclosed '{' at offset 0"),
    ("[]a]", "empty character class '[]' at offset 0"), ("\\", "'\\' at the end escapes nothing at offset 0"),
    ("[z-a]", "range 'z-a' runs backwards at offset 1"), ("a[/]b", "'/' inside '[...]'"),
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
