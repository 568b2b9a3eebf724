"""The pure decisions of a pull request's life, and the review memory's SQLite implementation
(on a real file, through its public async interface)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from bot.reviews.diff import read_patches
from bot.reviews.findings import Finding
from bot.reviews.fingerprints import PostedFinding, fingerprint, normalise_message, still_standing
from bot.reviews.life import next_review, plan_digest
from bot.store.model import ReviewedHead
from bot.store.reviews import PostgresReviewMemory, SQLiteReviewMemory

PATCH = "@@ -1,2 +1,3 @@\n def f(a, b):\n-    return a\n+    return a / b\n+\n"
PATCHES = read_patches([{"filename": "src/f.py", "status": "modified", "patch": PATCH}])
MOVED = read_patches([{"filename": "src/f.py", "status": "modified",
                       "patch": "@@ -1,2 +1,5 @@\n+import os\n+\n def f(a, b):\n-    return a\n+    return  a / b\n"}])


def bug(line: int, message: str = "Division by zero when b is 0.") -> Finding:
    return Finding("src/f.py", line, line, "blocking", "bug", message)


def test_a_fingerprint_follows_the_code_and_the_message_not_the_line():
    first = fingerprint(bug(2), PATCHES)
    assert first.code == "return a / b"
    assert fingerprint(bug(4), MOVED).fingerprint == first.fingerprint  # two lines lower, spaced differently
    assert fingerprint(bug(2, "division by zero when  b is 0"), PATCHES).fingerprint == first.fingerprint
    assert fingerprint(bug(2, "Overflow when b is tiny."), PATCHES).fingerprint != first.fingerprint
    assert fingerprint(bug(1), PATCHES).fingerprint != first.fingerprint  # other code
    outside = fingerprint(bug(40), PATCHES)  # no code in the diff: the lines stand in
    assert outside.code == "" and outside.fingerprint != fingerprint(bug(41), PATCHES).fingerprint
    assert normalise_message("  Check   THIS!  ") == "check this"


def test_an_earlier_finding_stands_while_its_code_is_in_the_diff():
    posted = fingerprint(bug(2), PATCHES)
    assert still_standing([posted], MOVED, {"src/f.py"}) == [posted]
    fixed = read_patches([{"filename": "src/f.py", "status": "modified",
                           "patch": "@@ -1,2 +1,2 @@\n def f(a, b):\n-    return a\n+    return a / b if b else 0\n"}])
    assert still_standing([posted], fixed, {"src/f.py"}) == []
    assert still_standing([posted], {}, set()) == []  # the file left the pull request
    outside = fingerprint(bug(40), PATCHES)
    assert still_standing([outside], PATCHES, set()) == [outside]
    assert still_standing([outside], PATCHES, {"src/f.py"}) == []  # its file changed: the review saw it again


def test_what_the_next_event_gets():
    plan = {"decision": "review", "files": ["a.py"], "rules": [{"id": "r", "matchedPaths": ["a.py"]}], "context": []}
    digest = plan_digest(plan)
    assert plan_digest({**plan, "files": ["a.py", "b.py"],
                        "rules": [{"id": "r", "matchedPaths": ["a.py", "b.py"]}]}) == digest
    assert plan_digest({**plan, "rules": []}) != digest
    last = ReviewedHead("a" * 40, digest, {})
    assert next_review(None, "b" * 40, digest).action == "full"
    assert next_review(last, "a" * 40, digest).action == "repeat"
    based = ReviewedHead("a" * 40, digest, {}, "base1")
    assert next_review(based, "a" * 40, digest, merge_base="base1").action == "repeat"
    assert next_review(based, "a" * 40, digest, merge_base="base2").reason == "the base changed since the last review"
    assert next_review(last, "a" * 40, digest, force="review").action == "full"
    assert next_review(last, "a" * 40, "other").action == "full"
    incremental = next_review(last, "b" * 40, digest)
    assert (incremental.action, incremental.since) == ("incremental", "a" * 40)
    assert next_review(last, "b" * 40, digest, force="full").action == "full"
    assert next_review(last, "b" * 40, digest, incremental=False).action == "full"


@pytest.fixture(params=["sqlite", "postgresql"])
def memory_at(request, tmp_path) -> Iterator[Callable[..., Any]]:
    """A maker of review memories on one database (a second one is another process on it): a
    SQLite file, or a throwaway PostgreSQL database on the test server."""
    if request.param == "sqlite":
        yield lambda clock: SQLiteReviewMemory(tmp_path / "reviewer.db", clock=clock)
        return
    url = request.getfixturevalue("pg_url")  # this run's database, emptied for the test
    yield lambda clock: PostgresReviewMemory(url, clock=clock)


async def test_the_memory_keeps_each_pull_request_apart_across_instances(memory_at):
    memory = memory_at(lambda: 1000.0)
    posted = PostedFinding("f1", "a.py", "blocking", "bug", "x = 1", "Bad.", "abc")
    linted = PostedFinding("f2", "a.py", "minor", "style", "import os", "Unused. (ruff F401)", "abc",
                           source="analyzer:ruff", rule="F401", start_line=1, end_line=2)
    await memory.record_review("o/r#1", ReviewedHead("abc", "d1", {"title": "t"}))
    await memory.record_review("o/r#1", ReviewedHead("def", "d2", {"title": "u"}, "base"))
    await memory.add_posted("o/r#1", [posted, posted, linted])
    await memory.set_paused("o/r#1", "alice")
    assert await memory.claim_comment("o/r#1", "issue_comment:7") is True
    assert await memory.claim_comment("o/r#1", "pull_request_review:7") is True  # another kind of id
    await memory.record_answer("o/r#1:7", "answer")

    again = memory_at(lambda: 2000.0)  # another process on the same database
    assert await again.last_review("o/r#1") == ReviewedHead("def", "d2", {"title": "u"}, "base")
    assert await again.last_review("o/r#2") is None
    # each row keeps its source, an analyzer's rule and its lines (an upload is matched by them)
    assert await again.posted("o/r#1") == [posted, linted] and await again.posted("o/r#2") == []
    assert await again.paused_by("o/r#1") == "alice" and await again.paused_by("o/r#2") is None
    await again.set_paused("o/r#1", None)
    assert await again.paused_by("o/r#1") is None
    assert await again.claim_comment("o/r#1", "issue_comment:7") is False
    assert await again.answers_since("o/r#1:7", 999.0) == {"answer": 1}
    assert await again.answers_since("o/r#1:7", 1001.0) == {}
    later = memory_at(lambda: 1000.0 + 8 * 86400)  # past the redelivery window
    await later.record_answer("o/r#1:8", "answer")
    assert await later.answers_since("o/r#1:7", 0.0) == {}  # a day old: dropped
    assert await later.claim_comment("o/r#1", "issue_comment:7") is True


async def test_claims_race_to_one_winner(memory_at):
    """Two deliveries of one comment handled at once (two workers): one claim wins."""
    first, second = memory_at(time.time), memory_at(time.time)
    results = await asyncio.gather(*(m.claim_comment("o/r#1", "issue_comment:9") for m in (first, second) * 3))
    assert sorted(results) == [False] * 5 + [True]


async def test_a_claim_is_taken_again_only_by_the_delivery_that_made_it(memory_at):
    """A job that crashed (or failed) after claiming a comment answers when it runs again; any
    other delivery of the same comment never answers it a second time."""
    first, second = memory_at(lambda: 1000.0), memory_at(lambda: 1000.0)
    assert await first.claim_comment("o/r#1", "issue_comment:11", "delivery-a") is True
    assert await second.claim_comment("o/r#1", "issue_comment:11", "delivery-a") is True  # its retry
    assert await second.claim_comment("o/r#1", "issue_comment:11", "delivery-b") is False
    assert await first.claim_comment("o/r#1", "issue_comment:11") is False  # no claimer: never a retry

