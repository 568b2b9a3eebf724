"""The SARIF uploads table (bot/store/uploads.py, migration 9) on both backends: kept, read back by
head and by id, given a status, pruned after seven days, and the pull request of a head found from
the deliveries the app received."""

from __future__ import annotations

import time

import pytest

from bot.events.jobs import Classification
from bot.store.model import Incoming, Storage
from bot.store.uploads import KEEP_DAYS, UploadRecord, UploadStore

HEAD = "c" * 40
RESULT = {"tool": "ruff", "rule_id": "F401", "level": "error", "security_severity": None, "message": "unused",
          "path": "src/a.py", "start_line": 1, "end_line": 1, "edits": [], "partial_fingerprints": {},
          "help_uri": None, "rule_name": None, "tags": []}


class Clock:
    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now


def _record(upload_id: str, head: str = HEAD, repo: str = "octo/app") -> UploadRecord:
    return UploadRecord(upload_id, repo, head, "refs/heads/main", None, "ruff", [RESULT])


async def test_an_upload_is_kept_read_back_and_given_its_status(storage: Storage, database_url: str):
    uploads = UploadStore(database_url)
    await uploads.add(_record("a" * 32))
    await uploads.add(_record("b" * 32, head="d" * 40))
    got = await uploads.get("octo/app", "a" * 32)
    assert got is not None and (got.status, got.errors, got.results, got.tool_name) == ("pending", [], [RESULT], "ruff")
    assert await uploads.get("other/app", "a" * 32) is None  # an id is read only under its repository
    assert [r.id for r in await uploads.for_head("octo/app", HEAD)] == ["a" * 32]
    await uploads.set_status(["a" * 32], "failed", ["GitHub answered 502"])
    got = await uploads.get("octo/app", "a" * 32)
    assert got is not None and (got.status, got.errors) == ("failed", ["GitHub answered 502"])
    with pytest.raises(ValueError, match="not one of pending, complete, failed"):
        await uploads.set_status(["a" * 32], "done")


async def test_uploads_older_than_a_week_are_pruned_by_the_next_one(storage: Storage, database_url: str):
    clock = Clock()
    uploads = UploadStore(database_url, clock)
    await uploads.add(_record("a" * 32))
    clock.now += KEEP_DAYS * 86400 - 60
    assert [r.id for r in await uploads.for_head("octo/app", HEAD)] == ["a" * 32]
    clock.now += 120
    assert await uploads.for_head("octo/app", HEAD) == []  # past the week: not applied any more
    await uploads.add(_record("b" * 32))
    assert await uploads.get("octo/app", "a" * 32) is None and await uploads.get("octo/app", "b" * 32) is not None
    assert await uploads.prune() == 0
    clock.now += KEEP_DAYS * 86400 + 1
    assert await uploads.prune() == 1 and await uploads.get("octo/app", "b" * 32) is None


async def test_the_pull_request_of_a_head_is_the_last_one_delivered(storage: Storage, database_url: str):
    uploads = UploadStore(database_url)
    assert await uploads.pull_for_head("octo/app", HEAD) is None
    for delivery, number in (("d1", 5), ("d2", 6)):
        assert await storage.deliveries.accept(Incoming(delivery, "pull_request", {}, b"{}", time.time()))
        await storage.deliveries.classified(
            [(delivery, "queued", Classification("job", "synchronize", 7, "octo/app", number, HEAD), None)])
    assert await uploads.pull_for_head("octo/app", HEAD) == 6
    assert await uploads.pull_for_head("other/app", HEAD) is None
