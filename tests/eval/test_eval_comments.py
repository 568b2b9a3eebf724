"""scripts/eval_comments.py: comments told from code in the starter corpus's languages (markers inside
strings are not comments), and a fix's file with its comments taken back to the parent's."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent / "scripts"))

from eval_comments import classify, comments, digest, without_added_comments  # noqa: E402


def kinds(text: str, language: str) -> list[tuple[bool, str, int | None]]:
    return [(line.code, line.comment, line.trailing) for line in classify(text, language)]


def test_c_like_comments_strings_and_blocks():
    go = ('x := "http://a" // trailing\n'
          "/* block\n"
          " * more */ y := 1\n"
          "// whole\n"
          "s := `raw // not\n"
          "still raw` // after\n")
    assert kinds(go, "Go") == [(True, "trailing", 16), (False, "block", None), (True, "more", None),
                               (False, "whole", None), (True, "", None), (True, "after", 11)]


def test_rust_lifetimes_characters_raw_strings_and_nested_blocks():
    rust = ("fn f<'a>(x: &'a str) -> char { '\"' } // c\n"
            'let s = r#"a // b\n'
            '"#; /* x /* y */ z */ let q = 1;\n'
            "/// doc\n")
    assert kinds(rust, "Rust") == [(True, "c", 37), (True, "", None), (True, "x y z", None), (False, "doc", None)]


def test_python_strings_docstrings_and_comments():
    python = 'a = "#no"  # yes\n"""doc\n# not a comment\n"""\n# whole\nb = f\'{x}#\'\n'
    assert kinds(python, "Python") == [(True, "yes", 11), (True, "", None), (True, "", None), (True, "", None),
                                       (False, "whole", None), (True, "", None)]


def test_javascript_template_and_java_text_blocks():
    assert kinds("const u = `a\n// in a template\n` // out\n", "JavaScript") == [
        (True, "", None), (True, "", None), (True, "out", 2)]
    assert kinds('String s = """\n  // in a block\n  """; // out\n', "Java") == [
        (True, "", None), (True, "", None), (True, "out", 7)]


def test_the_fixs_comments_go_and_the_parents_come_back():
    parent = ("a()\n"
              "// populate the length\n"
              "var len\n"
              "if (x) {\n"
              "}\n")
    fix = ("a()\n"
           "// Because X and Y can't be sent together,\n"
           "// set the length only without Y\n"
           "var len;\n"
           "if (x && !y) { // no Y here\n"
           "}\n")
    assert without_added_comments(parent, fix, "JavaScript") == ("a()\n"
                                                                  "// populate the length\n"
                                                                  "var len;\n"
                                                                  "if (x && !y) {\n"
                                                                  "}\n")


def test_a_rewritten_comment_keeps_its_place_after_the_code_it_followed():
    parent = "if a ||\n  b {\n  // a or b may repeat\n  c()\n"
    fix = "if a ||\n  b ||\n  d {\n  // a, b or d may repeat\n  c()\n"
    assert without_added_comments(parent, fix, "Go") == "if a ||\n  b ||\n  d {\n  // a or b may repeat\n  c()\n"


def test_a_trailing_comment_the_parent_had_stays():
    parent = "    count[i % n]++; // modulo is needed\n"
    fix = "    if (n > 0) {\n      count[i % n]++; // modulo is needed\n    }\n"
    assert without_added_comments(parent, fix, "Java") == fix


def test_python_fix_with_a_guard_explained():
    parent = "def ratio(a, b):\n    return a / b\n"
    fix = "def ratio(a, b):\n    # A zero divisor gives 0.0.\n    if b == 0:  # guard\n        return 0.0\n    return a / b\n"
    assert without_added_comments(parent, fix, "Python") == (
        "def ratio(a, b):\n    if b == 0:\n        return 0.0\n    return a / b\n")
    assert comments(fix, "Python") == {digest("A zero divisor gives 0.0."), digest("guard")}


def test_a_language_without_a_lexer_is_refused():
    with pytest.raises(ValueError, match="no comment lexer for COBOL"):
        classify("x", "COBOL")
