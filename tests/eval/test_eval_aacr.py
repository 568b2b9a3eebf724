"""The pure part of the benchmark import (bot/eval/aacr.py) and the corpus writer
(bot/eval/corpus_text.py): a base line mapped to the head through a zero-context diff, tags named
from the benchmark's words, any string written so that the corpus loader reads it back, and a
corpus larger than a configuration file read whole."""

from __future__ import annotations

import pytest

from bot.commands.cli import main
from bot.eval.aacr import Item, collapse, context_level, map_left, read_benchmark, slug
from bot.eval.corpus import MAX_CORPUS_BYTES, Place, load_corpus
from bot.eval.corpus_text import render
from bot.eval.judge import judge_messages
from bot.eval.score import Found

# A change that inserts two lines after line 3, replaces lines 10-11 by one, and removes 20-22.
HUNKS = [(3, 0, 4, 2), (10, 2, 12, 1), (20, 3, 20, 0)]


@pytest.mark.parametrize("lines, mapped", [
    ((1, 3), (1, 3)),  # above every change: unmoved
    ((4, 4), (6, 6)),  # below the insertion: two down
    ((10, 10), (12, 12)),  # replaced: what replaced it
    ((9, 11), (11, 12)),  # from a kept line into the replaced ones
    ((15, 15), (16, 16)),  # below the replacement: +2 -1
    ((21, 21), (20, 21)),  # removed outright: the two lines around the gap
    ((30, 30), (28, 28)),  # below everything: +2 -1 -3
])
def test_a_base_line_follows_the_change_to_the_head(lines, mapped):
    assert map_left(lines, HUNKS, head_length=100) == mapped


def test_a_mapped_line_stays_inside_the_file():
    assert map_left((21, 21), HUNKS, head_length=20) == (20, 20)
    assert map_left((1, 1), [(1, 1, 0, 0)], head_length=0) == (1, 1)  # everything removed


def test_the_benchmarks_words_become_tags():
    assert [slug(s) for s in ("Code Defect", "Maintainability and Readability", "C++", "C#", "")] == [
        "code-defect", "maintainability-and-readability", "c++", "c#", "none"]
    assert [context_level(s) for s in ("Diff Level", "File Level", "repo level", "Repo")] == [
        "diff", "file", "repo", "repo"]


def test_duplicates_collapse_with_their_descriptions_in_order_and_tags_joined():
    items = [Item("a.py", (3, 4), ("first",), ("origin:model",)), Item("a.py", (1, 1), ("other",), ()),
             Item("a.py", (3, 4), ("second", "first"), ("origin:human", "origin:model"))]
    assert collapse(items) == [Item("a.py", (1, 1), ("other",), ()),
                               Item("a.py", (3, 4), ("first", "second"), ("origin:human", "origin:model"))]


ODD = ["yes", "null", "123", "1e5", "- dash", "a: b", "#hash", "quote \" and \\ back", "tab\there", "line\nbreak",
       "del \x7f c1 \x85\x9f", "separators \u2028 \u2029", "emoji 🐍", "", "trailing "]


def test_any_string_the_writer_writes_reads_back_the_same():
    cases = [{"id": "odd", "repo": "repos/a b", "base": "1" * 40, "head": "0123456789" * 4, "tags": ["c#", "x:y"],
              "must_find": [{"path": f"dir/{n}-file", "lines": [n + 1, n + 1], "about": text or "x",
                             "tags": ["origin:human"]} for n, text in enumerate(ODD)]
              + [{"path": "null", "lines": [1, 2], "about": ODD[:4]}],
              "must_not": [{"path": "yes"}, {"path": "p.py", "lines": [1, 1], "about": "why"}]}]
    text = render(cases, "# a header\n")
    corpus, problems = load_corpus(text, "corpus.yaml")
    assert problems == [] and corpus is not None
    [case] = corpus.cases
    assert (case.repo, case.base, case.head, case.tags) == ("repos/a b", "1" * 40, "0123456789" * 4, ("c#", "x:y"))
    assert [i.about for i in case.must_find[:-1]] == [text or "x" for text in ODD]
    assert case.must_find[-1].descriptions == tuple(ODD[:4]) and case.must_find[-1].path == "null"
    assert [(p.path, p.lines, p.about) for p in case.must_not] == [("yes", None, ""), ("p.py", (1, 1), "why")]


def test_a_corpus_past_a_configuration_files_bound_is_read_and_validated(tmp_path):
    about = "x" * 3000
    cases = [{"id": f"c{n}", "repo": "r", "base": "main", "head": "f", "must_find": [
        {"path": "a.py", "lines": [1, 1], "about": about}]} for n in range(100)]
    text = render(cases)
    assert 256 * 1024 < len(text) < MAX_CORPUS_BYTES
    corpus, problems = load_corpus(text, "corpus.yaml")
    assert problems == [] and corpus is not None and len(corpus.cases) == 100
    (tmp_path / "corpus.yaml").write_text(text)
    assert main(["validate", str(tmp_path / "corpus.yaml")]) == 0
    huge = text + "#" * MAX_CORPUS_BYTES
    assert [p.code for p in load_corpus(huge, "corpus.yaml")[1]] == ["too-large"]


def test_the_judge_reads_every_description_of_a_collapsed_item():
    item = Place("a.py", (3, 4), "the `* 0` empties the price", ("multiplying by zero",), ("origin:human",))
    found = Found("a.py", 3, 3, "important", "bug", "Price is always zero.")
    [_, asked] = judge_messages([(item, found)])
    assert ('Defect: a.py lines 3-4: "the `* 0` empties the price" (also described as: "multiplying by zero")'
            in asked["content"])


def test_a_description_longer_than_a_corpus_allows_is_cut_and_says_so():
    record = {"githubPrUrl": "https://github.com/o/r/pull/1", "source_commit": "a" * 40, "target_commit": "b" * 40,
              "comments": [{"note": "n" * 5000, "path": "./x.py", "side": "right", "from_line": 1, "to_line": 1,
                            "category": "Code Defect", "context": "Diff Level", "is_ai_comment": False}]}
    [read], problems = read_benchmark([record])
    [comment] = read.comments
    assert problems == [] and len(comment.note) == 4000 and comment.note.endswith("n…") and comment.path == "x.py"
