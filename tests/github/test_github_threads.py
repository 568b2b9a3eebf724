"""A pull request's review threads over GraphQL (bot/github/threads.py, through gidgethub's GraphQL
call in bot/github/client.py) against the GitHub double's GraphQL: validated against the cut of
GitHub's schema, threads made of the review comments the double stores."""

from __future__ import annotations

import aiohttp
import pytest

from bot.github import GitHubApp, GitHubError, RetryPolicy
from bot.github.client import graphql_url
from bot.github.threads import closable, resolve_thread, review_threads
from tests.support.app_support import registered_app, started_github
from tests.support.github_double.model import Review, ReviewComment, now_iso, person

OWNER, NAME = "octo-org", "threads"


def _world(github, github_app, threads: int = 3):
    repo = github.add_repo(f"{OWNER}/{NAME}")
    base = repo.commit({"a.py": "".join(f"x{i} = {i}\n" for i in range(1, 200))})
    repo.commit({"a.py": "".join(f"x{i} = {i * 2}\n" for i in range(1, 200))}, branch="feature", parent=base)
    pr = repo.open_pull(head="feature")
    inst = github.install(github_app, repo)
    review = Review(github.next_id(), github_app.bot, "", "COMMENTED", pr.head_sha, now_iso())
    for line in range(1, threads + 1):
        review.comments.append(ReviewComment(github.next_id(), review.id, "a.py", line, "RIGHT", None, None,
                                             f"finding {line}", pr.head_sha, github_app.bot, now_iso(), "@@"))
    pr.reviews.append(review)
    return pr, inst


async def _client(github, github_app, app_private_key, inst, session) -> GitHubApp:
    app = GitHubApp(session, app_id=github_app.id, private_key=app_private_key, base_url=github.url,
                    policy=RetryPolicy(timeout=5.0))
    return app.installation(inst.id)


async def test_threads_are_read_page_by_page_with_their_comments_and_authors(github, github_app, app_private_key):
    pr, inst = _world(github, github_app, threads=53)  # more than one page of 50
    pr.reply(pr.review_comments[1], "I disagree", "alice")
    pr.resolved_threads[pr.review_comments[2].id] = "bob"
    async with aiohttp.ClientSession() as session:
        gh = await _client(github, github_app, app_private_key, inst, session)
        threads = await review_threads(gh, OWNER, NAME, pr.number)
    assert len(threads) == 53 and len(github.graphql_calls) == 2  # two pages
    first, discussed, resolved = threads[:3]
    assert first.authors == ("reviewer",) and first.root == pr.review_comments[0].id and not first.resolved
    assert discussed.authors == ("reviewer", "alice") and not discussed.only_by("reviewer[bot]")
    assert resolved.resolved and first.only_by("reviewer[bot]")
    roots = [t.root for t in threads[:3]]
    assert closable(threads, roots, "reviewer[bot]") == [first]  # not the discussed one, not the resolved one


async def test_a_thread_is_resolved_once_and_the_double_says_by_whom(github, github_app, app_private_key):
    pr, inst = _world(github, github_app, threads=1)
    async with aiohttp.ClientSession() as session:
        gh = await _client(github, github_app, app_private_key, inst, session)
        [thread] = await review_threads(gh, OWNER, NAME, pr.number)
        assert await resolve_thread(gh, thread.id) is True
        [after] = await review_threads(gh, OWNER, NAME, pr.number)
    assert after.resolved and pr.resolved_threads == {pr.review_comments[0].id: "reviewer[bot]"}
    assert [c.operation for c in github.graphql_calls] == ["query", "mutation", "query"]


async def test_a_query_github_would_refuse_is_an_error_and_a_violation(github, github_app, app_private_key):
    pr, inst = _world(github, github_app, threads=1)
    async with aiohttp.ClientSession() as session:
        gh = await _client(github, github_app, app_private_key, inst, session)
        with pytest.raises(GitHubError, match="Cannot query field 'isFixed'") as caught:
            await gh.graphql("query { repository(owner: \"octo-org\", name: \"threads\") { isFixed } }")
        assert caught.value.status == 200 and caught.value.route == "/graphql"
        with pytest.raises(GitHubError, match="Could not resolve to a Repository"):
            await review_threads(gh, OWNER, "elsewhere", pr.number)  # not installed there
        with pytest.raises(GitHubError, match="Could not resolve to a node"):
            await resolve_thread(gh, "PRRT_nothing")
    assert github.take_violations() == ["POST graphql: Cannot query field 'isFixed' on type 'Repository'."]


async def test_enterprise_servers_answer_graphql_at_api_graphql(app_private_key):
    assert graphql_url("https://api.github.com") == "https://api.github.com/graphql"
    assert graphql_url("https://ghe.example.com/api/v3/") == "https://ghe.example.com/api/graphql"
    async with started_github(api_prefix="/api/v3") as github:
        github_app = registered_app(github, app_private_key)
        pr, inst = _world(github, github_app, threads=2)
        async with aiohttp.ClientSession() as session:
            gh = await _client(github, github_app, app_private_key, inst, session)
            assert [t.root for t in await review_threads(gh, OWNER, NAME, pr.number)] == [
                c.id for c in pr.review_comments]
    assert github.violations == []


def test_the_doubles_threads_are_its_review_comments():
    """A reply joins its thread; a person's comment of their own starts one."""
    from tests.support.github_double.graphql import threads_of
    from tests.support.github_double.model import PullRequest

    bot = person("reviewer[bot]", "Bot")
    pr = PullRequest(1, 1, None, "t", None, person("o"), "main", "f", False, [], now_iso())  # type: ignore[arg-type]
    review = Review(1, bot, "", "COMMENTED", "h", now_iso())
    root = ReviewComment(10, 1, "a.py", 1, "RIGHT", None, None, "x", "h", bot, now_iso(), "@@")
    reply = ReviewComment(11, 1, "a.py", 1, "RIGHT", None, None, "y", "h", person("ann"), now_iso(), "@@",
                          in_reply_to_id=10)
    own = ReviewComment(12, 1, "b.py", 3, "RIGHT", None, None, "z", "h", person("ann"), now_iso(), "@@")
    review.comments += [root, reply, own]
    pr.reviews.append(review)
    assert threads_of(pr) == [root, own] and pr.thread(root) == [root, reply]
