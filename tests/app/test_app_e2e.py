"""The GitHub App end to end, through real HTTP: a signed delivery in, a check run out.

The app under test is `reviewer serve`'s application with the real pipeline; GitHub is the
double, which checks every request against GitHub's REST description.
"""

from __future__ import annotations

from tests.support.app_support import running_app, settle
from tests.support.server_support import wait_for

CONFIG = """\
rules:
  - id: python-style
    rule: Functions have type hints.
    paths: ["**/*.py"]
  - id: docs-tone
    rule: Docs are friendly.
    paths: ["docs/**"]
ignore: ["**/*.lock"]
"""


async def test_an_opened_pull_request_gets_a_successful_run_with_the_plan(tmp_path, github, github_app, app_private_key):
    async with running_app(tmp_path, github, github_app, app_private_key) as world:
        pr = world.pull({".reviewer.yaml": CONFIG})
        status, _ = await world.opened(pr)
        assert status == 202
        run = await world.completed_run(pr)
    assert run.name == "Reviewer" and run.conclusion == "success"
    assert run.output["title"] == "Review planned: 1 file, 1 rule"
    assert "`python-style` (repository)" in run.output["summary"]
    assert "docs-tone" not in run.output["summary"]
    assert "No model provider is configured" in run.output["summary"]


async def test_a_pull_request_of_ten_files_costs_at_most_five_calls(tmp_path, github, github_app, app_private_key):
    async with running_app(tmp_path, github, github_app, app_private_key) as world:
        warm = world.pull({".reviewer.yaml": CONFIG})  # the first job fetches the installation token
        await world.opened(warm)
        await world.completed_run(warm)
        before = len(github.calls)
        pr = world.pull({".reviewer.yaml": CONFIG}, {f"src/m{i}.py": f"x = {i}\n" for i in range(10)})
        await world.opened(pr)
        await world.completed_run(pr)
    assert [c.route for c in github.calls[before:]] == [
        "POST /repos/{owner}/{repo}/check-runs",
        "GET /repos/{owner}/{repo}/compare/{basehead}",
        "GET /repos/{owner}/{repo}/git/trees/{tree_sha}",
        "GET /repos/{owner}/{repo}/contents/{path}",
        "PATCH /repos/{owner}/{repo}/check-runs/{check_run_id}",
    ]


async def test_an_invalid_config_fails_with_annotations_at_the_right_lines(tmp_path, github, github_app, app_private_key):
    bad = "feedback: verbose\nrules:\n  - id: Bad_Id\n    rule: x\n"
    async with running_app(tmp_path, github, github_app, app_private_key) as world:
        pr = world.pull({".reviewer.yaml": bad})
        await world.opened(pr)
        run = await world.completed_run(pr)
    assert run.conclusion == "failure" and run.output["title"] == "Invalid configuration: 2 errors"
    assert [(a["path"], a["start_line"], a["annotation_level"], a["title"]) for a in run.annotations] == [
        (".reviewer.yaml", 1, "failure", "enum"), (".reviewer.yaml", 3, "failure", "pattern")]


async def test_more_than_fifty_errors_are_all_annotated(tmp_path, github, github_app, app_private_key):
    bad = "rules:\n" + "".join(f"  - id: Bad{i}\n    rule: x\n" for i in range(120))
    async with running_app(tmp_path, github, github_app, app_private_key) as world:
        pr = world.pull({".reviewer.yaml": bad})
        await world.opened(pr)
        run = await world.completed_run(pr)
    assert run.conclusion == "failure"
    assert len(run.annotations) == 120 and run.requests >= 4  # create + 3 updates of at most 50
    assert sorted(a["start_line"] for a in run.annotations) == [2 + 2 * i for i in range(120)]


async def test_a_pull_request_changing_its_config_is_reviewed_with_the_merge_base_one(
        tmp_path, github, github_app, app_private_key):
    head = {".reviewer.yaml": "enabled: false\nfeedback: loud\n", "src/app.py": "x = 1\n"}
    async with running_app(tmp_path, github, github_app, app_private_key) as world:
        pr = world.pull({".reviewer.yaml": CONFIG}, head)
        await world.opened(pr)
        run = await world.completed_run(pr)
    # Planned with the merge-base config (enabled, python-style applies) …
    assert "`python-style` (repository)" in run.output["summary"]
    # … while the new version's error fails the run, annotated on the changed file.
    assert run.conclusion == "failure"
    assert run.output["title"].startswith("The changed configuration is invalid (1 error)")
    assert [(a["path"], a["start_line"], a["title"]) for a in run.annotations] == [(".reviewer.yaml", 2, "enum")]


async def test_skips_are_neutral_with_the_reason(tmp_path, github, github_app, app_private_key):
    cases = {
        "enabled: false\n": "Skipped: reviews are disabled for this repository",
        "filterExpr: '!pr.title.startsWith(\"WIP\")'\n": "Skipped: the pull request does not pass filterExpr",
        "ignore: ['src/**']\n": "Skipped: every changed file is ignored",
    }
    async with running_app(tmp_path, github, github_app, app_private_key) as world:
        pulls = [(world.pull({".reviewer.yaml": config}, title="WIP: try"), title) for config, title in cases.items()]
        for pr, _ in pulls:
            await world.opened(pr)
        runs = [(await world.completed_run(pr), title) for pr, title in pulls]
    for run, title in runs:
        assert (run.conclusion, run.output["title"]) == ("neutral", title)


async def test_a_bad_signature_is_refused_and_nothing_reaches_github(tmp_path, github, github_app, app_private_key):
    async with running_app(tmp_path, github, github_app, app_private_key) as world:
        pr = world.pull()
        payload = github.payload("pull_request", "opened", installation=world.installation, pull=pr)
        status, _ = await github.deliver(world.url + "/webhook", "pull_request", payload, secret="not the secret")
        await settle()
    assert status == 401 and github.calls == []


async def test_a_duplicate_delivery_makes_one_check_run(tmp_path, github, github_app, app_private_key):
    async with running_app(tmp_path, github, github_app, app_private_key) as world:
        pr = world.pull()
        first = await world.opened(pr, delivery_id="d-1")
        await world.completed_run(pr)
        again = await world.opened(pr, delivery_id="d-1")
        await settle()
    assert first[0] == again[0] == 202 and len(world.runs(pr)) == 1


async def test_github_502_then_200_completes(tmp_path, github, github_app, app_private_key):
    async with running_app(tmp_path, github, github_app, app_private_key) as world:
        pr = world.pull()
        github.fail("GET /repos/{owner}/{repo}/compare/{basehead}", status=502, times=1)
        await world.opened(pr)
        run = await world.completed_run(pr)
    assert run.conclusion == "success"
    assert github.count("GET /repos/{owner}/{repo}/compare/{basehead}", status=502) == 1


async def test_a_job_that_finally_fails_completes_its_run_with_the_error(tmp_path, github, github_app, app_private_key):
    async with running_app(tmp_path, github, github_app, app_private_key) as world:
        pr = world.pull()
        github.fail("GET /repos/{owner}/{repo}/git/trees/{tree_sha}", status=404, times=1)
        await world.opened(pr)
        run = await world.completed_run(pr)
    assert run.conclusion == "failure"
    assert run.output["title"] == "Reviewer could not finish: reading the pull request from GitHub"
    assert "404" in run.output["summary"]


async def test_check_suite_requested_for_an_already_reviewed_head_adds_no_run(
        tmp_path, github, github_app, app_private_key):
    async with running_app(tmp_path, github, github_app, app_private_key) as world:
        pr = world.pull()
        await world.opened(pr)
        await world.completed_run(pr)
        suite = github.payload("check_suite", "requested", installation=world.installation, pull=pr)
        status, _ = await world.deliver("check_suite", suite)
        await settle()
        runs = len(world.runs(pr))
        rerequested = github.payload("check_suite", "rerequested", installation=world.installation, pull=pr)
        await world.deliver("check_suite", rerequested)

        async def both_completed() -> bool:
            return len([r for r in world.runs(pr) if r.status == "completed"]) == 2
        await wait_for(both_completed)
    assert status == 202 and runs == 1  # the push's check suite found this head's run already there
    assert [r.conclusion for r in world.runs(pr)] == ["success", "success"]  # a re-run asked by a person runs


async def test_check_suite_requested_for_a_new_head_reviews_it(tmp_path, github, github_app, app_private_key):
    async with running_app(tmp_path, github, github_app, app_private_key) as world:
        pr = world.pull()
        suite = github.payload("check_suite", "requested", installation=world.installation, pull=pr)
        await world.deliver("check_suite", suite)
        run = await world.completed_run(pr)
    assert run.conclusion == "success" and run.output["title"].startswith("Review planned")

