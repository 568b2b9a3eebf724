"""The starter corpus, eval/corpus, offline: every case checked against the audit mined beside it
(scripts/eval_audit.py's rules: no head or base holds the fix's tests, changelog or comments, no head
message gives the answer away), and the corpus measuring what docs/eval.md says it measures: two
repositories per language, a difficulty tier per case, clean cases and must-not places for
precision and noise, bugs inside real changes, several files."""

from __future__ import annotations

import functools
import json
import re
import sys
from collections import Counter
from pathlib import Path

import pytest

from bot.documents.yamldoc import load_yaml
from bot.eval.corpus import load_corpus

ROOT = Path(__file__).resolve().parent.parent.parent
CORPUS = ROOT / "eval" / "corpus"
sys.path.insert(0, str(ROOT / "scripts"))

from eval_audit import problems  # noqa: E402

LANGUAGES = ("python", "go", "rust", "javascript", "typescript", "java")


@functools.cache  # read once per process: every xdist worker collects the cases, and each test reads them
def cases():
    corpus, errors = load_corpus((CORPUS / "corpus.yaml").read_text(), str(CORPUS / "corpus.yaml"))
    assert errors == [] and corpus is not None
    return corpus.cases


@functools.cache
def audits() -> dict:
    return {a["id"]: a for a in json.loads((CORPUS / "audit.json").read_text())["cases"]}


def tag(case, key: str) -> str:
    [value] = [t.split(":", 1)[1] for t in case.tags if t.startswith(key + ":")]
    return value


@pytest.mark.parametrize("case", cases(), ids=lambda c: c.id)
def test_no_case_hands_over_the_answer(case):
    assert problems(case.id, case.base, case.head, audits()[case.id]) == []


@pytest.mark.parametrize("case", cases(), ids=lambda c: c.id)
def test_every_case_has_its_tier_language_and_kind(case):
    tier, kind = tag(case, "tier"), tag(case, "kind")
    assert tag(case, "language") in LANGUAGES
    assert (tier == "clean") == (kind == "clean") == (case.must_find == ())
    assert tier in ("clear", "subtle", "debatable", "clean") and kind in ("fix", "change", "clean")
    assert audits()[case.id]["kind"] == ("fix" if kind == "fix" else "change")
    for item in case.must_find:
        assert not re.match(r"(?i)(fix|revert)\b", item.about), item.about  # a description, not a commit subject


def test_the_corpus_measures_precision_noise_and_difficulty():
    every = cases()
    kinds = Counter(tag(c, "kind") for c in every)
    assert kinds["clean"] >= 6 and kinds["change"] >= 6 and kinds["fix"] >= 30
    assert Counter(tag(c, "tier") for c in every).keys() == {"clear", "subtle", "debatable", "clean"}
    assert sum(len(c.must_not) for c in every) >= 15 and all(c.must_not for c in every if not c.must_find)
    assert sum(1 for c in every if "files:multi" in c.tags and c.must_find) >= 5
    assert len({(c.base, c.head) for c in every}) == len(every)  # no case twice
    sources = load_yaml((CORPUS / "sources.yaml").read_bytes())[0].value
    by_language = Counter(r["language"].lower() for r in sources["repositories"].values())
    assert by_language == dict.fromkeys(LANGUAGES, 2)  # a second repository per language
    repos_used = {(c.repo, tag(c, "language")) for c in every}
    assert Counter(language for _, language in repos_used) == dict.fromkeys(LANGUAGES, 2)
