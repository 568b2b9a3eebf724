"""The server on PostgreSQL, in this process: the dispatcher and procrastinate's worker together
(`reviewer serve`), per-pull-request serialisation, stale heads, and 503 while PostgreSQL is away."""

from __future__ import annotations

import asyncio

from tests.support.server_support import Recorder, pr_payload, running_server, wait_for


async def test_deliveries_are_done_on_postgresql(tmp_path, pg_url):
    recorder = Recorder()
    async with running_server(tmp_path, recorder, REVIEWER_DATABASE_URL=pg_url) as server:
        for i in range(3):
            assert (await server.post("pull_request", pr_payload(i, str(i) * 40), f"d{i}"))[0] == 202
        assert (await server.post("pull_request", pr_payload(0, "0" * 40), "d0"))[0] == 202  # a duplicate
        assert (await server.post("star", {"action": "created"}, "ignored"))[0] == 202
        for i in range(3):
            await server.wait_state(f"d{i}", "done")
        await server.wait_state("ignored", "ignored")
    assert sorted(recorder.ids()) == ["d0", "d1", "d2"]


async def test_one_pull_request_runs_one_job_at_a_time_and_stale_heads_are_dropped(tmp_path, pg_url):
    recorder = Recorder()
    recorder.hold["first"] = asyncio.Event()
    async with running_server(tmp_path, recorder, REVIEWER_DATABASE_URL=pg_url) as server:
        assert (await server.post("pull_request", pr_payload(7, "a" * 40), "first"))[0] == 202
        await server.wait_state("first", "running")
        assert (await server.post("pull_request", pr_payload(7, "b" * 40), "second"))[0] == 202
        assert (await server.post("pull_request", pr_payload(7, "c" * 40), "third"))[0] == 202
        assert (await server.post("pull_request", pr_payload(8, "d" * 40), "other-pr"))[0] == 202
        await server.wait_state("other-pr", "done")  # another pull request is not held back
        await server.wait_state("third", "queued")
        assert recorder.ids() == ["first", "other-pr"]  # the held one blocks its pull request only
        recorder.hold["first"].set()
        await server.wait_state("third", "done")
        record = await server.wait_state("second", "superseded")
        assert record["error"] == f"superseded by delivery third (head {'c' * 40})"
    assert recorder.ids() == ["first", "other-pr", "third"]


async def test_503_while_postgresql_is_away_then_202_on_its_own(tmp_path, pg_cluster):
    cluster = pg_cluster
    recorder = Recorder()
    async with running_server(tmp_path, recorder, REVIEWER_DATABASE_URL=cluster.url) as server:
        assert (await server.post("pull_request", pr_payload(1, "a" * 40), "before"))[0] == 202
        await server.wait_state("before", "done")
        cluster.stop("immediate")
        status, text = await server.post("pull_request", pr_payload(2, "b" * 40), "during")
        assert status == 503 and "cannot be stored right now" in text
        cluster.start()

        async def accepted() -> bool:
            return (await server.post("pull_request", pr_payload(3, "c" * 40), "after"))[0] == 202
        await wait_for(accepted, timeout=30)
        await server.wait_state("after", "done")
    assert "during" not in recorder.ids() and {"before", "after"} <= set(recorder.ids())


async def test_the_first_delivery_after_a_quick_restart_is_stored_not_refused(tmp_path, pg_cluster):
    """The pool's connections were in use moments before PostgreSQL restarted: the next delivery
    must not fail on one of them (GitHub does not redeliver a 503 on its own)."""
    cluster = pg_cluster
    recorder = Recorder()
    async with running_server(tmp_path, recorder, REVIEWER_DATABASE_URL=cluster.url) as server:
        for n in range(3):
            assert (await server.post("pull_request", pr_payload(n + 1, f"{n}" * 40), f"before-{n}"))[0] == 202
        await server.wait_state("before-2", "done")
        cluster.stop("fast")
        cluster.start()
        status, text = await server.post("pull_request", pr_payload(9, "d" * 40), "after")
        assert status == 202, text
        await server.wait_state("after", "done")
    assert "after" in recorder.ids()
