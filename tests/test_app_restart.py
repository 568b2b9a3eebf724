"""`reviewer serve` killed after its 202 and started again finishes the work, on the same run."""

from __future__ import annotations

import asyncio
import signal

from tests.app_support import World
from tests.github_double.model import CheckRun
from tests.test_server_process import _env, _start, _states

COMPARE = "GET /repos/{owner}/{repo}/compare/{basehead}"


def _serve(world: World, private_key: str):
    env = _env(GITHUB_WEBHOOK_SECRET=world.app.webhook_secret, GITHUB_APP_ID=str(world.app.id),
               GITHUB_PRIVATE_KEY=private_key, GITHUB_API_URL=world.github.url, PORT="0",
               REVIEWER_DATABASE_URL=f"sqlite:///{world.tmp / 'reviewer.db'}")
    proc, port, _ = _start(["-m", "bot", "serve"], env, world.tmp)
    world.url = f"http://127.0.0.1:{port}"
    return proc


async def test_a_server_killed_after_the_202_completes_the_run_after_a_restart(
        tmp_path, github, github_app, app_private_key):
    world = World(github, github_app, "", tmp_path)
    world.repo = github.add_repo("octo-org/example")
    world.installation = github.install(github_app, world.repo)
    pr = world.pull()
    hang = github.delay(COMPARE, 60)  # the first attempt hangs inside the job, after its check run started

    proc = _serve(world, app_private_key)
    try:
        status, _ = await world.opened(pr, delivery_id="delivery-1")
        assert status == 202
        db = world.tmp / "reviewer.db"
        for _ in range(2000):  # bounded: until the job is inside the hanging call
            if hang.times == 0:
                break
            await asyncio.sleep(0.01)
        # committed before the job began: killed now, the rerun knows it is not the first attempt
        assert _states(db) == {"delivery-1": "running"}
        assert [run.status for run in world.runs(pr)] == ["in_progress"]
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        proc.stderr.close()

    proc = _serve(world, app_private_key)  # the same database file
    try:
        run = await world.completed_run(pr, timeout=30)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
        proc.stderr.close()
    assert run.conclusion == "success"
    assert len(world.runs(pr)) == 1  # the interrupted attempt's run was taken up, not left in progress


async def test_the_rerun_takes_up_its_own_run_not_another_deliverys_on_the_same_commit(
        tmp_path, github, github_app, app_private_key):
    """Another delivery's Reviewer run in progress on the same head (another pull request of that
    commit, say) is not the interrupted attempt's: the rerun finds its own by external id."""
    world = World(github, github_app, "", tmp_path)
    world.repo = github.add_repo("octo-org/example")
    world.installation = github.install(github_app, world.repo)
    pr = world.pull()
    hang = github.delay(COMPARE, 60)

    proc = _serve(world, app_private_key)
    try:
        assert (await world.opened(pr, delivery_id="delivery-1"))[0] == 202
        for _ in range(2000):
            if hang.times == 0:
                break
            await asyncio.sleep(0.01)
        assert [run.status for run in world.runs(pr)] == ["in_progress"]
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        proc.stderr.close()
    ours = world.runs(pr)[0]
    foreign = CheckRun(id=github.next_id(), app=github_app, head_sha=pr.head_sha, name=ours.name,
                       status="in_progress", conclusion=None, started_at=ours.started_at, completed_at=None,
                       external_id="another-delivery", details_url=None,
                       output={"title": None, "summary": None, "text": None})
    world.repo.check_runs[foreign.id] = foreign  # newer: GitHub's default listing shows it alone

    proc = _serve(world, app_private_key)
    try:
        run = await world.completed_run(pr, timeout=30)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
        proc.stderr.close()
    assert run.id == ours.id and run.conclusion == "success"
    assert foreign.status == "in_progress" and len(world.runs(pr)) == 2  # left alone, and no third run
