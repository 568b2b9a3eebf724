"""Reading the issues a pull request closes (bot/pipeline/intent.py), against the GitHub double
over real HTTP: what is read, with the installation's token, and every way an issue is not."""

from __future__ import annotations

import random
from types import SimpleNamespace

import aiohttp
import pytest

from bot.github import GitHubApp, RetryPolicy
from bot.pipeline.intent import PRIVATE_FROM_PUBLIC, read_intent
from bot.pipeline.targets import Target
from bot.reviews.intent import MAX_COMMENTS
from bot.reviews.references import MAX_LINKED
from tests.support.github_double.model import person

ISSUE = "GET /repos/{owner}/{repo}/issues/{issue_number}"
COMMENTS = "GET /repos/{owner}/{repo}/issues/{issue_number}/comments"
REPO = "GET /repos/{owner}/{repo}"


async def no_wait(_: float) -> None:
    return None


@pytest.fixture
def world(github, github_app):
    repo = github.add_repo("octo/app")
    lib = github.add_repo("octo/lib")
    secret = github.add_repo("octo/secret", private=True)
    github.add_repo("elsewhere/tool")  # not in the installation
    base = repo.commit({"a.py": "a = 1\n"})
    repo.commit({"a.py": "a = 2\n"}, branch="feature", parent=base)
    inst = github.install(github_app, repo, lib, secret)
    return SimpleNamespace(repo=repo, lib=lib, secret=secret, inst=inst)


@pytest.fixture
async def gh(github, github_app, app_private_key, world):
    async with aiohttp.ClientSession() as session:
        app = GitHubApp(session, app_id=github_app.id, private_key=app_private_key, base_url=github.url,
                        policy=RetryPolicy(attempts=2, timeout=5.0), sleep=no_wait, rng=random.Random(1))
        yield app.installation(world.inst.id)


def opened(github, world, body: str, title: str = "A change"):
    pr = world.repo.open_pull(head="feature", title=title, body=body)
    pull = github.render.pull(pr)
    return Target("octo", "app", pr.number, pr.head_sha, "opened", pull), pull


async def test_an_issue_of_the_repository_is_read_with_its_first_comments_by_people(github, world, gh):
    issue = world.repo.open_issue(title="Crash on start", body="Starting with no config crashes.", user="alice")
    issue.comment("Seen on 2.1 too.", user="bob")
    issue.comment("I am a bot.", user=person("ci[bot]", "Bot"))
    for n in range(MAX_COMMENTS + 2):
        issue.comment(f"later {n}", user="carol")
    target, pull = opened(github, world, f"Fixes #{issue.number}")
    intent = await read_intent(gh, target, pull)
    assert intent.unread == ()
    (read,) = intent.read
    assert (read.title, read.body, read.author, read.state) == ("Crash on start", "Starting with no config crashes.",
                                                               "alice", "open")
    assert [(c.author, c.body) for c in read.comments] == [("bob", "Seen on 2.1 too."), ("carol", "later 0"),
                                                         ("carol", "later 1")]
    assert github.count(COMMENTS) == 1  # one page, never every page
    assert intent.note() == f"Linked issues: #{issue.number} (`Crash on start`) read with its first 3 comment(s)"


async def test_what_cannot_be_read_is_named_with_why_and_the_rest_is_read(github, world, gh):
    lib_issue = world.lib.open_issue(title="Lib side", body="Export the helper.")
    secret_issue = world.secret.open_issue(title="Secret plan", body="The launch date is ...")
    pr = world.repo.open_pull(head="feature", title="A change")
    other_pr = world.repo.open_pull(head="feature", title="Another")
    pr.body = (f"Fixes #{pr.number}, fixes #{other_pr.number}, fixes #999, fixes octo/lib#{lib_issue.number}, "
               f"fixes octo/secret#{secret_issue.number} and fixes elsewhere/tool#1")
    pull = github.render.pull(pr)
    target, pr_number = Target("octo", "app", pr.number, pr.head_sha, "opened", pull), pr.number
    intent = await read_intent(gh, target, pull)
    assert [(i.ref.full_name, i.title) for i in intent.read] == [("octo/lib", "Lib side")]
    assert {u.ref.name("octo/app"): u.reason for u in intent.unread} == {
        f"#{pr_number}": "that is this pull request",
        f"#{other_pr.number}": "a pull request, not an issue",
        "#999": "the app cannot read it (GitHub answered 404)",
        f"octo/secret#{secret_issue.number}": PRIVATE_FROM_PUBLIC,
    }
    assert intent.more == 1  # the sixth reference: at most MAX_LINKED are read
    assert MAX_LINKED == 5
    assert "Secret plan" not in str(intent) and not any("/octo/secret/issues" in c.path for c in github.calls)


async def test_a_private_pull_request_reads_a_private_repository_of_its_owner(github, world, gh):
    world.repo.private = True
    secret_issue = world.secret.open_issue(title="Secret plan", body="Ship it.")
    target, pull = opened(github, world, f"Resolves https://github.com/octo/secret/issues/{secret_issue.number}")
    intent = await read_intent(gh, target, pull)
    assert [i.title for i in intent.read] == ["Secret plan"] and intent.unread == ()


async def test_a_repository_outside_the_installation_is_not_read(github, world, gh):
    target, pull = opened(github, world, "closes elsewhere/tool#1")
    intent = await read_intent(gh, target, pull)
    assert [(u.ref.full_name, u.reason) for u in intent.unread] == [
        ("elsewhere/tool", "the app cannot read it (GitHub answered 404)")]
    assert github.count(ISSUE) == 0  # the repository was not reachable: its issue was never asked for


async def test_a_permission_refused_issues_turned_off_or_github_down_leave_the_issue_unread(github, world, gh,
                                                                                          github_app):
    first, second, third = (world.repo.open_issue(title=f"Issue {n}") for n in range(3))
    target, pull = opened(github, world, f"fixes #{first.number}")
    github.fail(ISSUE, status=502, times=2)  # both attempts of the retry policy
    intent = await read_intent(gh, target, pull)
    assert "GitHub answered 502" in intent.unread[0].reason and "gave up after 2 attempts" in intent.unread[0].reason
    del github_app.permissions["issues"]
    target, pull = opened(github, world, f"fixes #{second.number}")
    assert (await read_intent(gh, target, pull)).unread[0].reason == "the app cannot read it (GitHub answered 403)"
    github_app.permissions["issues"] = "read"
    world.repo.has_issues = False
    target, pull = opened(github, world, f"fixes #{third.number}")
    assert (await read_intent(gh, target, pull)).unread[0].reason.startswith("GitHub answered 410")


async def test_a_body_with_no_reference_reads_no_issue(github, world, gh):
    target, pull = opened(github, world, "Refactor; see #3 and `fixes #4`.")
    intent = await read_intent(gh, target, pull)
    assert intent.read == () and intent.unread == () and intent.note() is None
    assert github.count(ISSUE) == 0 and github.count(REPO) == 0
    assert [c.fields for c in github.graphql_calls] == [("repository",)]  # only: does GitHub link any?


async def test_the_issues_linked_on_github_are_read_after_the_bodys(github, world, gh):
    named, sidebar = world.repo.open_issue(title="Named in the body"), world.repo.open_issue(title="In the sidebar")
    other = world.lib.open_issue(title="Another repository's")
    hidden = github.repos["elsewhere/tool"].open_issue(title="Not this installation's")
    pr = world.repo.open_pull(head="feature", title="A change", body=f"Closes #{named.number}")
    pr.linked_issues = [named, sidebar, other, hidden]  # GitHub lists only what the installation can see
    target = Target("octo", "app", pr.number, pr.head_sha, "opened", github.render.pull(pr))
    intent = await read_intent(gh, target, target.pull or {})
    assert [i.title for i in intent.read] == ["Named in the body", "In the sidebar", "Another repository's"]
    assert intent.unread == () and github.count(ISSUE) == 3


async def test_a_pull_request_graphql_does_not_know_keeps_the_bodys_references(github, world, gh):
    issue = world.repo.open_issue(title="Named in the body")
    target, pull = opened(github, world, f"Fixes #{issue.number}")
    gone = Target("octo", "app", 999, target.head_sha, "opened", pull)  # GraphQL answers with an error
    intent = await read_intent(gh, gone, pull)
    assert [i.title for i in intent.read] == ["Named in the body"]
    assert github.graphql_calls[-1].errors == 1
