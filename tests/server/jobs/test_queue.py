"""The queue through the server: per-pull-request serialisation, supersede, bounded workers."""

from __future__ import annotations

import asyncio
import io
import json
import logging
import sqlite3

from bot.server import logging as log
from tests.support.server_support import Recorder, pr_payload, running_server, wait_for


async def _started(recorder: Recorder, delivery: str) -> None:
    await wait_for(lambda: _true(delivery in recorder.ids()))


async def _true(value: bool) -> bool:
    return value


async def test_same_pull_request_is_serialised_and_a_newer_head_supersedes_waiting_work(tmp_path):
    recorder = Recorder()
    recorder.hold["a"] = asyncio.Event()
    async with running_server(tmp_path, recorder) as server:
        await server.post("pull_request", pr_payload(1, "1" * 40), "a")
        await _started(recorder, "a")
        await server.post("pull_request", pr_payload(1, "2" * 40), "b")
        await server.wait_state("b", "queued")
        await server.post("pull_request", pr_payload(1, "3" * 40), "c")
        # another pull request runs while the first is busy
        await server.post("pull_request", pr_payload(2, "4" * 40), "d")
        await server.wait_state("d", "done")
        record = await server.wait_state("b", "superseded")
        assert record["error"] == f"superseded by delivery c (head {'3' * 40})"
        assert await server.state("a") == "running" and await server.state("c") == "queued"
        assert recorder.ids() == ["a", "d"]  # c waits for a: one job per pull request at a time
        recorder.hold["a"].set()
        await server.wait_state("c", "done")
    assert recorder.ids() == ["a", "d", "c"]


async def test_work_for_the_same_head_is_kept_and_runs_in_order(tmp_path):
    recorder = Recorder()
    recorder.hold["first"] = asyncio.Event()
    head = "5" * 40
    async with running_server(tmp_path, recorder) as server:
        await server.post("pull_request", pr_payload(3, head), "first")
        await _started(recorder, "first")
        await server.post("pull_request", pr_payload(3, head, action="labeled"), "second")
        await server.post("pull_request", pr_payload(3, head, action="unlabeled"), "third")
        await server.wait_state("third", "queued")
        recorder.hold["first"].set()
        await server.wait_state("third", "done")
    assert recorder.ids() == ["first", "second", "third"]


async def test_a_redelivered_old_head_is_superseded_by_newer_waiting_work(tmp_path):
    recorder = Recorder()
    recorder.fail["old"] = "GitHub answered 502"
    recorder.hold["busy"] = asyncio.Event()
    async with running_server(tmp_path, recorder) as server:
        old = pr_payload(4, "6" * 40)
        await server.post("pull_request", old, "old")
        await server.wait_state("old", "failed")
        await server.post("pull_request", pr_payload(4, "7" * 40), "busy")
        await _started(recorder, "busy")
        await server.post("pull_request", pr_payload(4, "7" * 40, action="labeled"), "newer")
        await server.wait_state("newer", "queued")
        await server.post("pull_request", old, "old")  # redelivered: received before "newer", older head
        record = await server.wait_state("old", "superseded")
        assert record["error"] == f"superseded by delivery newer (head {'7' * 40})"
        recorder.hold["busy"].set()
        await server.wait_state("newer", "done")
    assert recorder.ids() == ["old", "busy", "newer"]


async def test_workers_are_bounded(tmp_path):
    recorder = Recorder()
    ids = [f"pr-{n}" for n in range(5)]
    for delivery in ids:
        recorder.hold[delivery] = asyncio.Event()
    async with running_server(tmp_path, recorder, REVIEWER_WORKERS="2") as server:
        for n, delivery in enumerate(ids):
            await server.post("pull_request", pr_payload(10 + n, "8" * 40), delivery)
        await wait_for(lambda: _true(len(recorder.jobs) == 2))
        for delivery in ids:
            await server.wait_state(delivery, "queued", "running")
        await asyncio.sleep(0.1)  # room for a third worker to start, were there one
        assert len(recorder.jobs) == 2  # five pull requests, two workers
        for delivery in ids:
            recorder.hold[delivery].set()
        for delivery in ids:
            await server.wait_state(delivery, "done")
    assert sorted(recorder.ids()) == ids


async def test_a_job_starts_only_once_its_running_mark_is_committed(tmp_path):
    """The mark records the attempt: a job begun before it was durable and cut off by a crash
    would be run again as a first attempt, and would not take up the check run it had created."""
    recorder = Recorder()
    recorder.hold["first"] = asyncio.Event()
    head = "9" * 40
    async with running_server(tmp_path, recorder) as server:
        await server.post("pull_request", pr_payload(5, head), "first")
        await _started(recorder, "first")
        await server.post("pull_request", pr_payload(5, head, action="labeled"), "second")
        await server.wait_state("second", "queued")  # waits behind "first": the same pull request
        other = sqlite3.connect(tmp_path / "reviewer.db", isolation_level=None)
        other.execute("BEGIN IMMEDIATE")  # no commit can happen now
        try:
            recorder.hold["first"].set()
            await asyncio.sleep(0.3)  # room for "second" to start, were it started before its mark
            assert recorder.ids() == ["first"]
        finally:
            other.execute("ROLLBACK")
            other.close()
        await server.wait_state("second", "done")
    assert recorder.ids() == ["first", "second"]
    assert [job.attempt for job in recorder.jobs] == [1, 1]


async def test_lines_logged_inside_a_job_carry_its_delivery_id(tmp_path):
    stream = io.StringIO()
    handler = log.configure(stream)

    async def logs_inside(job) -> None:
        log.get("pipeline").info("working on it")  # the job's own code names no delivery

    try:
        async with running_server(tmp_path, logs_inside) as server:
            assert (await server.post("pull_request", pr_payload(7, "c" * 40), "delivery-77"))[0] == 202
            await server.wait_state("delivery-77", "done")
        log.get("pipeline").info("outside any job")
    finally:
        for name in ("reviewer", "aiohttp"):
            logger = logging.getLogger(name)
            logger.removeHandler(handler)
            logger.propagate = True
            logger.setLevel(logging.NOTSET)
    lines = {entry["msg"]: entry for entry in map(json.loads, stream.getvalue().splitlines())}
    assert lines["working on it"]["delivery"] == "delivery-77"
    assert "delivery" not in lines["outside any job"]


async def test_bodies_past_a_megabyte_are_read_as_any_other(tmp_path):
    """Big bodies are parsed off the event loop (bot.server.jobs.dispatch.BIG_BODY): the outcome is the
    one a small body gets, a job for a pull request and a refusal for a body that is no object."""
    from bot.server.jobs.dispatch import BIG_BODY

    big = pr_payload(5, "5" * 40)
    big["pull_request"]["body"] = "x" * (2 * BIG_BODY)  # a long description, as GitHub may send
    not_an_object = json.dumps([{"filler": "y" * 1000}] * (2 * BIG_BODY // 1000)).encode()
    recorder = Recorder()
    async with running_server(tmp_path, recorder) as server:
        assert (await server.post("pull_request", big, "big"))[0] == 202
        assert (await server.post("pull_request", not_an_object, "big-list"))[0] == 202
        assert (await server.post("pull_request", pr_payload(6, "6" * 40), "small"))[0] == 202
        await server.wait_state("big", "done")
        refused = await server.wait_state("big-list", "failed")
        await server.wait_state("small", "done")
    assert refused["error"] == "the body is a JSON list, not an object"
    job = next(job for job in recorder.jobs if job.delivery_id == "big")
    assert job.pr_number == 5 and job.head_sha == "5" * 40 and len(job.payload["pull_request"]["body"]) == 2 * BIG_BODY
