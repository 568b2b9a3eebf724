"""PostgreSQL going away under the scaled-out processes: nothing lost, the workers live through it,
a review is posted once (tests/server/test_scale_exactly_once.py says how the
tests/server/test_scale_*.py files divide the design's "Scale-out"). Each test stops and starts a
throwaway cluster of its own."""

from __future__ import annotations

import asyncio

import pytest

from tests.support.app_support import World, installed
from tests.support.chat_double import ChatDouble
from tests.support.process_support import a_bug_found, caught
from tests.support.review_support import API_KEY, app_reviews, summary_comments
from tests.support.scale_support import (
    COMPARE,
    DEAD_AND_SWEPT,
    REVIEWS,
    TIMINGS,
    deliver_to,
    deliveries,
    processes,
    web,
    worker,
)
from tests.support.server_support import wait_for

pytestmark = pytest.mark.slow  # `reviewer serve` processes of their own: `make test-fast` leaves them out


@pytest.fixture
def world(tmp_path, github, github_app) -> World:
    return installed(tmp_path, github, github_app)


async def test_postgresql_restarting_under_load_loses_nothing(world, app_private_key, pg_cluster):
    pulls = [world.pull() for _ in range(8)]
    cluster = pg_cluster
    url = cluster.url
    with processes(lambda: web(world, app_private_key, url), lambda: worker(world, app_private_key, url)) as (
            front, _):
        answers: dict[str, int] = {}

        async def send(i: int) -> None:
            while (status := await deliver_to(world, front.url, pulls[i], f"delivery-{i}")) != 202:
                assert status == 503  # never lost silently: refused, so GitHub redelivers
                answers[f"delivery-{i}"] = status
                await asyncio.sleep(0.2)

        for i in range(3):  # the worker is busy with these while PostgreSQL goes away
            await send(i)
        await asyncio.to_thread(cluster.stop, "immediate")
        sending = asyncio.create_task(asyncio.wait_for(asyncio.gather(*(send(i) for i in range(3, 8))), 60))

        async def refused() -> bool:  # the intake saw the outage: a delivery was answered 503
            return 503 in answers.values()
        await wait_for(refused, timeout=30)
        await asyncio.to_thread(cluster.start)
        await sending
        for pr in pulls:
            assert (await world.completed_run(pr, timeout=60)).conclusion == "success"
    assert 503 in answers.values()  # the restart was seen by the intake
    assert set(deliveries(url)) == {f"delivery-{i}" for i in range(8)}
    assert [len(world.runs(pr)) for pr in pulls] == [1] * 8


async def test_a_worker_keeps_taking_jobs_after_its_heartbeat_met_an_outage(world, app_private_key, pg_cluster):
    """A heartbeat PostgreSQL could not take is tried again, never the end of the worker: after an
    outage longer than two heartbeats (the beat waits on its pool through it), the worker that lived
    through it runs the next delivery, and its job of the time, still running a while after
    (DEAD_AND_SWEPT), is not taken for a dead worker's."""
    first, second = world.pull(), world.pull()
    url = pg_cluster.url
    held = world.github.delay(COMPARE, 90)  # the job waits on GitHub all through the outage
    with processes(lambda: web(world, app_private_key, url), lambda: worker(world, app_private_key, url)) as (
            front, jobs):
        assert await deliver_to(world, front.url, first, "before") == 202

        await caught(held, timeout=30)
        await asyncio.to_thread(pg_cluster.stop, "immediate")
        # The outage's length, two and a half beats of the scaled timings (not a wait for an event): the
        # heartbeat's query waits on its pool for a connection all through it, and beats again after.
        await asyncio.sleep(2.5 * TIMINGS.heartbeat)
        await asyncio.to_thread(pg_cluster.start)
        await asyncio.sleep(DEAD_AND_SWEPT)  # were its heartbeat not beating again, its own sweep would retry the job
        held.release()
        assert (await world.completed_run(first, timeout=60)).conclusion == "success"
        while (status := await deliver_to(world, front.url, second, "after")) != 202:
            assert status == 503
            await asyncio.sleep(0.2)
        assert (await world.completed_run(second, timeout=60)).conclusion == "success"

        async def recorded() -> bool:  # the check run completes just before the row says so
            return deliveries(url) == {"before": ("done", 1), "after": ("done", 1)}
        await wait_for(recorded, timeout=30)  # before the processes stop: a killed worker records nothing
        assert "retrying a job whose worker stopped answering" not in jobs.messages()  # it was alive
    assert deliveries(url) == {"before": ("done", 1), "after": ("done", 1)}
    assert [len(world.runs(pr)) for pr in (first, second)] == [1, 1]


async def test_a_review_postgresql_goes_away_under_is_posted_once_when_it_is_back(
        world, app_private_key, pg_cluster, tmp_path):
    """PostgreSQL stops while the review is being posted: the review reaches GitHub, and remembering
    its findings then fails. That is no failure of the review: the job waits for the store and runs
    again, carries out the decision it had recorded (the model is not asked again), takes up the
    review and the run already on GitHub and ends with one of each, a success."""
    chat = await ChatDouble(api_key=API_KEY).start()
    pr, extra = a_bug_found(world, chat)
    url = pg_cluster.url
    posting = world.github.delay(REVIEWS, 60)  # the review's POST waits in GitHub while PostgreSQL stops
    try:
        with processes(lambda: web(world, app_private_key, url, **extra),
                       lambda: worker(world, app_private_key, url, **extra)) as (front, jobs):
            assert await deliver_to(world, front.url, pr, "delivery-1") == 202

            await caught(posting, timeout=60)
            await asyncio.to_thread(pg_cluster.stop, "immediate")
            posting.release()

            async def interrupted() -> bool:
                return "job interrupted: the store is unavailable; it runs again once the store is back" in \
                    jobs.messages()
            await wait_for(interrupted, timeout=30)
            assert [run.status for run in world.runs(pr)] == ["in_progress"]  # not concluded a failure
            await asyncio.to_thread(pg_cluster.start)
            run = await world.completed_run(pr, timeout=90)

            async def recorded() -> bool:
                return deliveries(url) == {"delivery-1": ("done", 2)}
            await wait_for(recorded, timeout=30)
    finally:
        await chat.close()
    assert run.conclusion == "failure" and run.output["title"] == "1 blocking finding(s)"  # the review's own verdict
    assert len(world.runs(pr)) == 1 and len(chat.requests) == 1  # one run; the model asked once
    assert [len(r.comments) for r in app_reviews(world, pr)] == [1]  # the review posted once, its finding inline
    assert len(summary_comments(world, pr)) == 1
