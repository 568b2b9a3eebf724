"""The delivery store through the server: what is on disk."""

from __future__ import annotations

import json
import sqlite3
import time
import zlib

from tests.server_support import Recorder, pr_payload, running_server


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
