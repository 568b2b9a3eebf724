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


async def _killed_inside_the_job(world: World, pr, private_key: str) -> None:
    """`reviewer serve` takes delivery-1 and is SIGKILLed while its job hangs inside the pipeline,
    after its check run started (the compare call answers only after a minute)."""
    hang = world.github.delay(COMPARE, 60)
    proc = _serve(world, private_key)
    try:
        assert (await world.opened(pr, delivery_id="delivery-1"))[0] == 202
        for _ in range(2000):  # bounded: until the job is inside the hanging call
            if hang.times == 0:
                break
            await asyncio.sleep(0.01)
        # committed before the job began: killed now, the rerun knows it is not the first attempt
        assert _states(world.tmp / "reviewer.db") == {"delivery-1": "running"}
        assert [run.status for run in world.runs(pr)] == ["in_progress"]
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        proc.stderr.close()


async def _restarted_run(world: World, pr, private_key: str):
    """`reviewer serve` started again on the same database file; the run it completes."""
    proc = _serve(world, private_key)
    try:
        return await world.completed_run(pr, timeout=30)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
        proc.stderr.close()


def _world(tmp_path, github, github_app) -> World:
    world = World(github, github_app, "", tmp_path)
    world.repo = github.add_repo("octo-org/example")
    world.installation = github.install(github_app, world.repo)
    return world


async def test_a_server_killed_after_the_202_completes_the_run_after_a_restart(
        tmp_path, github, github_app, app_private_key):
    world = _world(tmp_path, github, github_app)
    pr = world.pull()
    await _killed_inside_the_job(world, pr, app_private_key)
    run = await _restarted_run(world, pr, app_private_key)
    assert run.conclusion == "success"
    assert len(world.runs(pr)) == 1  # the interrupted attempt's run was taken up, not left in progress


async def test_the_rerun_takes_up_its_own_run_not_another_deliverys_on_the_same_commit(
        tmp_path, github, github_app, app_private_key):
    """Another delivery's Reviewer run in progress on the same head (another pull request of that
    commit, say) is not the interrupted attempt's: the rerun finds its own by external id."""
    world = _world(tmp_path, github, github_app)
    pr = world.pull()
    await _killed_inside_the_job(world, pr, app_private_key)
    ours = world.runs(pr)[0]
    foreign = CheckRun(id=github.next_id(), app=github_app, head_sha=pr.head_sha, name=ours.name,
                       status="in_progress", conclusion=None, started_at=ours.started_at, completed_at=None,
                       external_id="another-delivery", details_url=None,
                       output={"title": None, "summary": None, "text": None})
    world.repo.check_runs[foreign.id] = foreign  # newer: GitHub's default listing shows it alone
    run = await _restarted_run(world, pr, app_private_key)
    assert run.id == ours.id and run.conclusion == "success"
    assert foreign.status == "in_progress" and len(world.runs(pr)) == 2  # left alone, and no third run
