"""The scaled-out shape on real PostgreSQL: `reviewer serve --no-workers` and `reviewer worker`
processes, the real pipeline, the GitHub double over HTTP. Each guarantee of the design's
"Scale-out" has its test here: exactly once across processes, a SIGKILLed worker's job taken up on
its check run, PostgreSQL restarting under load, a graceful SIGTERM."""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import sys

import psycopg
import pytest

from tests.support.app_support import World, installed
from tests.support.chat_double import ChatDouble
from tests.support.process_support import ROOT, a_bug_found, caught, env
from tests.support.review_support import (
    API_KEY,
    app_reviews,
    summary_comments,
)
from tests.support.scale_support import Proc, web, worker
from tests.support.server_support import wait_for

pytestmark = pytest.mark.slow  # a `reviewer serve` process of its own: `make test-fast` leaves it out


COMPARE = "GET /repos/{owner}/{repo}/compare/{basehead}"
REVIEWS = "POST /repos/{owner}/{repo}/pulls/{pull_number}/reviews"
COMPLETE = "PATCH /repos/{owner}/{repo}/check-runs/{check_run_id}"


@pytest.fixture
def world(tmp_path, github, github_app) -> World:
    return installed(tmp_path, github, github_app)


@contextlib.contextmanager
def processes(*procs_made):
    procs: list[Proc] = []
    try:
        for make in procs_made:
            procs.append(make())
        yield procs
    except BaseException:  # say what the processes said: a failure here is otherwise opaque
        for proc in procs:
            print(f"--- {proc.proc.args}:\n" + "".join(proc.lines[-40:]))
        raise
    finally:
        for proc in procs:
            proc.kill()


def _deliveries(url: str) -> dict[str, tuple[str, int]]:
    with psycopg.connect(url) as conn:
        return {d: (s, a) for d, s, a in conn.execute("SELECT delivery_id, state, attempts FROM deliveries")}


async def _deliver_to(world: World, url: str, pr, delivery_id: str) -> int:
    payload = world.github.payload("pull_request", "opened", installation=world.installation, pull=pr)
    status, _ = await world.github.deliver(url + "/webhook", "pull_request", payload,
                                           secret=world.app.webhook_secret, delivery_id=delivery_id)
    return status


def test_the_split_roles_refuse_sqlite_naming_the_setting(tmp_path, app_private_key):
    environment = env(GITHUB_WEBHOOK_SECRET="s", GITHUB_APP_ID="1", GITHUB_PRIVATE_KEY=app_private_key,
                      REVIEWER_DATABASE_URL=f"sqlite:///{tmp_path / 'r.db'}")
    for args, prefix in ((["serve", "--no-workers"], "reviewer serve"), (["worker"], "reviewer worker")):
        done = subprocess.run([sys.executable, "-m", "bot", *args], env=environment, cwd=ROOT, capture_output=True,
                              text=True, timeout=60)
        assert done.returncode == 2, done.stderr
        assert f"{prefix}: error:" in done.stderr and "REVIEWER_DATABASE_URL=postgresql://" in done.stderr
        assert "Traceback" not in done.stderr


async def test_two_web_and_two_workers_process_every_delivery_exactly_once(world, app_private_key, pg_url):
    pulls = [world.pull() for _ in range(6)]
    make = [lambda: web(world, app_private_key, pg_url)] * 2 + [lambda: worker(world, app_private_key, pg_url)] * 2
    with processes(*make) as (web1, web2, _, _):
        for i, pr in enumerate(pulls):
            first, second = (web1, web2) if i % 2 else (web2, web1)
            assert await _deliver_to(world, first.url, pr, f"delivery-{i}") == 202
            assert await _deliver_to(world, second.url, pr, f"delivery-{i}") == 202  # GitHub redelivering
        for pr in pulls:
            run = await world.completed_run(pr, timeout=60)
            assert run.conclusion == "success"

        async def all_done() -> bool:
            return all(state == "done" for state, _ in _deliveries(pg_url).values())
        await wait_for(all_done, timeout=30)
    assert _deliveries(pg_url) == {f"delivery-{i}": ("done", 1) for i in range(6)}  # each started once
    assert [len(world.runs(pr)) for pr in pulls] == [1] * 6


async def test_a_worker_killed_mid_job_is_taken_up_by_another_on_the_same_check_run(world, app_private_key, pg_url):
    pr = world.pull()
    hang = world.github.delay(COMPARE, 120)  # the first attempt hangs inside the job, its run started
    with processes(lambda: web(world, app_private_key, pg_url), lambda: worker(world, app_private_key, pg_url)) as (
            front, first):
        assert await _deliver_to(world, front.url, pr, "delivery-1") == 202

        await caught(hang, timeout=30)
        assert [run.status for run in world.runs(pr)] == ["in_progress"]
        first.kill()
        with processes(lambda: worker(world, app_private_key, pg_url)):
            run = await world.completed_run(pr, timeout=60)  # docs/operations.md: within a minute

            async def recorded() -> bool:  # the check run completes just before the row says so
                return _deliveries(pg_url) == {"delivery-1": ("done", 2)}
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
        assert await _deliver_to(world, front.url, pr, "delivery-1") == 202
        assert (await world.completed_run(pr, timeout=30)).conclusion == "success"
        first.kill()  # the worker has not heard it: it waits a second or so to send the PATCH again
        assert _deliveries(pg_url) == {"delivery-1": ("running", 1)}
        with processes(lambda: worker(world, app_private_key, pg_url)) as (second,):
            async def recorded() -> bool:
                return _deliveries(pg_url) == {"delivery-1": ("done", 2)}
            await wait_for(recorded, timeout=90)  # the retry ran, as attempt 2
            assert "took up jobs a stopped worker left" in second.messages()
    assert [(run.status, run.conclusion) for run in world.runs(pr)] == [("completed", "success")]


async def test_sigterm_lets_the_job_in_flight_finish_then_exits(world, app_private_key, pg_url):
    pr = world.pull()
    slow = world.github.delay(COMPARE, 3)
    with processes(lambda: web(world, app_private_key, pg_url), lambda: worker(world, app_private_key, pg_url)) as (
            front, jobs):
        assert await _deliver_to(world, front.url, pr, "delivery-1") == 202

        await caught(slow, timeout=30)
        assert await asyncio.to_thread(jobs.terminate) == 0
        assert "server stopped" in jobs.messages()
    assert [run.status for run in world.runs(pr)] == ["completed"]
    assert _deliveries(pg_url) == {"delivery-1": ("done", 1)}


async def test_postgresql_restarting_under_load_loses_nothing(world, app_private_key, pg_cluster):
    pulls = [world.pull() for _ in range(8)]
    cluster = pg_cluster
    url = cluster.url
    with processes(lambda: web(world, app_private_key, url), lambda: worker(world, app_private_key, url)) as (
            front, _):
        answers: dict[str, int] = {}

        async def send(i: int) -> None:
            while (status := await _deliver_to(world, front.url, pulls[i], f"delivery-{i}")) != 202:
                assert status == 503  # never lost silently: refused, so GitHub redelivers
                answers[f"delivery-{i}"] = status
                await asyncio.sleep(0.2)

        for i in range(3):  # the worker is busy with these while PostgreSQL goes away
            await send(i)
        await asyncio.to_thread(cluster.stop, "immediate")
        sending = asyncio.create_task(asyncio.wait_for(asyncio.gather(*(send(i) for i in range(3, 8))), 60))
        await asyncio.sleep(7)  # longer than the pool waits for a connection (5 s): 503s are seen
        await asyncio.to_thread(cluster.start)
        await sending
        for pr in pulls:
            assert (await world.completed_run(pr, timeout=60)).conclusion == "success"
    assert 503 in answers.values()  # the restart was seen by the intake
    assert set(_deliveries(url)) == {f"delivery-{i}" for i in range(8)}
    assert [len(world.runs(pr)) for pr in pulls] == [1] * 8


async def test_one_pull_request_never_runs_twice_at_once_and_stale_heads_are_dropped(world, app_private_key, pg_url):
    pr = world.pull()
    first_head = pr.head_sha
    slow = world.github.delay(COMPARE, 3)  # the first job is still running when the next heads arrive
    make = [lambda: web(world, app_private_key, pg_url)] + [lambda: worker(world, app_private_key, pg_url)] * 2
    with processes(*make) as (front, _, _):
        assert await _deliver_to(world, front.url, pr, "head-1") == 202

        await caught(slow, timeout=30)
        heads = []
        for n in (2, 3):
            world.repo.commit({"src/app.py": f"def add(a, b):\n    return {n} * (a + b)\n"}, branch=pr.head_ref)
            heads.append(pr.head_sha)
            payload = world.github.payload("pull_request", "synchronize", installation=world.installation, pull=pr)
            status, _ = await world.github.deliver(front.url + "/webhook", "pull_request", payload,
                                                   secret=world.app.webhook_secret, delivery_id=f"head-{n}")
            assert status == 202

        async def settled() -> bool:
            states = {d: s for d, (s, _) in _deliveries(pg_url).items()}
            return states == {"head-1": "done", "head-2": "superseded", "head-3": "done"}
        await wait_for(settled, timeout=60)
    runs = {head: [r.status for r in world.repo.check_runs.values() if r.head_sha == head]
            for head in (first_head, *heads)}
    assert runs == {first_head: ["completed"], heads[0]: [], heads[1]: ["completed"]}  # the stale head: no run
    with psycopg.connect(pg_url) as conn:
        (first_end,), (last_start,) = conn.execute(
            "SELECT finished_at FROM deliveries WHERE delivery_id = 'head-1' UNION ALL "
            "SELECT started_at FROM deliveries WHERE delivery_id = 'head-3'").fetchall()
    assert last_start >= first_end  # one job of the pull request at a time, though two workers were free


async def test_sigterm_exits_within_a_minute_while_postgresql_is_away(world, app_private_key, pg_cluster):
    """procrastinate ends a cancelled run with the store's error when PostgreSQL is down; the
    worker once took that for a crash and started again, never exiting."""
    cluster = pg_cluster
    with processes(lambda: worker(world, app_private_key, cluster.url)) as (jobs,):
        await asyncio.to_thread(cluster.stop, "immediate")
        await asyncio.sleep(2)  # the worker meets the outage
        began = asyncio.get_running_loop().time()
        assert await asyncio.to_thread(jobs.terminate, 70) == 0
        assert asyncio.get_running_loop().time() - began < 60


def test_the_database_password_never_reaches_the_logs(world, app_private_key, pg_url):
    """The local server trusts connections, so a password in the URL is accepted and unused: what
    matters here is that no log line carries it."""
    secret = "pw-0f3c9a71e2d84b56"
    url = pg_url.replace("postgresql://postgres@", f"postgresql://postgres:{secret}@")
    with processes(lambda: web(world, app_private_key, url)) as (front,):
        assert front.terminate() == 0
    started = [line for line in front.lines if '"server started"' in line]
    assert started and "postgres:***@" in started[0]
    assert not [line for line in front.lines if secret in line]


async def test_sigterm_keeps_the_heartbeat_while_its_jobs_finish(world, app_private_key, pg_url):
    """A stopping worker still runs its jobs, so it is alive: another worker's sweep must not take
    them for a dead worker's and run them again while they finish (procrastinate stops its
    heartbeat as the stop begins). The jobs outlast the time after which a silent worker is dead."""
    pulls = [world.pull() for _ in range(2)]
    slow = world.github.delay(COMPARE, 35, times=2)
    with processes(lambda: web(world, app_private_key, pg_url), lambda: worker(world, app_private_key, pg_url)) as (
            front, stopping):
        for i, pr in enumerate(pulls):
            assert await _deliver_to(world, front.url, pr, f"delivery-{i}") == 202

        await caught(slow, timeout=30)
        with processes(lambda: worker(world, app_private_key, pg_url)) as (other,):
            assert await asyncio.to_thread(stopping.terminate, 90) == 0
            await asyncio.sleep(12)  # one more sweep of the other worker after the jobs ended
            assert "retrying a job whose worker stopped answering" not in other.messages()
    assert _deliveries(pg_url) == {"delivery-0": ("done", 1), "delivery-1": ("done", 1)}  # each ran once
    assert [[run.status for run in world.runs(pr)] for pr in pulls] == [["completed"], ["completed"]]
    assert stopping.messages().count("job done") == 2 and "job done" not in other.messages()


async def test_a_worker_keeps_taking_jobs_after_its_heartbeat_met_an_outage(world, app_private_key, pg_cluster):
    """A heartbeat PostgreSQL could not take is tried again, never the end of the worker: after an
    outage longer than two heartbeats, the worker that lived through it runs the next delivery,
    and its job of the time is not taken for a dead worker's."""
    first, second = world.pull(), world.pull()
    url = pg_cluster.url
    slow = world.github.delay(COMPARE, 25)  # the job waits on GitHub all through the outage
    with processes(lambda: web(world, app_private_key, url), lambda: worker(world, app_private_key, url)) as (
            front, jobs):
        assert await _deliver_to(world, front.url, first, "before") == 202

        await caught(slow, timeout=30)
        await asyncio.to_thread(pg_cluster.stop, "immediate")
        await asyncio.sleep(12)  # a heartbeat or two fail
        await asyncio.to_thread(pg_cluster.start)
        assert (await world.completed_run(first, timeout=60)).conclusion == "success"
        while (status := await _deliver_to(world, front.url, second, "after")) != 202:
            assert status == 503
            await asyncio.sleep(0.2)
        assert (await world.completed_run(second, timeout=60)).conclusion == "success"

        async def recorded() -> bool:  # the check run completes just before the row says so
            return _deliveries(url) == {"before": ("done", 1), "after": ("done", 1)}
        await wait_for(recorded, timeout=30)  # before the processes stop: a killed worker records nothing
        assert "retrying a job whose worker stopped answering" not in jobs.messages()  # it was alive
    assert _deliveries(url) == {"before": ("done", 1), "after": ("done", 1)}
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
    posting = world.github.delay(REVIEWS, 6)  # the review's POST waits in GitHub while PostgreSQL stops
    try:
        with processes(lambda: web(world, app_private_key, url, **extra),
                       lambda: worker(world, app_private_key, url, **extra)) as (front, jobs):
            assert await _deliver_to(world, front.url, pr, "delivery-1") == 202

            await caught(posting, timeout=60)
            await asyncio.to_thread(pg_cluster.stop, "immediate")

            async def interrupted() -> bool:
                return "job interrupted: the store is unavailable; it runs again once the store is back" in \
                    jobs.messages()
            await wait_for(interrupted, timeout=30)
            assert [run.status for run in world.runs(pr)] == ["in_progress"]  # not concluded a failure
            await asyncio.to_thread(pg_cluster.start)
            run = await world.completed_run(pr, timeout=90)

            async def recorded() -> bool:
                return _deliveries(url) == {"delivery-1": ("done", 2)}
            await wait_for(recorded, timeout=30)
    finally:
        await chat.close()
    assert run.conclusion == "failure" and run.output["title"] == "1 blocking finding(s)"  # the review's own verdict
    assert len(world.runs(pr)) == 1 and len(chat.requests) == 1  # one run; the model asked once
    assert [len(r.comments) for r in app_reviews(world, pr)] == [1]  # the review posted once, its finding inline
    assert len(summary_comments(world, pr)) == 1
