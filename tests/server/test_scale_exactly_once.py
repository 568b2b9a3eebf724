"""The scaled-out shape on real PostgreSQL: `reviewer serve --no-workers` and `reviewer worker`
processes, the real pipeline, the GitHub double over HTTP (tests/support/scale_support.py). Each
guarantee of the design's "Scale-out" has its test in one of the tests/server/test_scale_*.py files,
which run side by side: here, every delivery done exactly once across processes, one job of a pull
request at a time, and the split roles' settings."""

from __future__ import annotations

import subprocess
import sys

import psycopg
import pytest

from tests.support.app_support import World, installed
from tests.support.process_support import ROOT, caught, env
from tests.support.scale_support import COMPARE, deliver_to, deliveries, processes, web, worker
from tests.support.server_support import wait_for

pytestmark = pytest.mark.slow  # `reviewer serve` processes of their own: `make test-fast` leaves them out


@pytest.fixture
def world(tmp_path, github, github_app) -> World:
    return installed(tmp_path, github, github_app)


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
            assert await deliver_to(world, first.url, pr, f"delivery-{i}") == 202
            assert await deliver_to(world, second.url, pr, f"delivery-{i}") == 202  # GitHub redelivering
        for pr in pulls:
            run = await world.completed_run(pr, timeout=60)
            assert run.conclusion == "success"

        async def all_done() -> bool:
            return all(state == "done" for state, _ in deliveries(pg_url).values())
        await wait_for(all_done, timeout=30)
    assert deliveries(pg_url) == {f"delivery-{i}": ("done", 1) for i in range(6)}  # each started once
    assert [len(world.runs(pr)) for pr in pulls] == [1] * 6


async def test_one_pull_request_never_runs_twice_at_once_and_stale_heads_are_dropped(world, app_private_key, pg_url):
    pr = world.pull()
    first_head = pr.head_sha
    held = world.github.delay(COMPARE, 60)  # the first job is still running when the next heads arrive
    make = [lambda: web(world, app_private_key, pg_url)] + [lambda: worker(world, app_private_key, pg_url)] * 2
    with processes(*make) as (front, _, _):
        assert await deliver_to(world, front.url, pr, "head-1") == 202

        await caught(held, timeout=30)
        heads = []
        for n in (2, 3):
            world.repo.commit({"src/app.py": f"def add(a, b):\n    return {n} * (a + b)\n"}, branch=pr.head_ref)
            heads.append(pr.head_sha)
            payload = world.github.payload("pull_request", "synchronize", installation=world.installation, pull=pr)
            status, _ = await world.github.deliver(front.url + "/webhook", "pull_request", payload,
                                                   secret=world.app.webhook_secret, delivery_id=f"head-{n}")
            assert status == 202

        async def queued() -> bool:  # both new heads wait behind the running job, in its pull request's turn
            states = {d: s for d, (s, _) in deliveries(pg_url).items()}
            return states == {"head-1": "running", "head-2": "queued", "head-3": "queued"}
        await wait_for(queued, timeout=30)
        held.release()

        async def settled() -> bool:
            states = {d: s for d, (s, _) in deliveries(pg_url).items()}
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
