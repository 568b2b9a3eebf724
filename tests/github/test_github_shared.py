"""What GitHub clients of several processes share through PostgreSQL: one installation token at a
time, writes to an installation one at a time, and a retry-after honoured by all. Each "process"
is its own GitHubApp on its own PostgresStorage (its own pool) over the same database."""

from __future__ import annotations

import asyncio
import contextlib
from types import SimpleNamespace

import aiohttp
import psycopg
import pytest

from bot.github import GitHubApp, pull_request
from bot.store import storage_for

TOKEN = "POST /app/installations/{installation_id}/access_tokens"
PULL = "GET /repos/{owner}/{repo}/pulls/{pull_number}"
COMMENTS = "POST /repos/{owner}/{repo}/issues/{issue_number}/comments"
OWNER, NAME = "octo-org", "shared"


class Sleeps(list):
    async def __call__(self, seconds: float) -> None:
        self.append(seconds)


@pytest.fixture
def world(github, github_app):
    repo = github.add_repo(f"{OWNER}/{NAME}")
    base = repo.commit({"README.md": "hello\n"})
    repo.commit({"README.md": "hello, world\n"}, branch="feature", parent=base)
    pr = repo.open_pull(head="feature", title="Greet")
    return SimpleNamespace(repo=repo, pr=pr, inst=github.install(github_app, repo))


@contextlib.asynccontextmanager
async def processes(n, pg_url, github, github_app, app_private_key, sleep=None):
    storages = [storage_for(pg_url) for _ in range(n)]
    for storage in storages:
        await storage.open()
    try:
        async with aiohttp.ClientSession() as session:
            yield [GitHubApp(session, app_id=github_app.id, private_key=app_private_key, base_url=github.url,
                             coordination=storage.coordination, **({"sleep": sleep} if sleep is not None else {}))
                   for storage in storages]
    finally:
        for storage in storages:
            await storage.close()


async def test_processes_share_one_installation_token_and_never_store_it_readable(
        github, github_app, app_private_key, world, pg_url):
    async with processes(3, pg_url, github, github_app, app_private_key) as apps:
        await asyncio.gather(*(pull_request(app.installation(world.inst.id), OWNER, NAME, world.pr.number)
                               for app in apps for _ in range(3)))
        token = await apps[0].installation_token(world.inst.id)
    assert github.count(TOKEN) == 1 and github.count(PULL, status=200) == 9
    with psycopg.connect(pg_url) as conn:
        [(sealed,)] = conn.execute("SELECT sealed FROM installation_tokens").fetchall()
    assert token.encode() not in bytes(sealed)


async def test_a_token_refused_in_one_process_is_replaced_for_all(github, github_app, app_private_key, world, pg_url):
    async with processes(2, pg_url, github, github_app, app_private_key) as (first, second):
        await pull_request(first.installation(world.inst.id), OWNER, NAME, world.pr.number)
        github.expire_tokens()
        await pull_request(first.installation(world.inst.id), OWNER, NAME, world.pr.number)  # 401, then a new token
        await pull_request(second.installation(world.inst.id), OWNER, NAME, world.pr.number)
    assert github.count(TOKEN) == 2  # the second process used the replacement, not a third token


async def test_writes_of_one_installation_go_one_at_a_time_across_processes(
        github, github_app, app_private_key, world, pg_url):
    github.delay(COMMENTS, 0.05, times=6)
    async with processes(3, pg_url, github, github_app, app_private_key) as apps:
        await asyncio.gather(*(app.installation(world.inst.id).post(
            "/repos/{owner}/{repo}/issues/{issue_number}/comments",
            {"owner": OWNER, "repo": NAME, "issue_number": world.pr.number}, data={"body": f"note {i}"})
            for i, app in enumerate(apps * 2)))
    assert len(world.pr.comments) == 6
    assert github.max_concurrent_writes == 1


async def test_a_retry_after_given_to_one_process_holds_the_others_writes(
        github, github_app, app_private_key, world, pg_url):
    sleeps = Sleeps()
    github.secondary_rate_limit(COMMENTS, retry_after=30)
    async with processes(2, pg_url, github, github_app, app_private_key, sleep=sleeps) as (first, second):
        comment = {"owner": OWNER, "repo": NAME, "issue_number": world.pr.number}
        await first.installation(world.inst.id).post("/repos/{owner}/{repo}/issues/{issue_number}/comments",
                                                     comment, data={"body": "one"})
        assert sleeps == [30.0]  # the first waited GitHub's retry-after (its sleep returns at once here)
        await second.installation(world.inst.id).post("/repos/{owner}/{repo}/issues/{issue_number}/comments",
                                                      comment, data={"body": "two"})
    assert len(sleeps) == 2 and 25 < sleeps[1] <= 30  # the second waited out the rest of it, told by the first
    assert len(world.pr.comments) == 2


async def test_a_token_copied_to_another_installation_does_not_open(github, github_app, app_private_key, world,
                                                                      pg_url):
    """Hostile: someone who can write the database (not read tokens) copies one installation's sealed
    token into another's row; the other installation must not use it, but fetch its own."""
    other = github.add_repo("other-org/elsewhere")
    other.commit({"README.md": "x\n"})
    other_inst = github.install(github_app, other)
    async with processes(1, pg_url, github, github_app, app_private_key) as (first,):
        token = await first.installation_token(world.inst.id)
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("INSERT INTO installation_tokens (installation_id, sealed, expires_at) "
                     "SELECT %s, sealed, expires_at FROM installation_tokens WHERE installation_id = %s",
                     (other_inst.id, world.inst.id))
    async with processes(1, pg_url, github, github_app, app_private_key) as (second,):
        assert await second.installation_token(other_inst.id) != token
        assert await second.installation_token(world.inst.id) == token  # its own row still opens
    assert github.count(TOKEN) == 2
