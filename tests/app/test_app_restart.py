"""`reviewer serve` killed after its 202 and started again finishes the work, on the same run."""

from __future__ import annotations

import asyncio
import signal

import pytest

from tests.support.app_support import World, installed
from tests.support.chat_double import ChatDouble
from tests.support.github_double.model import CheckRun
from tests.support.process_support import a_bug_found, app_env, caught, start, states, stop
from tests.support.review_support import (
    API_KEY,
    app_reviews,
    summary_comments,
)

pytestmark = pytest.mark.slow  # a `reviewer serve` process of its own: `make test-fast` leaves it out


COMPARE = "GET /repos/{owner}/{repo}/compare/{basehead}"
COMMENT = "POST /repos/{owner}/{repo}/issues/{issue_number}/comments"
REVIEWS = "POST /repos/{owner}/{repo}/pulls/{pull_number}/reviews"


def _serve(world: World, private_key: str, **extra: str):
    env = app_env(world, private_key, f"sqlite:///{world.tmp / 'reviewer.db'}", **extra)
    proc, port, _ = start(["-m", "bot", "serve"], env, world.tmp)
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
        assert states(world.tmp / "reviewer.db") == {"delivery-1": "running"}
        assert [run.status for run in world.runs(pr)] == ["in_progress"]
    finally:
        stop(proc, signal.SIGKILL)


async def _restarted_run(world: World, pr, private_key: str, **extra: str):
    """`reviewer serve` started again on the same database file; the run it completes."""
    proc = _serve(world, private_key, **extra)
    try:
        return await world.completed_run(pr, timeout=30)
    finally:
        stop(proc)


async def test_a_server_killed_after_the_202_completes_the_run_after_a_restart(
        tmp_path, github, github_app, app_private_key):
    world = installed(tmp_path, github, github_app)
    pr = world.pull()
    await _killed_inside_the_job(world, pr, app_private_key)
    run = await _restarted_run(world, pr, app_private_key)
    assert run.conclusion == "success"
    assert len(world.runs(pr)) == 1  # the interrupted attempt's run was taken up, not left in progress


async def test_the_rerun_takes_up_its_own_run_not_another_deliverys_on_the_same_commit(
        tmp_path, github, github_app, app_private_key):
    """Another delivery's Reviewer run in progress on the same head (another pull request of that
    commit, say) is not the interrupted attempt's: the rerun finds its own by external id."""
    world = installed(tmp_path, github, github_app)
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


async def test_a_server_killed_after_posting_the_review_posts_nothing_twice_after_a_restart(
        tmp_path, github, github_app, app_private_key):
    """Killed between the review it posted and the summary comment: the rerun carries out the
    decision the first attempt recorded (the model is not asked again) and takes up the review
    already on GitHub instead of posting it a second time."""
    chat = await ChatDouble(api_key=API_KEY).start()
    world = installed(tmp_path, github, github_app)
    pr, extra = a_bug_found(world, chat)
    summary = github.delay(COMMENT, 60)  # the review is on GitHub; the summary comment waits
    try:
        proc = _serve(world, app_private_key, **extra)
        try:
            assert (await world.opened(pr, delivery_id="delivery-1"))[0] == 202

            await caught(summary, timeout=30)
            assert len(app_reviews(world, pr)) == 1
        finally:
            stop(proc, signal.SIGKILL)
        run = await _restarted_run(world, pr, app_private_key, **extra)
    finally:
        await chat.close()
    assert run.conclusion == "failure" and run.output["title"] == "1 blocking finding(s)" and len(world.runs(pr)) == 1
    assert [len(review.comments) for review in app_reviews(world, pr)] == [1]  # posted once
    assert len(summary_comments(world, pr)) == 1 and len(chat.requests) == 1  # the model asked once


async def test_a_review_whose_answer_github_lost_is_posted_once(tmp_path, github, github_app, app_private_key):
    """GitHub made the review and answered 502: it is looked for (its marker) before it is sent
    again, and taken up."""
    chat = await ChatDouble(api_key=API_KEY).start()
    world = installed(tmp_path, github, github_app)
    pr, extra = a_bug_found(world, chat)
    github.fail(REVIEWS, status=502, applied=True)
    try:
        proc = _serve(world, app_private_key, **extra)
        try:
            assert (await world.opened(pr, delivery_id="delivery-1"))[0] == 202
            run = await world.completed_run(pr, timeout=30)
        finally:
            stop(proc)
    finally:
        await chat.close()
    assert run.output["title"] == "1 blocking finding(s)"
    assert [len(review.comments) for review in app_reviews(world, pr)] == [1]
