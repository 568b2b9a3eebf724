"""The issues a pull request says it closes (bot/reviews/references.py): GitHub's closing keywords,
and the text a hostile body may hold: huge bodies, thousands of references, references inside code,
other hosts' URLs."""

from __future__ import annotations

import pytest

from bot.reviews.references import MAX_LINKED, MAX_SCANNED, IssueRef, closing_references

HERE = {"owner": "octo", "repo": "app"}


def refs(body: str, title: str = "", **options) -> list[str]:
    found = closing_references(title, body, **{**HERE, **options})
    return [f"{r.owner}/{r.repo}#{r.number}" for r in found.refs]


@pytest.mark.parametrize("keyword", ["close", "closes", "closed", "fix", "fixes", "fixed", "resolve", "resolves",
                                     "resolved", "FIXES", "Closes", "rEsOlVeD"])
def test_every_closing_keyword_in_any_case_names_an_issue(keyword):
    assert refs(f"{keyword} #12") == ["octo/app#12"]


@pytest.mark.parametrize("text", ["fixes #12", "Fixes: #12", "fixes:#12", "fixes\t#12", "(fixes #12)", "fixes #12.",
                                  "- Fixes #12\n"])
def test_a_reference_may_follow_a_colon_and_sit_in_punctuation(text):
    assert refs(text) == ["octo/app#12"]


@pytest.mark.parametrize("text", ["prefixes #12", "fixes#12", "fixes #12abc", "fixes #0", "fixes #012", "fixes 12",
                                  "fixes\n#12", "see #12", "fixing #12", "fixes # 12", "fixes #12-b",
                                  "fixes #99999999999", "fixes #4294967296"])
def test_what_is_not_a_closing_reference(text):
    assert refs(text) == []


def test_the_three_forms_name_their_repository():
    body = ("Fixes #1, closes other-org/lib.js#2 and resolves https://github.com/octo/app/issues/3#issuecomment-9.\n"
            "Fixes http://www.github.com/Octo/Tools/issues/4")
    assert refs(body) == ["octo/app#1", "other-org/lib.js#2", "octo/app#3", "Octo/Tools#4"]


def test_the_title_is_read_before_the_body_and_duplicates_count_once():
    found = closing_references("Fix #7: crash on start", "fixes #7 and fixes OCTO/APP#7, then fixes #8", **HERE)
    assert found.refs == (IssueRef("octo", "app", 7), IssueRef("octo", "app", 8))
    assert found.more == 0 and not found.cut


def test_only_the_pull_requests_own_host_counts_in_a_url():
    body = ("fixes https://gitlab.com/octo/app/issues/1 fixes https://github.com.evil.example/octo/app/issues/2 "
            "fixes https://evil.example/github.com/octo/app/issues/3 fixes https://github.com/octo/app/pull/4 "
            "fixes https://ghe.example.com/octo/app/issues/5 fixes https://github.com/octo/app/issues/6/../../7")
    assert refs(body) == []
    # on GitHub Enterprise Server, its own host is the one
    ghes = "https://ghe.example.com/octo/app/pull/9"
    assert refs(body + " fixes https://GHE.example.com/octo/app/issues/8", html_url=ghes) == [
        "octo/app#5", "octo/app#8"]


def test_references_inside_code_and_comments_are_not_read():
    body = "\n".join([
        "Fixes #1",
        "```python", "# fixes #2", "```",
        "~~~~", "fixes #3", "~~~", "still code: fixes #4", "~~~~~",
        "Inline `fixes #5` and ``a ` fixes #6 b`` are code.",
        "<!-- Fixes #7: a template's hint -->",
        "",
        "    fixes #8 (an indented code block)",
        "",
        "> quoting someone: fixes #9",
        "A `lone backtick, then fixes #10",
    ])
    assert refs(body, limit=20) == ["octo/app#1", "octo/app#9", "octo/app#10"]


def test_an_unclosed_fence_or_comment_hides_the_rest():
    assert refs("fixes #1\n```\nfixes #2\n") == ["octo/app#1"]
    assert refs("fixes #1 <!-- fixes #2\nfixes #3") == ["octo/app#1"]


def test_a_code_span_does_not_run_across_a_paragraph():
    assert refs("a `b\n\nfixes #1 `c`") == ["octo/app#1"]


def test_thousands_of_references_keep_the_first_few_and_count_the_rest():
    body = " ".join(f"fixes #{n}" for n in range(1, 5001))
    found = closing_references("", body, **HERE)
    assert [r.number for r in found.refs] == list(range(1, MAX_LINKED + 1))
    assert found.more == 5000 - MAX_LINKED


def test_a_huge_body_is_read_only_up_to_githubs_limit():
    body = "fixes #1\n" + "x" * (MAX_SCANNED - 12) + " fixes #2 " + "y" * 1_000_000 + " fixes #3"
    found = closing_references("", body, **HERE)
    assert [r.number for r in found.refs] == [1]
    assert found.cut


@pytest.mark.parametrize(("body", "expected"), [
    ("`" * MAX_SCANNED + " fixes #1", []),  # past the limit: not read
    ("`` a " * (MAX_SCANNED // 6) + "fixes #1", [1]),  # thousands of unmatched runs of two: literal
    ("` a " * 10_000 + "fixes #1", [1]),  # ten thousand runs of one: five thousand spans
    ("` a " * 10_001 + "fixes #1 `", []),  # the last run opens a span that the closing one ends
    ("<!--" * (MAX_SCANNED // 5) + "fixes #1", []),  # one comment, never closed
    ("```\n" * 10_000 + "fixes #1", [1]),  # fences open and close in turn, the last closed
    ("fixes " * (MAX_SCANNED // 7) + "#1", [1]),
    ("fixes owner/" * (MAX_SCANNED // 13) + "r#1", [1]),
    ("fixes https://github.com/" * (MAX_SCANNED // 26) + "o/r/issues/1", [1]),
    ("    x\n\n" * (MAX_SCANNED // 9) + "fixes #1", [1]),
])
def test_hostile_bodies_are_read_as_markdown_reads_them(body, expected):
    """Texts built to make a careless reading slow (each is read in one pass: prose() blanks code
    in a pass over the lines and one over the backtick runs, and the search is one regular
    expression with no nested repetition) still give the right answer."""
    assert [r.number for r in closing_references("", body, **HERE).refs] == expected


def test_names_are_short_in_their_own_repository():
    assert IssueRef("octo", "app", 3).name("Octo/App") == "#3"
    assert IssueRef("octo", "lib", 3).name("octo/app") == "octo/lib#3"
