"""One suite, both backends: every storage behaviour the server relies on, run against SQLite and
against real PostgreSQL (the `storage` and `database_url` fixtures in tests/conftest.py)."""

from __future__ import annotations

import asyncio
import json
import time

import pytest

from bot.events.jobs import Classification, ReviewResult
from bot.store import storage_for
from bot.store.model import Conflict, DeliveryDecision, Incoming, Received, Storage
from tests.store.rows import attempt_of, finished, incoming, job_of, queue_delivery


async def test_a_delivery_is_taken_once_and_a_failed_one_again(storage: Storage):
    store = storage.deliveries
    woken = []
    store.on_received = lambda: woken.append(1)
    assert await store.accept(incoming("d1")) is True
    assert await store.accept(incoming("d1")) is False  # a duplicate changes nothing
    assert len(woken) == 1 and await store.count() == 1
    await store.classified([("d1", "queued", job_of(1, "a" * 40), None)])
    started = await store.start("d1")
    assert started is not None and started.attempt == 1
    await store.finish(["d1"], "failed", "GitHub answered 502")
    record = await store.delivery("d1")
    assert (record["state"], record["error"]) == ("failed", "GitHub answered 502")
    assert await store.accept(incoming("d1", b'{"action": "reopened"}')) is True  # a redelivery retries
    record = await store.delivery("d1")
    assert (record["state"], record["received_count"], record["body"]) == ("received", 2, b'{"action": "reopened"}')


async def test_concurrent_accepts_of_one_id_take_it_once(storage: Storage):
    results = await asyncio.gather(*(storage.deliveries.accept(incoming("same")) for _ in range(20)),
                                   *(storage.deliveries.accept(incoming(f"other-{i}")) for i in range(20)))
    assert results[:20].count(True) == 1 and all(results[20:])
    assert await storage.deliveries.count() == 21


async def test_the_body_and_headers_come_back_as_received(storage: Storage):
    body = json.dumps({"action": "opened", "text": "é" * 5000}).encode()
    await storage.deliveries.accept(incoming("big", body))
    [received] = await storage.deliveries.received(10)
    assert (received.delivery_id, received.event, received.body) == ("big", "pull_request", body)
    record = await storage.deliveries.delivery("big")
    assert record["headers"] == {"X-GitHub-Event": "pull_request"} and record["body"] == body
    assert await storage.deliveries.delivery("absent") is None


async def test_the_job_life_received_queued_running_done(storage: Storage):
    store = storage.deliveries
    for i in range(3):
        assert await store.accept(incoming(f"j{i}"))
    assert [r.delivery_id for r in await store.received(2)] == ["j0", "j1"]  # in order, bounded
    await store.classified([("j0", "queued", job_of(1, "a" * 40), None), ("j1", "ignored", None, None),
                            ("j2", "queued", job_of(2, "b" * 40), None)])
    assert await store.received(10) == []
    queued = await store.queued()
    assert [(q.delivery_id, q.key, q.head_sha) for q in queued] == [
        ("j0", "octo/app#1", "a" * 40), ("j2", "octo/app#2", "b" * 40)]
    started = await store.start("j0")
    assert started is not None
    assert (started.repo, started.pr_number, started.installation_id, started.action) == ("octo/app", 1, 7, "synchronize")
    assert await store.start("j0") is None  # already running: nobody else starts it
    await store.finish(["j0"], "done", wait=False)
    await store.finish(["j2"], "superseded", "by j3", from_state="queued")
    await asyncio.sleep(0.05)
    assert (await store.delivery("j0"))["state"] == "done"
    assert (await store.delivery("j2"))["state"] == "superseded"
    assert await store.count("ignored") == 1


async def test_only_one_of_many_starts_wins(storage: Storage):
    await queue_delivery(storage, "race")
    started = await asyncio.gather(*(storage.deliveries.start("race") for _ in range(10)))
    assert sum(s is not None for s in started) == 1


async def test_interrupted_jobs_are_requeued_and_counted_as_a_new_attempt(storage: Storage):
    store = storage.deliveries
    await queue_delivery(storage, "cut")
    await store.start("cut")
    assert await store.recover() == 1
    again = await store.start("cut")
    assert again is not None and again.attempt == 2


async def test_the_row_keeps_when_it_was_queued_and_each_requeue_renews_it(storage: Storage):
    """`queued_at`: set when the dispatcher queues a row (claim or classified), renewed when a
    recovery puts it back, cleared by a redelivery; never set on a row that was not queued."""
    store = storage.deliveries
    for delivery in ("q1", "ig", "q2"):
        assert await store.accept(incoming(delivery, at=time.time() - 60))
    before = time.time()
    await store.classified([("q1", "queued", job_of(1, "a" * 40), None), ("ig", "ignored", None, None)])

    async def decide(row: Received) -> DeliveryDecision:
        return DeliveryDecision(row.event, (row.delivery_id, "queued", job_of(2, "b" * 40), None))
    assert [d.classified[0] for d in await store.claim(10, decide)] == ["q2"]
    after = time.time()
    records = {d: await store.delivery(d) for d in ("q1", "ig", "q2")}
    assert before <= records["q1"]["queued_at"] <= after and before <= records["q2"]["queued_at"] <= after
    assert records["q1"]["finished_at"] is None and records["q1"]["received_at"] < records["q1"]["queued_at"]
    assert records["ig"]["queued_at"] is None and records["ig"]["finished_at"] is not None
    summaries = {r["delivery_id"]: r for r in await store.recent(limit=10)}  # the console's lists carry it too
    assert summaries["q1"]["queued_at"] == records["q1"]["queued_at"] and summaries["ig"]["queued_at"] is None

    assert await store.start("q1") is not None
    await asyncio.sleep(0.01)
    assert await store.recover() == 1  # a crash cut the job off: queued again, now
    recovered = await store.delivery("q1")
    assert recovered["queued_at"] > records["q1"]["queued_at"] and recovered["started_at"] is None
    assert await store.start("q1") is not None
    await store.finish(["q1"], "failed", "boom")
    assert await store.redeliver("q1")  # the console's redelivery: received again, not queued yet
    assert (await store.delivery("q1"))["queued_at"] is None
    assert await store.start("q2") is not None
    await store.finish(["q2"], "failed", "boom")
    assert await store.accept(incoming("q2"))  # GitHub's redelivery of a failed one
    assert (await store.delivery("q2"))["queued_at"] is None
    again = time.time()
    await store.classified([("q2", "queued", job_of(2, "b" * 40), None)])
    assert (await store.delivery("q2"))["queued_at"] >= again


async def test_prune_deletes_only_old_finished_deliveries(storage: Storage):
    store = storage.deliveries
    old = time.time() - 40 * 86400
    for delivery in ("old-done", "old-open", "new-done"):
        await store.accept(incoming(delivery, at=old if delivery.startswith("old") else time.time()))
    await store.classified([("old-done", "ignored", None, None), ("new-done", "ignored", None, None)])
    assert await store.prune(time.time() - 30 * 86400, 10) == 1
    assert await store.delivery("old-done") is None
    assert (await store.delivery("old-open"))["state"] == "received"  # open: kept however old
    assert await store.delivery("new-done") is not None


async def test_installations_follow_their_events(storage: Storage):
    store = storage.deliveries
    created = {"action": "created", "installation": {"id": 5, "account": {"login": "octo"}},
               "repositories": [{"full_name": "octo/App"}, {"full_name": "octo/lib"}]}
    await store.record_installation("installation", created)
    await store.record_installation("installation_repositories", {
        "action": "removed", "installation": {"id": 5}, "repositories_removed": [{"full_name": "octo/lib"}]})
    assert await store.installation(5) == {"id": 5, "account": "octo", "last_action": "installation_repositories.removed",
                                           "deleted": False, "repositories": ["octo/App"]}
    assert await store.installation_for("OCTO/app") == 5  # GitHub's names are case-insensitive
    assert await store.installation_for("octo/lib") is None
    await store.record_installation("installation", {"action": "deleted", "installation": {"id": 5}})
    assert await store.installation_for("octo/app") is None
    assert await store.installation(6) is None


def _obj(display: str) -> dict:
    return {"metadata": {"name": "okta"}, "spec": {"display": display}, "status": {"conditions": []}}


async def test_connectors_are_written_optimistically(storage: Storage):
    connectors = storage.connectors
    created, is_new = await connectors.put("K", "okta", None, lambda previous: _obj("v1"))
    assert is_new and created["metadata"]["resourceVersion"] == "1" and created["status"]["serviceResourceID"] == 1
    with pytest.raises(Conflict):
        await connectors.put("K", "okta", "0", lambda previous: _obj("stale"))
    with pytest.raises(Conflict):
        await connectors.put("K", "absent", "1", lambda previous: _obj("x"))
    seen = []
    replaced, is_new = await connectors.put("K", "okta", "1", lambda previous: seen.append(previous) or _obj("v2"))
    assert not is_new and seen[0]["spec"]["display"] == "v1" and replaced["metadata"]["resourceVersion"] == "2"
    await connectors.put("K", "adfs", None, lambda previous: {**_obj("a"), "metadata": {"name": "adfs"}})
    items, version = await connectors.list("K")
    assert [o["metadata"]["name"] for o in items] == ["adfs", "okta"] and version == "3"
    assert (await connectors.list("Other")) == ([], "3")
    assert (await connectors.delete("K", "okta"))["spec"]["display"] == "v2"
    assert await connectors.get("K", "okta") is None and await connectors.delete("K", "okta") is None
    assert (await connectors.list("K"))[1] == "4"  # a deletion is a change a lister sees


async def test_two_processes_writing_one_version_one_wins(database_url: str):
    """Two storages on one database (two server processes): the same resourceVersion cannot win twice."""
    first, second = storage_for(database_url), storage_for(database_url)
    await asyncio.gather(first.open(), second.open())  # migrations at once: one migrates, one waits
    try:
        created, _ = await first.connectors.put("K", "okta", None, lambda previous: _obj("v1"))
        version = created["metadata"]["resourceVersion"]

        async def write(storage: Storage, display: str) -> str:
            try:
                await storage.connectors.put("K", "okta", version, lambda previous: _obj(display))
                return "won"
            except Conflict:
                return "conflict"
        outcomes = await asyncio.gather(write(first, "A"), write(second, "B"))
        assert sorted(outcomes) == ["conflict", "won"]
        stored = await second.connectors.get("K", "okta")
        assert int(stored["metadata"]["resourceVersion"]) == int(version) + 1
    finally:
        await first.close()
        await second.close()


# --- what the admin console asks of the storage ---------------------------------------------------

async def _deliveries(storage: Storage, rows: list[tuple[str, str, str, float]]) -> dict[str, int]:
    """Deliveries (id, repo, final state, received at), classified; returns each one's seq."""
    store = storage.deliveries
    for delivery, _, _, at in rows:
        assert await store.accept(incoming(delivery, at=at))
    await store.classified([(delivery, state, Classification("job", "opened", 7, repo, 1, "a" * 40), None)
                            for delivery, repo, state, _ in rows])
    return {r["delivery_id"]: r["seq"] for r in await store.recent(limit=100)}


async def test_recent_pages_newest_first_by_filter_without_bodies(storage: Storage):
    now = time.time()
    seqs = await _deliveries(storage, [("r0", "acme/app", "ignored", now - 7200), ("r1", "acme/app", "queued", now),
                                       ("r2", "other/lib", "ignored", now), ("r3", "acme/app", "ignored", now)])
    store = storage.deliveries
    first = await store.recent(limit=2)
    assert [r["delivery_id"] for r in first] == ["r3", "r2"]
    assert "body" not in first[0] and "headers" not in first[0]
    assert (first[0]["repo"], first[0]["state"], first[0]["event"], first[0]["pr_number"]) == (
        "acme/app", "ignored", "pull_request", 1)
    following = await store.recent(before_seq=seqs["r2"], limit=2)
    assert [r["delivery_id"] for r in following] == ["r1", "r0"]
    assert await store.recent(before_seq=seqs["r0"]) == []
    assert [r["delivery_id"] for r in await store.recent(repo="acme/app", state="ignored")] == ["r3", "r0"]
    assert [r["delivery_id"] for r in await store.recent(event="pull_request", since=now - 60)] == ["r3", "r2", "r1"]
    assert await store.recent(repo="acme/ap") == [] and await store.recent(event="push") == []
    assert [r["delivery_id"] for r in await store.recent(repo="", state=None)] == ["r3", "r2", "r1", "r0"]
    assert await store.shown_states_since(now - 60) == {"ignored": 2, "queued": 1}
    assert await store.shown_states_since(now - 3 * 3600) == {"ignored": 3, "queued": 1}
    assert await store.shown_states_since(now + 60) == {}


async def test_a_redelivered_failed_delivery_is_dispatched_again_as_a_new_one(storage: Storage):
    store = storage.deliveries
    woken: list[int] = []
    store.on_received = lambda: woken.append(1)
    await queue_delivery(storage, "f1")
    await queue_delivery(storage, "ok", pr=2)
    assert await store.start("f1") is not None and await store.start("ok") is not None
    await store.finish(["f1"], "failed", "the model answered 500")
    await store.finish(["ok"], "done")
    woken.clear()
    before = store.unclassified
    assert await store.redeliver("ok") is False  # a finished delivery never runs twice
    assert await store.redeliver("absent") is False
    assert await store.redeliver("f1") is True
    assert woken == [1] and store.unclassified == before + 1  # the dispatcher's wake-up, as after an intake
    record = await store.delivery("f1")
    assert (record["state"], record["error"], record["repo"], record["job_key"], record["received_count"]) == (
        "received", None, None, None, 2)
    assert record["body"] == b'{"action": "opened"}' and record["attempts"] == 1
    assert await store.redeliver("f1") is False  # already received: a second click changes nothing
    async def decide(row: Received) -> DeliveryDecision:
        return DeliveryDecision(row.event, (row.delivery_id, "queued", job_of(1, "a" * 40), None))

    claimed = await store.claim(10, decide)
    assert [d.classified[0] for d in claimed] == ["f1"]
    started = await store.start("f1")
    assert started is not None and started.attempt == 2


async def test_a_review_that_failed_is_kept_beside_its_done_job_and_counted_as_failed(storage: Storage):
    # A review whose models all failed showed as a green `done` delivery, counted as done.
    store = storage.deliveries
    now = time.time()
    await finished(storage, "broken", ReviewResult("failed", "no-usable-answer"))
    await finished(storage, "approved", ReviewResult("approved"), pr=2)
    await finished(storage, "skipped", ReviewResult("skipped", "filtered"), pr=3)
    await finished(storage, "index", None, pr=4)  # a job that ran no review
    await queue_delivery(storage, "crashed", pr=5)
    assert await store.start("crashed") is not None
    await store.finish(["crashed"], "failed", "GitHub answered 502")
    broken = await store.delivery("broken")
    assert (broken["state"], broken["review_outcome"], broken["review_reason"], broken["error"]) == (
        "done", "failed", "no-usable-answer", None)
    assert ((await store.delivery("skipped"))["review_outcome"], (await store.delivery("skipped"))["review_reason"]) == (
        "skipped", "filtered")
    assert (await store.delivery("index"))["review_outcome"] is None
    assert await store.shown_states_since(now - 60) == {"failed": 2, "done": 3}
    assert [r["delivery_id"] for r in await store.recent(state="failed")] == ["crashed", "broken"]
    assert [r["delivery_id"] for r in await store.recent(state="done")] == ["index", "skipped", "approved"]
    [row] = await store.recent(repo="octo/app", state="failed", before_seq=None, limit=1)
    assert (row["delivery_id"], row["review_outcome"], row["review_reason"]) == ("crashed", None, None)
    assert {r["delivery_id"]: r["review_outcome"] for r in await store.recent()}["broken"] == "failed"


async def test_a_delivery_whose_review_failed_is_redelivered_as_a_failed_one(storage: Storage):
    store = storage.deliveries
    await finished(storage, "broken", ReviewResult("failed", "invalid-config"))
    await finished(storage, "found", ReviewResult("findings"), pr=2)
    await finished(storage, "by-github", ReviewResult("failed", "no-usable-answer"), pr=3)
    assert await store.redeliver("found") is False  # a review that completed never runs twice
    assert await store.accept(incoming("found")) is False
    assert await store.redeliver("broken") is True  # the console's (and the admin API's) redelivery
    record = await store.delivery("broken")
    assert (record["state"], record["review_outcome"], record["review_reason"], record["received_count"]) == (
        "received", None, None, 2)
    assert await store.redeliver("broken") is False
    assert await store.accept(incoming("by-github", b'{"action": "synchronize"}')) is True  # GitHub's own
    record = await store.delivery("by-github")
    assert (record["state"], record["review_outcome"], record["body"]) == ("received", None, b'{"action": "synchronize"}')


async def test_the_timeline_keeps_an_attempt_per_row_and_goes_with_its_delivery(storage: Storage):
    old = time.time() - 40 * 86400
    await _deliveries(storage, [("gone", "acme/app", "ignored", old), ("open", "acme/app", "queued", old),
                                ("kept", "acme/app", "ignored", time.time())])
    timeline = storage.timeline
    for entry in (attempt_of("gone", 2, "done"), attempt_of("gone", 1, "running"), attempt_of("gone", 1, "failed"),
                  attempt_of("open", 1, "failed"), attempt_of("kept", 1, "done")):
        await timeline.write(entry)
    assert await timeline.attempts("gone") == [attempt_of("gone", 1, "failed"), attempt_of("gone", 2, "done")]
    assert await timeline.attempts("absent") == []
    assert await storage.deliveries.prune(time.time() - 30 * 86400, 10) == 1
    assert await timeline.attempts("gone") == []  # with its delivery, in the same transaction
    assert await timeline.attempts("open") == [attempt_of("open", 1, "failed")]  # an open delivery is kept
    assert await timeline.attempts("kept") == [attempt_of("kept", 1, "done")]


async def test_a_timeline_row_not_waited_for_is_committed_with_the_jobs_end(storage: Storage):
    """The recorder does not wait for its row's commit; the job's end, written after it, does."""
    store = storage.deliveries
    await queue_delivery(storage, "job")
    assert await store.start("job") is not None
    await storage.timeline.write(attempt_of("job", 1, "failed"), wait=False)
    await store.finish(["job"], "failed", "boom")
    assert await storage.timeline.attempts("job") == [attempt_of("job", 1, "failed")]


async def test_a_timeline_written_by_one_process_is_read_by_another(database_url: str):
    """A worker writes what a job did; a web process's console reads it."""
    worker, web = storage_for(database_url), storage_for(database_url)
    await worker.open()
    await web.open()
    try:
        await worker.timeline.write(attempt_of("d1", 1, "done"))
        assert await web.timeline.attempts("d1") == [attempt_of("d1", 1, "done")]
    finally:
        await worker.close()
        await web.close()


async def test_a_job_the_store_went_away_under_restarts_in_place_as_its_next_attempt(storage: Storage):
    store = storage.deliveries
    await queue_delivery(storage, "again")
    assert (await store.start("again")).attempt == 1
    restarted = await store.restart("again")
    assert restarted is not None and restarted.attempt == 2 and restarted.body == b'{"action": "opened"}'
    assert (await store.delivery("again"))["state"] == "running"
    await store.finish(["again"], "done")
    assert await store.restart("again") is None  # only a running job restarts


async def test_a_jobs_journal_lives_until_its_job_finishes(storage: Storage, database_url: str):
    """The journal (written through the review memory, on the same database) goes with the end of
    its job, in the same commit, so that a redelivery of a failed job starts afresh."""
    from bot.store.reviews import review_memory_for as review_memory

    store, memory = storage.deliveries, review_memory(database_url)
    for delivery in ("ends", "stays"):
        await queue_delivery(storage, delivery, pr={"ends": 1, "stays": 2}[delivery])
        await store.start(delivery)
        await memory.write_journal(delivery, {"decided": delivery})
    assert await memory.journal("ends") == {"decided": "ends"}
    await store.finish(["ends"], "failed", "GitHub answered 502")
    await store.finish(["stays"], "done", from_state="queued")  # not queued: nothing ends, nothing goes
    assert await memory.journal("ends") is None and await memory.journal("stays") == {"decided": "stays"}
    await store.finish(["stays"], "done")
    assert await memory.journal("stays") is None


async def test_a_job_starts_with_its_deliverys_trace_and_queued_time(storage: Storage):
    """The trace context the webhook stored comes back when the job starts, and on its restart
    (bot.telemetry: the job continues the delivery's trace in whichever process runs it)."""
    store = storage.deliveries
    parent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    traced = Incoming("traced", "pull_request", {}, b'{"action": "opened"}', time.time(), parent)
    assert await store.accept(traced) and await store.accept(incoming("plain"))
    await store.classified([("traced", "queued", job_of(1, "a" * 40), None), ("plain", "queued", job_of(2, "b" * 40), None)])
    started = await store.start("traced")
    assert started is not None and started.traceparent == parent
    assert started.queued_at is not None and started.queued_at <= time.time()
    restarted = await store.restart("traced")
    assert restarted is not None and restarted.traceparent == parent and restarted.attempt == 2
    plain = await store.start("plain")
    assert plain is not None and plain.traceparent is None
