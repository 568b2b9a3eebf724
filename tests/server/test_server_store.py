"""The delivery store through the server: what is on disk, and writes that wait for a lock."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import time
import zlib

from tests.support.server_support import Recorder, pr_payload, running_server, wait_for


def _row(db, delivery: str) -> tuple:
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT state, body FROM deliveries WHERE delivery_id = ?", (delivery,)).fetchone()


async def test_bodies_are_stored_compressed_and_read_back_whole(tmp_path):
    recorder = Recorder()
    payload = pr_payload(11, "a" * 40)
    body = json.dumps(payload).encode()
    async with running_server(tmp_path, recorder) as server:
        assert (await server.post("pull_request", body, "d-compact"))[0] == 202
        await server.wait_state("d-compact", "done")
    state, stored = _row(tmp_path / "reviewer.db", "d-compact")
    assert state == "done" and len(stored) < len(body) / 3  # GitHub's JSON shrinks several times
    assert recorder.jobs[0].payload == payload


async def test_rows_written_with_zlib_by_an_earlier_version_are_still_done(tmp_path):
    async with running_server(tmp_path, Recorder()):
        pass  # creates the database and its tables
    payload = pr_payload(12, "b" * 40)
    with sqlite3.connect(tmp_path / "reviewer.db") as conn:
        conn.execute("INSERT INTO deliveries (delivery_id, event, headers, body, received_at, state) "
                     "VALUES ('d-old', 'pull_request', '{}', ?, ?, 'received')",
                     (zlib.compress(json.dumps(payload).encode(), 1), time.time()))
    recorder = Recorder()
    async with running_server(tmp_path, recorder) as server:
        await server.wait_state("d-old", "done")
    assert [(job.delivery_id, job.payload) for job in recorder.jobs] == [("d-old", payload)]


async def test_a_delivery_waits_for_another_writer_without_stopping_the_server(tmp_path):
    """The connector store writes to the same file: while it holds the write lock, a delivery
    waits for it, and the server goes on answering meanwhile."""
    recorder = Recorder()
    async with running_server(tmp_path, recorder) as server:
        other = sqlite3.connect(tmp_path / "reviewer.db", isolation_level=None)
        other.execute("BEGIN IMMEDIATE")
        try:
            post = asyncio.create_task(server.post("pull_request", pr_payload(13, "c" * 40), "d-locked"))
            await asyncio.sleep(0.3)
            assert not post.done()  # not answered before it is stored
            async with server.http.get(server.url + "/healthz") as response:
                assert response.status == 200  # the event loop is not held by the wait
            assert await server.state("d-locked") is None
        finally:
            other.execute("COMMIT")
            other.close()
        assert (await post)[0] == 202
        await server.wait_state("d-locked", "done")
    assert recorder.ids() == ["d-locked"]


async def test_finished_deliveries_past_the_retention_period_are_deleted_at_start(tmp_path):
    recorder = Recorder()
    recorder.fail["failed"] = "GitHub answered 502"
    async with running_server(tmp_path, recorder) as server:
        for delivery, head in (("done", "1"), ("failed", "2"), ("recent", "3")):
            assert (await server.post("pull_request", pr_payload(20, head * 40), delivery))[0] == 202
            await server.wait_state(delivery, "done", "failed")
        assert (await server.post("star", {"action": "created"}, "ignored"))[0] == 202
        await server.wait_state("ignored", "ignored")
    old = time.time() - 31 * 86400
    with sqlite3.connect(tmp_path / "reviewer.db") as conn:
        conn.execute("UPDATE deliveries SET received_at = ? WHERE delivery_id IN ('done', 'failed', 'ignored')", (old,))
        # an old delivery whose job a crash interrupted is still to be done, however old
        conn.execute("UPDATE deliveries SET received_at = ?, state = 'running' WHERE delivery_id = 'recent'", (old,))
        conn.execute("INSERT INTO deliveries (delivery_id, event, headers, body, received_at, state) "
                     "SELECT 'kept', event, headers, body, ?, 'done' FROM deliveries WHERE delivery_id = 'recent'",
                     (time.time() - 29 * 86400,))

    recorder = Recorder()
    recorder.hold["recent"] = asyncio.Event()
    async with running_server(tmp_path, recorder, REVIEWER_DELIVERY_RETENTION_DAYS="30") as server:
        async def pruned() -> str | None:
            text = await (await server.http.get(server.url + "/metrics")).text()
            return text if "reviewer_deliveries_pruned_total 3" in text else None
        await wait_for(pruned)
        for gone in ("done", "failed", "ignored"):
            assert await server.store.delivery(gone) is None
        assert await server.state("kept") == "done"
        assert await server.state("recent") == "running"  # requeued at start, not deleted
        recorder.hold["recent"].set()
        await server.wait_state("recent", "done")
        # past its retention, a delivery id is new again
        status, text = await server.post("pull_request", pr_payload(20, "1" * 40), "done")
        assert (status, text.strip()) == (202, "accepted")
        await server.wait_state("done", "done")
    assert recorder.ids() == ["recent", "done"]
