"""The shape of an evaluation corpus, `CORPUS/corpus.yaml`: validated and published as JSON Schema
(`reviewer schema eval-corpus`, bot/schemas/eval-corpus.json) from this one description."""

from __future__ import annotations

from dataclasses import replace

from bot.config.checks import RELATIVE_PATH
from bot.shapes import AnyOf, Arr, Check, Int, Obj, Str


def _range_problem(value: list) -> tuple[str, str] | None:
    if value[1] < value[0]:
        return "line-range", f"the last line ({value[1]}) must not come before the first ({value[0]})"
    return None


LINE_RANGE = Check("line-range", _range_problem)

LINES = Arr(
    name="lines", items=Int(minimum=1), min_items=2, max_items=2, checks=(LINE_RANGE,),
    description="`[first, last]`: lines of the file at the head (as findings count them), 1-based, inclusive.",
)

FILE_PATH = Str(
    min_length=1, checks=(RELATIVE_PATH,),
    description="A file of the repository, relative to its root.",
)

ABOUT_TEXT = Str(min_length=1, max_length=4000, description="What the defect is (the judge model reads it).")

ABOUT = AnyOf(
    options=(ABOUT_TEXT, Arr(items=ABOUT_TEXT, min_items=1, max_items=50)),
    description="What the defect is, in a line; or a list of descriptions of the same defect (several reviewers "
                "at the same lines), all of which the judge reads.",
)

TAG = Str(
    min_length=1, max_length=100, pattern=r"^[A-Za-z0-9][A-Za-z0-9+#._:/-]*$",
    pattern_hint="letters, digits and `+#._:/-`, such as `category:code-defect`",
)

TAGS = Arr(items=TAG, max_items=50, description="Labels the report slices recall and precision by (`context:diff`, "
                                                "`origin:human`, `tier:subtle`); optional.")

MUST_FIND = Obj(
    name="must-find",
    description="A defect a good review reports: a finding on this file whose lines overlap these matches it.",
    properties={
        "path": FILE_PATH,
        "lines": LINES,
        "about": ABOUT,
        "tags": TAGS,
    },
    required=("path", "lines", "about"),
)

MUST_NOT = Obj(
    name="must-not",
    description="A place a review must stay quiet about: no finding on this file (within these lines, when "
                "given).",
    properties={
        "path": FILE_PATH,
        "lines": LINES,
        "about": Str(min_length=1, max_length=4000, description="Why nothing is to be reported here."),
        "tags": TAGS,
    },
    required=("path",),
)

REF = Str(
    min_length=1, max_length=255, pattern=r"^[^\s-][^\s]*$",
    pattern_hint="a commit id (best: the full 40 hexadecimal digits, so that the case cannot move) or a ref, "
                 "without spaces and not starting with `-`",
)

CASE = Obj(
    name="case",
    description="One pull request with known defects: the review of base...head is scored against them.",
    properties={
        "id": Str(min_length=1, max_length=100, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$",
                  pattern_hint="letters, digits, `.`, `_` and `-`", description="Names the case in reports "
                  "and in `--only`; unique in the corpus."),
        "repo": Str(min_length=1, description="A local git repository (a checkout or a bare one), relative to "
                                              "the corpus directory or absolute."),
        "base": replace(REF, description="The pull request's base: the review is of merge-base(base, head)...head."),
        "head": replace(REF, description="The pull request's head."),
        "must_find": Arr(items=MUST_FIND, description="The defects a good review reports; may be empty (a case "
                                                      "that only measures what a review says of good code)."),
        "must_not": Arr(items=MUST_NOT, description="Places a review must stay quiet about (optional)."),
        "config": Str(min_length=1, description="A repository configuration file (`.reviewer.yaml` form), "
                                                "relative to the corpus directory, used instead of the one "
                                                "at the merge base (optional)."),
        "tags": replace(TAGS, description="Labels of the whole case (`language:go`, `tier:clear`): the report "
                                          "slices by them as by an item's, counting all of the case's items; "
                                          "optional."),
    },
    required=("id", "repo", "base", "head", "must_find"),
)

CORPUS = Obj(
    description="A corpus of `reviewer eval`: pull requests with known defects, each reviewed as the server "
                "would review it and scored for what it found, what it missed and what it cost.",
    properties={"cases": Arr(items=CASE, min_items=1, max_items=10_000, description="The cases.")},
    required=("cases",),
)
