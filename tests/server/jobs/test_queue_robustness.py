"""Defects of the job queue, each pinned: the one stale-head rule both queues share, a bad signed
delivery failing alone instead of stalling the rest, the dispatcher holding no transaction (and
yielding) while it parses bodies, and the queue depth a web process reports."""

from __future__ import annotations

import asyncio
import json
import time

import aiohttp
import psycopg
import pytest
from aiohttp import web

from bot.events.jobs import Classification, InvalidPayload, classify, newest_head, supersedes
from bot.server.app import make_app
from bot.server.jobs.dispatch import decide_in_turn
from bot.server.jobs.pg_queue import stale
from bot.server.metrics import Metrics
from bot.store.model import DeliveryDecision, Incoming, Queued, Received, Storage
from tests.support.server_support import Recorder, Server, pr_payload, running_server, settings_for, wait_for

A, B = "a" * 40, "b" * 40


@pytest.mark.parametrize(("old", "new", "expected"), [
    (A, B, True),      # a push replaces the head: the old one's job is pointless
    (A, A, False),     # the same head (a label, a rerequest) keeps its job
    (None, B, False),  # a comment or review names no head: never superseded
    (A, None, False),  # ... and supersedes nothing
    (None, None, False),
])
def test_one_stale_head_rule(old, new, expected):
    assert supersedes(old, new) is expected


@pytest.mark.parametrize(("heads", "expected"), [
    ([], None), ([None], None), ([A, B], B), ([A, B, None], B), ([A, None, None], A), ([None, A, None], A),
])
def test_the_newest_head_is_the_latest_that_has_one(heads, expected):
    assert newest_head(heads) == expected


def _queued(seq: int, head: str | None, event: str = "pull_request") -> Queued:
    return Queued(seq, f"d{seq}", event, "octo/app#1", head)


def test_a_comment_queued_after_a_push_does_not_save_the_old_head():
    rows = [_queued(1, A), _queued(2, B), _queued(3, None, "issue_comment")]
    keep, dropped = stale(rows)
    assert [r.delivery_id for r in keep] == ["d2", "d3"]
    assert [r.delivery_id for r in dropped] == ["d1"]
    assert stale([_queued(1, None, "issue_comment")]) == ([_queued(1, None, "issue_comment")], [])


@pytest.mark.parametrize(("path", "value", "message"), [
    (("action",), "synchro\x00nize", "the payload's action contains a NUL character"),
    (("repository", "full_name"), "octo/a\x00pp", "the payload's repository.full_name contains a NUL"),
    (("pull_request", "head", "sha"), "a\x00" * 20, "the payload's pull_request.head.sha contains a NUL"),
    (("pull_request", "number"), 2**31, "the payload's pull_request.number is out of range"),
    (("installation", "id"), 2**63, "the payload's installation.id is out of range"),
])
def test_values_no_column_can_hold_are_invalid_payloads(path, value, message):
    payload = pr_payload(1, A)
    holder = payload
    for step in path[:-1]:
        holder = holder[step]
    holder[path[-1]] = value
    with pytest.raises(InvalidPayload, match=message):
        classify("pull_request", payload)


async def _accept(storage: Storage, delivery: str, body: bytes = b"{}") -> None:
    assert await storage.deliveries.accept(Incoming(delivery, "pull_request", {}, body, time.time()))


async def test_a_row_the_store_refuses_fails_alone(storage: Storage):
    """Whatever a store refuses of one row (here a pull request number past any integer column)
    marks that row failed; the rest of the batch is recorded."""
    for delivery in ("before", "bad", "after"):
        await _accept(storage, delivery)

    async def decide(row: Received) -> DeliveryDecision:
        number = 2**70 if row.delivery_id == "bad" else 5
        return DeliveryDecision(row.event, (row.delivery_id, "queued",
                                    Classification("job", "opened", 1, "octo/app", number, A), None))

    decisions = await storage.deliveries.claim(10, decide)
    assert [d.classified[1] for d in decisions] == ["queued", "failed", "queued"]
    bad = await storage.deliveries.delivery("bad")
    assert bad["state"] == "failed" and bad["error"].startswith("the delivery could not be recorded: ")
    for delivery in ("before", "after"):
        assert (await storage.deliveries.delivery(delivery))["state"] == "queued"
    assert await storage.deliveries.claim(10, decide) == []  # nothing left to retry forever


async def test_a_nul_in_a_signed_delivery_fails_it_alone_on_postgresql(tmp_path, pg_url):
    recorder = Recorder()
    async with running_server(tmp_path, recorder, REVIEWER_DATABASE_URL=pg_url) as server:
        assert (await server.post("pull_request", pr_payload(1, A, action="open\x00ed"), "bad"))[0] == 202
        assert (await server.post("pull_request", pr_payload(2, B), "good"))[0] == 202
        await server.wait_state("good", "done")
        record = await server.wait_state("bad", "failed")
    assert record["error"] == "the payload's action contains a NUL character (\\u0000)"
    assert recorder.ids() == ["good"]


async def test_the_dispatcher_parses_bodies_outside_its_transaction_and_yields(storage: Storage, database_url):
    """While a body is decided, its row is not locked (another connection takes it with NOWAIT),
    and the event loop runs other tasks between two bodies."""
    for i in range(3):
        await _accept(storage, f"d{i}", json.dumps(pr_payload(i + 1, A)).encode())
    events: list[str] = []

    async def ticker() -> None:
        while True:
            events.append("tick")
            await asyncio.sleep(0)

    async def decide(row: Received) -> DeliveryDecision:
        events.append(row.delivery_id)
        if database_url.startswith("postgresql"):
            async with await psycopg.AsyncConnection.connect(database_url, autocommit=True) as conn:
                await conn.execute("SELECT 1 FROM deliveries WHERE delivery_id = %s FOR UPDATE NOWAIT",
                                   (row.delivery_id,))
        return await decide_in_turn(row, Metrics(), storage.deliveries)

    ticking = asyncio.create_task(ticker())
    await asyncio.sleep(0)
    try:
        decisions = await storage.deliveries.claim(10, decide)
    finally:
        ticking.cancel()
    assert [d.classified[1] for d in decisions] == ["queued"] * 3
    between = events[events.index("d0"):events.index("d2")]
    assert between.count("tick") >= 2, events


async def test_a_web_process_reports_the_queue_depth(tmp_path, pg_url):
    """`serve --no-workers` runs no job: its /metrics counts the jobs waiting in procrastinate's table."""
    app = make_app(settings_for(tmp_path, REVIEWER_DATABASE_URL=pg_url), lambda context: Recorder(), role="web")
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        async with aiohttp.ClientSession() as http:
            server = Server(f"http://127.0.0.1:{runner.addresses[0][1]}", app, http)
            for i in range(3):
                assert (await server.post("pull_request", pr_payload(i + 1, A), f"d{i}"))[0] == 202

            async def depth_shown() -> bool:
                async with http.get(f"{server.url}/metrics") as response:
                    text = await response.text()
                return 'reviewer_queue_depth{state="queued"} 3' in text and "reviewer_jobs_running 0" in text
            assert await wait_for(depth_shown)
    finally:
        await runner.cleanup()
