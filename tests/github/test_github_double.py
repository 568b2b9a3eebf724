"""The GitHub double itself: its checks must be able to fail, and its shapes must be GitHub's.

Raw HTTP here (aiohttp), so that what is tested is the double, not the app's client.
"""

from __future__ import annotations

import asyncio
import base64
import json
import time
from pathlib import Path

import aiohttp
import jwt
import pytest
from aiohttp import web
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from gidgethub.apps import get_jwt
from gidgethub.sansio import Event
from multidict import CIMultiDict

from tests.support.github_double import signature_256
from tests.support.github_double.server import rest_description
from tests.support.process_support import caught

WEBHOOKS = Path(__file__).parent.parent / "data" / "webhooks"


@pytest.fixture
def setup(github, github_app):
    repo = github.add_repo("octo-org/hello")
    base = repo.commit({"README.md": "hello\n", "src/a.py": "\n".join(f"line {i}" for i in range(1, 21)) + "\n"})
    repo.commit({"src/a.py": "\n".join(f"line {i}" for i in range(1, 21)).replace("line 10", "LINE 10") + "\n",
                 **{f"docs/{i}.md": f"{i}\n" for i in range(5)}}, branch="feature", parent=base)
    pr = repo.open_pull(head="feature")
    inst = github.install(github_app, repo)
    token, _ = github.issue_token(inst)
    return repo, pr, inst, token, base


async def call(github, method: str, path: str, *, token: str | None = None, bearer: str | None = None,
               body: object = None) -> tuple[int, CIMultiDict, object]:
    headers = {"Accept": "application/vnd.github+json"}
    if token:
        headers["Authorization"] = f"token {token}"
    if bearer:
        headers["Authorization"] = f"Bearer {bearer}"
    async with aiohttp.ClientSession() as session:
        async with session.request(method, github.url + path, headers=headers, json=body) as response:
            return response.status, CIMultiDict(response.headers), await response.json()


# --- the description is enforced --------------------------------------------------------------

async def test_a_body_that_breaks_the_schema_is_refused_and_recorded(github, setup):
    repo, pr, _, token, _ = setup
    status, _, answer = await call(github, "POST", "/repos/octo-org/hello/check-runs", token=token,
                                   body={"name": 5, "head_sha": pr.head_sha, "status": "later"})
    assert status == 422 and "Invalid request" in answer["message"]
    found = github.take_violations()
    assert any("/name: 5 is not of type 'string'" in v for v in found)
    assert any("/status: 'later' is not one of" in v for v in found)
    assert repo.check_runs == {}


async def test_unknown_routes_and_query_parameters_are_violations(github, setup):
    _, pr, _, token, _ = setup
    status, _, _ = await call(github, "GET", "/repos/octo-org/hello/branches", token=token)
    assert status == 404
    status, _, _ = await call(github, "GET", f"/repos/octo-org/hello/pulls/{pr.number}?perpage=5", token=token)
    assert status == 422
    found = github.take_violations()
    assert any("no operation of the REST description matches" in v for v in found)
    assert any("'perpage' is not a parameter of pulls/get" in v for v in found)


async def test_a_delay_holds_its_requests_until_released(github, setup):
    """A test ends a delay once what it waits for has happened (tests/support/scale_support.py):
    the held request then goes on at once, the delay staying the bound."""
    _, pr, _, token, _ = setup
    held = github.delay("GET /repos/{owner}/{repo}/pulls/{pull_number}", 600)
    answer = asyncio.create_task(call(github, "GET", f"/repos/octo-org/hello/pulls/{pr.number}", token=token))
    await caught(held, timeout=30)
    assert not answer.done()  # held
    held.release()
    status, _, body = await asyncio.wait_for(answer, 30)  # long before the delay's 600 s
    assert status == 200 and body["number"] == pr.number


async def test_check_run_limits_are_enforced(github, setup):
    repo, pr, _, token, _ = setup
    many = [{"path": "a", "start_line": 1, "end_line": 1, "annotation_level": "notice", "message": "m"}] * 51
    status, _, _ = await call(github, "POST", "/repos/octo-org/hello/check-runs", token=token,
                              body={"name": "Reviewer", "head_sha": pr.head_sha, "output": {"title": "t", "summary": "s", "annotations": many}})
    assert status == 422
    columns = [{"path": "a", "start_line": 1, "end_line": 3, "start_column": 2, "end_column": 4,
                "annotation_level": "notice", "message": "m"}]
    status, _, answer = await call(github, "POST", "/repos/octo-org/hello/check-runs", token=token,
                                   body={"name": "Reviewer", "head_sha": pr.head_sha, "output": {"title": "t", "summary": "s", "annotations": columns}})
    assert status == 422 and "same" in answer["message"]
    status, _, _ = await call(github, "POST", "/repos/octo-org/hello/check-runs", token=token,
                              body={"name": "Reviewer", "head_sha": pr.head_sha, "output": {"title": "t", "summary": "x" * 65_536}})
    assert status == 422
    assert len(github.take_violations()) >= 3 and repo.check_runs == {}


def test_the_response_check_can_fail():
    description = rest_description()
    problems = description.check_response(description.by_route["GET /repos/{owner}/{repo}/pulls/{pull_number}"], 200, {"id": "x"})
    assert any("/id: 'x' is not of type 'integer'" in p for p in problems)
    assert any("'_links' is a required property" in p for p in problems)


def test_nullable_is_translated_for_json_schema():
    description = rest_description()
    op = description.by_route["GET /repos/{owner}/{repo}/pulls/{pull_number}"]
    pull = json.loads((WEBHOOKS / "pull_request.opened.json").read_text())["pull_request"]
    assert pull["milestone"] is None and description.check_response(op, 200, pull) == []


def test_unknown_fault_routes_are_refused(github):
    with pytest.raises(ValueError, match="no route of the REST description"):
        github.fail("GET /repos/{owner}/{repo}/pull/{pull_number}")


# --- authentication ---------------------------------------------------------------------------

async def test_app_jwt_must_be_signed_by_the_app_key(github, github_app, app_private_key):
    assert (await call(github, "GET", "/app", bearer=get_jwt(app_id=str(github_app.id), private_key=app_private_key)))[0] == 200
    other = rsa.generate_private_key(public_exponent=65537, key_size=2048).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()).decode()
    assert (await call(github, "GET", "/app", bearer=get_jwt(app_id=str(github_app.id), private_key=other)))[0] == 401
    now = int(time.time())
    too_long = jwt.encode({"iat": now - 60, "exp": now + 3600, "iss": str(github_app.id)}, app_private_key, algorithm="RS256")
    status, _, answer = await call(github, "GET", "/app", bearer=too_long)
    assert status == 401 and "too far in the future" in answer["message"]


async def test_installation_tokens_expire_and_reach_only_installed_repos(github, setup):
    _, pr, _, token, _ = setup
    github.add_repo("octo-org/secret").commit({"a": "b"})
    assert (await call(github, "GET", "/repos/octo-org/secret/contents/a", token=token))[0] == 404
    status, headers, _ = await call(github, "GET", f"/repos/octo-org/hello/pulls/{pr.number}", token=token)
    assert status == 200 and headers["x-ratelimit-limit"] == "5000" and "x-ratelimit-reset" in headers
    github.expire_tokens()
    status, _, answer = await call(github, "GET", f"/repos/octo-org/hello/pulls/{pr.number}", token=token)
    assert status == 401 and answer["message"] == "Bad credentials"


async def test_a_repositorys_installation_is_found_with_the_app_jwt_only(github, setup, github_app, app_private_key):
    _, _, inst, token, _ = setup
    app_jwt = get_jwt(app_id=str(github_app.id), private_key=app_private_key)
    status, _, answer = await call(github, "GET", "/repos/Octo-Org/Hello/installation", bearer=app_jwt)
    assert status == 200 and answer["id"] == inst.id and answer["app_id"] == github_app.id
    github.add_repo("octo-org/elsewhere").commit({"a": "b"})
    assert (await call(github, "GET", "/repos/octo-org/elsewhere/installation", bearer=app_jwt))[0] == 404
    assert (await call(github, "GET", "/repos/octo-org/hello/installation", token=token))[0] == 401


# --- GitHub's shapes --------------------------------------------------------------------------

async def test_a_repository_names_its_default_branch(github, setup, github_app):
    repo, _, _, token, _ = setup
    github.install(github_app, github.add_repo("octo-org/trunk", default_branch="trunk"))
    status, _, answer = await call(github, "GET", "/repos/octo-org/hello", token=token)
    assert status == 200 and answer["full_name"] == "octo-org/hello" and answer["default_branch"] == "main"
    assert (await call(github, "GET", "/repos/octo-org/trunk", token=token))[0] == 404  # another installation's


async def test_pull_files_are_paginated_with_link_headers(github, setup):
    _, pr, _, token, _ = setup
    path = f"/repos/octo-org/hello/pulls/{pr.number}/files"
    status, headers, page1 = await call(github, "GET", path + "?per_page=2", token=token)
    assert status == 200 and len(page1) == 2
    assert f'{path}?per_page=2&page=2>; rel="next"' in headers["Link"] and 'page=3>; rel="last"' in headers["Link"]
    _, headers, page3 = await call(github, "GET", path + "?per_page=2&page=3", token=token)
    assert [f["filename"] for f in page3] == ["docs/4.md", "src/a.py"] and 'rel="prev"' in headers["Link"] and 'rel="next"' not in headers["Link"]


async def test_compare_reports_the_merge_base_of_diverged_branches(github, setup):
    repo, pr, _, token, base = setup
    repo.commit({"README.md": "moved on\n"})
    _, _, answer = await call(github, "GET", f"/repos/octo-org/hello/compare/main...{pr.head_sha}", token=token)
    assert answer["merge_base_commit"]["sha"] == base and answer["status"] == "diverged"
    assert (answer["ahead_by"], answer["behind_by"]) == (1, 1)
    assert "README.md" not in [f["filename"] for f in answer["files"]]


async def test_contents_are_base64_in_lines_of_60(github, setup):
    repo, _, _, token, _ = setup
    text = "x" * 100 + "\n"
    sha = repo.commit({"wide.txt": text})
    _, _, answer = await call(github, "GET", f"/repos/octo-org/hello/contents/wide.txt?ref={sha}", token=token)
    assert answer["encoding"] == "base64" and max(len(line) for line in answer["content"].splitlines()) == 60
    assert base64.b64decode(answer["content"]).decode() == text


async def test_review_rules_of_github(github, setup, github_app):
    repo, pr, _, token, _ = setup
    path = f"/repos/octo-org/hello/pulls/{pr.number}/reviews"
    ok = {"event": "COMMENT", "comments": [{"path": "src/a.py", "line": 10, "body": "why?"}]}
    assert (await call(github, "POST", path, token=token, body=ok))[0] == 200
    off = {"event": "COMMENT", "comments": [{"path": "src/a.py", "line": 1, "body": "far from the hunk"}]}
    assert (await call(github, "POST", path, token=token, body=off))[0] == 422
    commented = pr.reviews[0].id
    status, _, answer = await call(github, "PUT", f"{path}/{commented}/dismissals", token=token, body={"message": "no"})
    assert status == 422 and "commented" in answer["errors"][0]


# --- webhooks ---------------------------------------------------------------------------------

def test_signature_matches_githubs_published_test_vector():
    assert signature_256(b"Hello, World!", "It's a Secret to Everybody") == (
        "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17")


async def test_deliveries_are_signed_and_point_at_the_double(github, setup, github_app):
    repo, pr, inst, _, base = setup
    received = []

    async def hook(request: web.Request) -> web.Response:
        received.append(Event.from_http(request.headers, await request.read(), secret=github_app.webhook_secret))
        return web.Response(status=202)

    server = web.Application()
    server.router.add_post("/webhook", hook)
    runner = web.AppRunner(server)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    url = f"http://127.0.0.1:{runner.addresses[0][1]}/webhook"
    try:
        payload = github.payload("pull_request", "synchronize", installation=inst, repo=repo, pull=pr)
        status, _ = await github.deliver(url, "pull_request", payload, secret=github_app.webhook_secret, delivery_id="d-1")
    finally:
        await runner.cleanup()
    assert status == 202
    event = received[0]
    assert (event.event, event.delivery_id) == ("pull_request", "d-1")
    data = event.data
    assert data["installation"]["id"] == inst.id and data["repository"]["full_name"] == "octo-org/hello"
    assert data["pull_request"]["head"]["sha"] == pr.head_sha and data["after"] == pr.head_sha
    assert data["pull_request"]["url"] == f"{github.url}/repos/octo-org/hello/pulls/{pr.number}"
    assert "Codertocat/Hello-World" not in json.dumps(data)


@pytest.mark.parametrize("name", sorted(p.stem for p in WEBHOOKS.glob("*.json") if p.stem != "SOURCES"))
def test_every_cut_example_becomes_a_delivery(github, setup, name):
    repo, pr, inst, _, _ = setup
    event, _, action = name.partition(".")
    payload = github.payload(event, action or None, installation=inst, repo=repo, pull=pr)
    original = json.loads((WEBHOOKS / f"{name}.json").read_text())
    assert set(original) <= set(payload)  # nothing a real delivery carries is dropped
    if "installation" in original:
        assert payload["installation"]["id"] == inst.id
    if event in ("check_run", "check_suite"):
        holder = payload[event]
        assert holder["head_sha"] == pr.head_sha and holder["pull_requests"][0]["number"] == pr.number


def test_a_fork_pull_request_has_no_pull_requests_in_check_payloads(github, setup):
    repo, _, inst, _, base = setup
    fork = github.fork(repo, "someone")
    fork.commit({"src/b.py": "b\n"}, branch="patch", parent=base)
    pr = repo.open_pull(head="patch", head_repo=fork, user="someone")
    payload = github.payload("check_run", "rerequested", installation=inst, repo=repo, pull=pr)
    assert payload["check_run"]["pull_requests"] == [] and payload["check_run"]["head_sha"] == pr.head_sha


async def test_replies_go_to_a_thread_s_first_comment_and_permissions_fold_as_on_github(github, setup):
    repo, pr, _, token, _ = setup
    pulls = f"/repos/octo-org/hello/pulls/{pr.number}"
    status, _, review = await call(github, "POST", f"{pulls}/reviews", token=token, body={
        "commit_id": pr.head_sha, "event": "COMMENT",
        "comments": [{"path": "src/a.py", "line": 10, "side": "RIGHT", "body": "Why upper case?"}]})
    assert status == 200
    root = pr.review_comments[0]
    status, _, reply = await call(github, "POST", f"{pulls}/comments/{root.id}/replies", token=token,
                                  body={"body": "Because."})
    assert status == 201 and reply["in_reply_to_id"] == root.id and reply["path"] == "src/a.py"
    status, _, refused = await call(github, "POST", f"{pulls}/comments/{reply['id']}/replies", token=token,
                                    body={"body": "A reply to a reply."})
    assert status == 422 and "Replies to replies are not supported" in json.dumps(refused)
    status, _, _ = await call(github, "POST", f"{pulls}/comments/999/replies", token=token, body={"body": "x"})
    assert status == 404
    assert [c.id for c in pr.thread(root)] == [root.id, reply["id"]]

    repo.permissions.update({"ann": "maintain", "tri": "triage", "bob": "write"})
    levels = {}
    for login in ("ann", "tri", "bob", "stranger"):
        status, _, answer = await call(github, "GET", f"/repos/octo-org/hello/collaborators/{login}/permission",
                                       token=token)
        assert status == 200 and answer["user"]["login"] == login
        levels[login] = (answer["permission"], answer["role_name"])
    assert levels == {"ann": ("write", "maintain"), "tri": ("read", "triage"), "bob": ("write", "write"),
                      "stranger": ("read", "read")}  # a public repository: anyone reads


async def test_issues_are_served_as_githubs_rest_description_says(github, setup, github_app):
    repo, pr, _, token, _ = setup
    issue = repo.open_issue(title="Crash on start", body="It crashes.", user="alice")
    for n in range(3):
        issue.comment(f"comment {n}", user="bob")
    status, _, answer = await call(github, "GET", f"/repos/octo-org/hello/issues/{issue.number}", token=token)
    assert status == 200 and issue.number == pr.number + 1  # one numbering for issues and pull requests
    assert (answer["title"], answer["body"], answer["user"]["login"], answer["comments"]) == (
        "Crash on start", "It crashes.", "alice", 3)
    assert "pull_request" not in answer and answer["html_url"].endswith(f"/octo-org/hello/issues/{issue.number}")
    status, headers, page = await call(github, "GET", f"/repos/octo-org/hello/issues/{issue.number}/comments"
                                       "?per_page=2", token=token)
    assert status == 200 and [c["body"] for c in page] == ["comment 0", "comment 1"] and 'rel="next"' in headers["Link"]
    status, _, as_issue = await call(github, "GET", f"/repos/octo-org/hello/issues/{pr.number}", token=token)
    assert status == 200 and as_issue["pull_request"]["url"].endswith(f"/pulls/{pr.number}")
    status, _, _ = await call(github, "GET", "/repos/octo-org/hello/issues/999", token=token)
    assert status == 404


async def test_an_app_without_the_issues_permission_or_a_repository_without_issues_is_refused(github, setup,
                                                                                             github_app):
    repo, pr, _, token, _ = setup
    issue = repo.open_issue()
    repo.has_issues = False
    status, _, answer = await call(github, "GET", f"/repos/octo-org/hello/issues/{issue.number}", token=token)
    assert (status, answer["message"]) == (410, "Issues are disabled for this repo")
    del github_app.permissions["issues"]
    status, _, answer = await call(github, "GET", f"/repos/octo-org/hello/issues/{issue.number}", token=token)
    assert (status, answer["message"]) == (403, "Resource not accessible by integration")
    status, _, _ = await call(github, "GET", f"/repos/octo-org/hello/issues/{pr.number}", token=token)
    assert status == 200  # a pull request is an issue the pull requests permission reads
