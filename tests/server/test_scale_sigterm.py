"""A graceful SIGTERM of a worker: its jobs finish, its heartbeat beats until they have, and it
exits within a minute even with PostgreSQL away (tests/server/test_scale_exactly_once.py says how
the tests/server/test_scale_*.py files divide the design's "Scale-out")."""

from __future__ import annotations

import asyncio

import pytest

from tests.support.app_support import World, installed
from tests.support.process_support import caught
from tests.support.scale_support import (
    COMPARE,
    DEAD_AND_SWEPT,
    ONE_MORE_SWEEP,
    Proc,
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


# what a worker says as it meets PostgreSQL away, wherever it was: registering, polling, beating, sweeping
MET_THE_OUTAGE = ("the job worker stopped on an error; starting it again", "could not fetch a job; trying again at "
                  "the next poll", "the worker's heartbeat failed; trying again", "the stalled-job sweep failed; trying again")


async def _said(proc: Proc, *messages: str, timeout: float = 30) -> None:
    """Until the process logged one of `messages`."""
    async def logged() -> bool:
        return not set(messages).isdisjoint(proc.messages())
    await wait_for(logged, timeout=timeout)


async def test_sigterm_lets_the_job_in_flight_finish_then_exits(world, app_private_key, pg_url):
    pr = world.pull()
    held = world.github.delay(COMPARE, 60)  # the job is inside GitHub's call when SIGTERM comes
    with processes(lambda: web(world, app_private_key, pg_url), lambda: worker(world, app_private_key, pg_url)) as (
            front, jobs):
        assert await deliver_to(world, front.url, pr, "delivery-1") == 202

        await caught(held, timeout=30)
        jobs.stop()
        await _said(jobs, "stopping")
        held.release()  # the job goes on while the worker stops
        assert await asyncio.to_thread(jobs.proc.wait, 70) == 0
        assert "server stopped" in jobs.messages()
    assert [run.status for run in world.runs(pr)] == ["completed"]
    assert deliveries(pg_url) == {"delivery-1": ("done", 1)}


async def test_sigterm_exits_within_a_minute_while_postgresql_is_away(world, app_private_key, pg_cluster):
    """procrastinate ends a cancelled run with the store's error when PostgreSQL is down; the
    worker once took that for a crash and started again, never exiting."""
    cluster = pg_cluster
    with processes(lambda: worker(world, app_private_key, cluster.url)) as (jobs,):
        await asyncio.to_thread(cluster.stop, "immediate")
        await _said(jobs, *MET_THE_OUTAGE)
        began = asyncio.get_running_loop().time()
        assert await asyncio.to_thread(jobs.terminate, 70) == 0
        assert asyncio.get_running_loop().time() - began < 60


async def test_sigterm_keeps_the_heartbeat_while_its_jobs_finish(world, app_private_key, pg_url):
    """A stopping worker still runs its jobs, so it is alive: another worker's sweep must not take
    them for a dead worker's and run them again while they finish (procrastinate stops its
    heartbeat as the stop begins). The jobs outlast the time after which a silent worker is dead
    and swept (DEAD_AND_SWEPT, from the queue's timings), counted from the other worker's start."""
    pulls = [world.pull() for _ in range(2)]
    held = world.github.delay(COMPARE, 90, times=2)
    with processes(lambda: web(world, app_private_key, pg_url), lambda: worker(world, app_private_key, pg_url)) as (
            front, stopping):
        for i, pr in enumerate(pulls):
            assert await deliver_to(world, front.url, pr, f"delivery-{i}") == 202

        await caught(held, timeout=30)
        with processes(lambda: worker(world, app_private_key, pg_url)) as (other,):
            stopping.stop()
            await _said(stopping, "stopping")
            await asyncio.sleep(DEAD_AND_SWEPT)  # the jobs run on all the while: a silent worker would be swept
            held.release()
            assert await asyncio.to_thread(stopping.proc.wait, 90) == 0
            await asyncio.sleep(ONE_MORE_SWEEP)  # one more sweep of the other worker after the jobs ended
            assert "retrying a job whose worker stopped answering" not in other.messages()
    assert deliveries(pg_url) == {"delivery-0": ("done", 1), "delivery-1": ("done", 1)}  # each ran once
    assert [[run.status for run in world.runs(pr)] for pr in pulls] == [["completed"], ["completed"]]
    assert stopping.messages().count("job done") == 2 and "job done" not in other.messages()
