"""A SIGKILLed worker's job taken up by another on its check run (tests/server/test_scale_exactly_once.py
says how the tests/server/test_scale_*.py files divide the design's "Scale-out")."""

from __future__ import annotations

import pytest

from tests.support.app_support import World, installed
from tests.support.process_support import caught
from tests.support.scale_support import COMPARE, COMPLETE, deliver_to, deliveries, processes, web, worker
from tests.support.server_support import wait_for

pytestmark = pytest.mark.slow  # `reviewer serve` processes of their own: `make test-fast` leaves them out


@pytest.fixture
def world(tmp_path, github, github_app) -> World:
    return installed(tmp_path, github, github_app)


async def test_a_worker_killed_mid_job_is_taken_up_by_another_on_the_same_check_run(world, app_private_key, pg_url):
    pr = world.pull()
    hang = world.github.delay(COMPARE, 120)  # the first attempt hangs inside the job, its run started
    with processes(lambda: web(world, app_private_key, pg_url), lambda: worker(world, app_private_key, pg_url)) as (
            front, first):
        assert await deliver_to(world, front.url, pr, "delivery-1") == 202

        await caught(hang, timeout=30)
        assert [run.status for run in world.runs(pr)] == ["in_progress"]
        first.kill()
        with processes(lambda: worker(world, app_private_key, pg_url)):
            run = await world.completed_run(pr, timeout=60)  # docs/operations.md: within a minute

            async def recorded() -> bool:  # the check run completes just before the row says so
                return deliveries(pg_url) == {"delivery-1": ("done", 2)}
            await wait_for(recorded, timeout=30)
    assert run.conclusion == "success"
    assert len(world.runs(pr)) == 1  # the run the killed worker started, completed by the other


async def test_a_worker_killed_as_it_completes_the_run_leaves_one_run_on_the_head(world, app_private_key, pg_url):
    """The window of the one-in-three second check run: GitHub completes the run, its answer is
    lost, and the worker is killed before it hears otherwise (here, while it waits to ask again).
    The retry finds its own run completed: it must take that up too (the earlier attempt did
    everything), not start another run beside it."""
    pr = world.pull()
    world.github.fail(COMPLETE, status=502, times=5, applied=True)  # completed, and answered 502
    with processes(lambda: web(world, app_private_key, pg_url), lambda: worker(world, app_private_key, pg_url)) as (
            front, first):
        assert await deliver_to(world, front.url, pr, "delivery-1") == 202
        assert (await world.completed_run(pr, timeout=30)).conclusion == "success"
        first.kill()  # the worker has not heard it: it waits a second or so to send the PATCH again
        assert deliveries(pg_url) == {"delivery-1": ("running", 1)}
        with processes(lambda: worker(world, app_private_key, pg_url)) as (second,):
            async def recorded() -> bool:
                return deliveries(pg_url) == {"delivery-1": ("done", 2)}
            await wait_for(recorded, timeout=90)  # the retry ran, as attempt 2
            assert "took up jobs a stopped worker left" in second.messages()
    assert [(run.status, run.conclusion) for run in world.runs(pr)] == [("completed", "success")]
