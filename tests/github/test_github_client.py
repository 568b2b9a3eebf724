"""The app's GitHub client (bot/github) against the GitHub double, over real HTTP on 127.0.0.1.

Waits are observed through the injected `sleep` (the client's clock seam), never waited for.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from types import SimpleNamespace

import aiohttp
import pytest

from bot.github import (
    Annotation,
    CheckOutput,
    FileTooLarge,
    GitHubApp,
    GitHubError,
    GitHubUnavailable,
    RetryPolicy,
    ReviewComment,
    complete_check_run,
    create_review,
    dismiss_review,
    list_reviews,
    merge_base_and_files,
    pull_request,
    read_file,
    start_check_run,
    tree,
    upsert_comment,
)

TOKEN = "POST /app/installations/{installation_id}/access_tokens"
PULL = "GET /repos/{owner}/{repo}/pulls/{pull_number}"
FILES = "GET /repos/{owner}/{repo}/pulls/{pull_number}/files"
UPDATE_RUN = "PATCH /repos/{owner}/{repo}/check-runs/{check_run_id}"
COMMENTS = "POST /repos/{owner}/{repo}/issues/{issue_number}/comments"
OWNER, NAME = "octo-org", "hello"


class Sleeps(list):
    """The client's sleep: records each wait and returns at once."""

    async def __call__(self, seconds: float) -> None:
        self.append(seconds)


@pytest.fixture
def world(github, github_app):
    repo = github.add_repo(f"{OWNER}/{NAME}")
    base = repo.commit({"README.md": "hello\n", "src/app.py": "a = 1\nb = 2\nc = 3\n"})
    repo.commit({"src/app.py": "a = 1\nb = 20\nc = 3\n", "docs/guide.md": "# Guide\n"}, branch="feature", parent=base)
    repo.commit({"README.md": "hello, world\n"})  # main moves on after the branch point
    pr = repo.open_pull(head="feature", title="Tune b")
    return SimpleNamespace(repo=repo, base=base, pr=pr, inst=github.install(github_app, repo))


@pytest.fixture
async def client(github, github_app, app_private_key, world):
    sleeps, seen = Sleeps(), []
    now = float(int(time.time()))
    async with aiohttp.ClientSession() as session:
        app = GitHubApp(session, app_id=github_app.id, private_key=app_private_key, base_url=github.url,
                        policy=RetryPolicy(timeout=5.0), sleep=sleeps, clock=lambda: now, rng=random.Random(7),
                        on_call=lambda *call: seen.append(call))
        yield SimpleNamespace(app=app, gh=app.installation(world.inst.id), sleeps=sleeps, seen=seen, now=now)


async def get_pull(client, world) -> dict:
    return await pull_request(client.gh, OWNER, NAME, world.pr.number)


# --- authentication ----------------------------------------------------------------------------

async def test_app_jwt_is_accepted_and_names_the_app(github, client):
    info = await client.app.app_info()
    assert info["slug"] == "reviewer"
    assert github.count("GET /app", status=200) == 1


async def test_one_installation_token_serves_many_calls(github, client, world):
    await asyncio.gather(*(get_pull(client, world) for _ in range(5)))
    await get_pull(client, world)
    assert github.count(TOKEN) == 1
    assert github.count(PULL, status=200) == 6


async def test_a_refused_token_is_replaced_once(github, client, world):
    await get_pull(client, world)
    github.expire_tokens()  # the cached token is now refused with 401
    pr = await get_pull(client, world)
    assert pr["number"] == world.pr.number
    assert github.count(TOKEN) == 2
    assert github.count(PULL, status=401) == 1


async def test_a_token_refused_twice_fails_the_call(github, client, world):
    github.unauthorized(PULL, times=2)
    with pytest.raises(GitHubError) as caught:
        await get_pull(client, world)
    assert caught.value.status == 401
    assert github.count(TOKEN) == 2  # one refresh, not a loop


async def test_tokens_and_key_never_reach_the_logs(github, client, world, app_private_key, caplog):
    caplog.set_level(logging.DEBUG)
    github.fail(PULL, times=1)
    await get_pull(client, world)
    github.expire_tokens()
    await get_pull(client, world)
    assert len(github.tokens) == 2 and "retrying" in caplog.text
    for token in github.tokens:
        assert token not in caplog.text
    assert app_private_key.splitlines()[1] not in caplog.text


# --- retries and rate limits -------------------------------------------------------------------

async def test_5xx_answers_are_retried_with_growing_jittered_backoff(github, client, world):
    github.fail(PULL, status=502, times=2)
    assert (await get_pull(client, world))["number"] == world.pr.number
    assert github.count(PULL, status=502) == 2
    first, second = client.sleeps
    assert 0.5 <= first <= 1.0 and 1.0 <= second <= 2.0  # base 1 s, doubling, equal jitter
    assert ("GET", "/repos/{owner}/{repo}/pulls/{pull_number}", 502) in client.seen


async def test_secondary_limit_honours_retry_after(github, client, world):
    github.secondary_rate_limit(PULL, retry_after=17)
    await get_pull(client, world)
    assert client.sleeps == [17.0]


async def test_secondary_limit_without_retry_after_waits_a_minute(github, client, world):
    github.secondary_rate_limit(PULL, retry_after=None)
    await get_pull(client, world)
    assert client.sleeps == [60.0]


@pytest.mark.parametrize("status", [403, 429])
async def test_primary_limit_waits_until_reset(github, client, world, status):
    github.primary_rate_limit(PULL, reset_at=int(client.now) + 42, status=status)
    await get_pull(client, world)
    assert client.sleeps == [42.0]


async def test_retries_stop_after_the_attempt_bound(github, client, world):
    github.fail(PULL, status=500, times=10)
    with pytest.raises(GitHubUnavailable) as caught:
        await get_pull(client, world)
    assert caught.value.status == 500
    assert github.count(PULL) == 5 and len(client.sleeps) == 4


async def test_a_wait_beyond_the_bound_fails_at_once(github, client, world):
    reset = int(client.now) + 3600
    github.primary_rate_limit(PULL, reset_at=reset)
    with pytest.raises(GitHubUnavailable) as caught:
        await get_pull(client, world)
    assert caught.value.retry_at == reset  # so a job can be rescheduled, not slept on
    assert client.sleeps == [] and github.count(PULL) == 1


async def test_a_timeout_is_retried(github, github_app, app_private_key, world):
    sleeps = Sleeps()
    async with aiohttp.ClientSession() as session:
        app = GitHubApp(session, app_id=github_app.id, private_key=app_private_key, base_url=github.url,
                        policy=RetryPolicy(timeout=1.0), sleep=sleeps)
        github.delay(PULL, 5.0)
        pr = await pull_request(app.installation(world.inst.id), OWNER, NAME, world.pr.number)
    assert pr["number"] == world.pr.number
    assert app.calls[("GET", "/repos/{owner}/{repo}/pulls/{pull_number}", 0)] == 1
    # One wait per request that got no answer: the held pull request's, and on a loaded machine perhaps
    # the token request's too (its RSA signature and round trip have the same short timeout).
    timeouts = sum(n for (_, _, status), n in app.calls.items() if status == 0)
    assert len(sleeps) == timeouts


async def test_a_refusal_is_not_retried(github, client, world):
    world.repo.dismissals_restricted = True
    review = await create_review(client.gh, OWNER, NAME, world.pr.number, commit_id=world.pr.head_sha,
                                 event="REQUEST_CHANGES", body="Please fix b.")
    with pytest.raises(GitHubError) as caught:
        await dismiss_review(client.gh, OWNER, NAME, world.pr.number, review["id"], "Fixed.")
    assert caught.value.status == 403 and client.sleeps == []


async def test_writes_of_one_installation_go_one_at_a_time(github, client, world):
    github.delay(COMMENTS, 0.05, times=4)
    await asyncio.gather(*(client.gh.post("/repos/{owner}/{repo}/issues/{issue_number}/comments",
                                          {"owner": OWNER, "repo": NAME, "issue_number": world.pr.number},
                                          data={"body": f"note {i}"}) for i in range(4)))
    assert len(world.pr.comments) == 4
    assert github.max_concurrent_writes == 1


# --- reading the repository --------------------------------------------------------------------

async def test_merge_base_and_files_follow_the_branch_point(client, world):
    found = await merge_base_and_files(client.gh, OWNER, NAME, world.pr.base_sha, world.pr.head_sha,
                                       pull_number=world.pr.number)
    assert found.merge_base == world.base  # not the tip of main, which moved on
    assert [(f.path, f.status) for f in found.files] == [("docs/guide.md", "added"), ("src/app.py", "modified")]
    assert found.complete and "+b = 20" in found.files[1].patch


async def test_more_than_300_files_come_from_the_paginated_pull_listing(github, client, world):
    repo = world.repo
    many = {f"gen/file{i:04}.txt": f"{i}\n" for i in range(3050)}
    repo.commit(many, branch="big", parent=world.base)
    pr = repo.open_pull(head="big")
    found = await merge_base_and_files(client.gh, OWNER, NAME, pr.base_sha, pr.head_sha, pull_number=pr.number)
    assert len(found.files) == 3000 and not found.complete  # GitHub lists at most 3000
    assert [f.path for f in found.files] == sorted(many)[:3000]
    assert github.count(FILES) == 30  # 100 per page, following Link


async def test_between_300_and_3000_files_the_listing_is_complete(github, client, world):
    world.repo.commit({f"gen/{i:03}.txt": "x\n" for i in range(420)}, branch="mid", parent=world.base)
    pr = world.repo.open_pull(head="mid")
    found = await merge_base_and_files(client.gh, OWNER, NAME, pr.base_sha, pr.head_sha, pull_number=pr.number)
    assert len(found.files) == 420 and found.complete
    assert github.count(FILES) == 5


async def test_tree_lists_files_and_says_when_truncated(github, client, world):
    full = await tree(client.gh, OWNER, NAME, world.pr.head_sha)
    assert full.paths == {"README.md", "src/app.py", "docs/guide.md"} and not full.truncated
    github.tree_entry_limit = 2
    cut = await tree(client.gh, OWNER, NAME, world.pr.head_sha)
    assert cut.truncated and len(cut.paths) < 3


async def test_read_file_at_a_ref(client, world):
    repo = world.repo
    sha = repo.commit({"dir/naïve name #1.md": "ünïcode\n", "big.txt": "x" * (1024 * 1024 + 1)}, branch="files")
    assert await read_file(client.gh, OWNER, NAME, "dir/naïve name #1.md", sha) == "ünïcode\n"
    assert await read_file(client.gh, OWNER, NAME, "src/app.py", world.base) == "a = 1\nb = 2\nc = 3\n"
    assert await read_file(client.gh, OWNER, NAME, "docs/guide.md", world.base) is None  # not there yet
    assert await read_file(client.gh, OWNER, NAME, "dir", sha) is None  # a directory is no file
    with pytest.raises(FileTooLarge):
        await read_file(client.gh, OWNER, NAME, "big.txt", sha)


# --- check runs ----------------------------------------------------------------------------------

async def test_more_than_50_annotations_are_sent_in_batches(github, client, world):
    annotations = tuple(Annotation("src/app.py", i, i, "warning", f"finding {i}") for i in range(1, 121))
    run_id = await start_check_run(client.gh, OWNER, NAME, world.pr.head_sha)
    await complete_check_run(client.gh, OWNER, NAME, run_id, "failure", CheckOutput("3 problems", "Details", annotations=annotations))
    run = world.repo.check_runs[run_id]
    assert run.name == "Reviewer" and run.status == "completed" and run.conclusion == "failure"
    assert [a["message"] for a in run.annotations] == [f"finding {i}" for i in range(1, 121)]
    assert github.count(UPDATE_RUN) == 3


CREATE_RUN = "POST /repos/{owner}/{repo}/check-runs"
LIST_RUNS = "GET /repos/{owner}/{repo}/commits/{ref}/check-runs"


async def test_a_check_run_created_but_unanswered_is_found_not_created_twice(github, client, world):
    github.fail(CREATE_RUN, status=502, applied=True)  # GitHub made the run; its answer was lost
    run_id = await start_check_run(client.gh, OWNER, NAME, world.pr.head_sha, external_id="delivery-1")
    assert list(world.repo.check_runs) == [run_id]
    assert world.repo.check_runs[run_id].external_id == "delivery-1"
    assert (github.count(CREATE_RUN), github.count(LIST_RUNS)) == (1, 1) and client.sleeps == []


async def test_a_check_run_refused_with_a_5xx_is_looked_for_then_created(github, client, world):
    github.fail(CREATE_RUN, status=502)  # nothing made
    run_id = await start_check_run(client.gh, OWNER, NAME, world.pr.head_sha)
    assert list(world.repo.check_runs) == [run_id] and world.repo.check_runs[run_id].status == "in_progress"
    assert (github.count(CREATE_RUN, status=502), github.count(CREATE_RUN, status=201), github.count(LIST_RUNS)) == (1, 1, 1)


async def test_a_rate_limited_check_run_create_is_waited_out_and_sent_again(github, client, world):
    github.secondary_rate_limit(CREATE_RUN, retry_after=3)  # refused before anything was done
    run_id = await start_check_run(client.gh, OWNER, NAME, world.pr.head_sha)
    assert list(world.repo.check_runs) == [run_id]
    assert github.count(LIST_RUNS) == 0 and client.sleeps == [3.0]


async def test_output_over_the_limit_is_cut_with_a_note(client, world):
    summary = "\n".join(f"line {i}" for i in range(12_000))  # about 100,000 characters
    run_id = await start_check_run(client.gh, OWNER, NAME, world.pr.head_sha)
    await complete_check_run(client.gh, OWNER, NAME, run_id, "success", CheckOutput("Long", summary, text=summary))
    output = world.repo.check_runs[run_id].output
    for key in ("summary", "text"):
        assert len(output[key]) <= 65_535 and output[key].startswith("line 0\n")
        assert f"of {len(summary):,} characters not shown" in output[key]


# --- reviews and comments ------------------------------------------------------------------------

async def test_review_with_inline_comment_then_dismissed(client, world):
    review = await create_review(client.gh, OWNER, NAME, world.pr.number, commit_id=world.pr.head_sha,
                                 event="REQUEST_CHANGES", body="One problem.",
                                 comments=[ReviewComment("src/app.py", 2, "b changed meaning")])
    listed = await list_reviews(client.gh, OWNER, NAME, world.pr.number)
    assert [(r["id"], r["state"], r["user"]["login"]) for r in listed] == [(review["id"], "CHANGES_REQUESTED", "reviewer[bot]")]
    assert [(c.path, c.line) for c in world.pr.review_comments] == [("src/app.py", 2)]
    await dismiss_review(client.gh, OWNER, NAME, world.pr.number, review["id"], "Fixed in a later commit.")
    assert world.pr.reviews[0].state == "DISMISSED"


async def test_comment_outside_the_diff_is_refused(client, world):
    with pytest.raises(GitHubError) as caught:
        await create_review(client.gh, OWNER, NAME, world.pr.number, commit_id=world.pr.head_sha, event="COMMENT",
                            comments=[ReviewComment("src/app.py", 40, "nowhere")])
    assert caught.value.status == 422 and "part of the diff" in caught.value.message


async def test_the_app_cannot_approve_its_own_pull_request(client, world, github_app):
    world.repo.commit({"x.txt": "x\n"}, branch="bot-change", parent=world.base)
    own = world.repo.open_pull(head="bot-change", user=github_app.bot)
    with pytest.raises(GitHubError) as caught:
        await create_review(client.gh, OWNER, NAME, own.number, commit_id=own.head_sha, event="APPROVE")
    assert caught.value.status == 422 and "own pull request" in caught.value.message


async def test_upsert_comment_creates_then_updates_only_its_own(github, client, world, github_app):
    marker = "<!-- reviewer:summary -->"
    quoted = world.pr.comment(f"a person quoting {marker}")
    bot = github_app.bot.login
    first = await upsert_comment(client.gh, OWNER, NAME, world.pr.number, marker=marker, body="Round 1", author=bot)
    second = await upsert_comment(client.gh, OWNER, NAME, world.pr.number, marker=marker, body="Round 2", author=bot)
    writes = github.count(COMMENTS) + github.count("PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}")
    await upsert_comment(client.gh, OWNER, NAME, world.pr.number, marker=marker, body="Round 2", author=bot)
    assert first["id"] == second["id"] and second["body"] == f"{marker}\nRound 2"
    assert quoted.body == f"a person quoting {marker}" and len(world.pr.comments) == 2
    assert github.count(COMMENTS) + github.count("PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}") == writes == 2
