"""Learnings and followed findings in the server's database, both backends (the `database_url`
fixture runs each test on SQLite and on real PostgreSQL)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

from bot.learnings.book import LearningBook
from bot.learnings.followed import Followed
from bot.learnings.model import Learning, Scope, Source
from bot.learnings.outcomes import Reacted, Tracked, advance
from bot.store.learnings import learnings_store

NOW = datetime(2025, 5, 1, 12, 0, tzinfo=UTC)


def _learning(id: str, scope: Scope, kind="guide", minutes=0, **kw) -> Learning:
    return Learning(id, scope, kind, f"text of {id}", NOW + timedelta(minutes=minutes), **kw)


async def test_learnings_are_kept_filtered_changed_and_deleted(database_url):
    store = LearningBook(learnings_store(database_url))
    whole = _learning("a1", Scope("Octo"), minutes=1)
    app = _learning("a2", Scope("octo", "App", ("src/**",)), "suppress", minutes=2, rule="no-print",
                    source=Source("https://github.com/octo/app/pull/1#discussion_r9", "alice"))
    other = _learning("a3", Scope("other", "app"), minutes=3)
    for learning in (whole, app, other):
        await store.add(learning)

    assert [x.id for x in await store.learnings()] == ["a3", "a2", "a1"]  # newest first
    assert [x.id for x in await store.learnings(account="OCTO")] == ["a2", "a1"]
    assert [x.id for x in await store.learnings(account="octo", repository="app")] == ["a2", "a1"]  # the account's too
    assert [x.id for x in await store.learnings(account="octo", repository="web")] == ["a1"]
    assert [x.id for x in await store.learnings(kind="suppress")] == ["a2"]
    assert await store.get("a2") == app  # every field round-trips

    changed = replace(app, text="Use logging.", scope=Scope("octo", None, ()))
    assert await store.replace(changed) is True
    assert await store.get("a2") == changed
    assert [x.id for x in await store.learnings(account="octo", repository="web")] == ["a2", "a1"]
    assert await store.delete("a2") == changed
    assert await store.delete("a2") is None and await store.get("a2") is None
    assert await store.replace(changed) is False


async def test_followed_findings_keep_their_comment_and_outcome(database_url):
    store = LearningBook(learnings_store(database_url))
    tracked = Tracked("fp1", "src/calc.py", 6, 6, "a" * 40, NOW, ("no-div",), "bug")
    first = Followed("octo/app#1", "octo", "app", tracked, "Division by zero.", "blocking")
    second = Followed("octo/app#1", "octo", "app", replace(tracked, fingerprint="fp2", start_line=9, end_line=9, rules=()),
                      "Leak.", "important")
    await store.follow([first, second])
    await store.follow([replace(first, message="not this")])  # already followed: left as it is
    assert [f.tracked.fingerprint for f in await store.followed("octo/app#1")] == ["fp1", "fp2"]
    assert (await store.followed("octo/app#1"))[0] == first
    assert await store.by_comment("octo/app#1", 77) is None

    dismissed = replace(first, comment_id=77).with_tracked(advance(tracked, Reacted("bob", NOW)))
    await store.update([dismissed])
    assert await store.by_comment("octo/app#1", 77) == dismissed
    assert await store.by_comment("octo/app#2", 77) is None  # another pull request's comment ids are its own
    assert await store.count_states() == {"dismissed": 1, "open": 1}
    records = await store.records(account="OCTO", repository="app")
    assert [(r.state, r.rules, r.category) for r in records] == [("dismissed", ("no-div",), "bug"),
                                                                ("open", (), "bug")]
    assert await store.records(account="other") == []
