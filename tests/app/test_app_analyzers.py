"""Analyzers end to end (issue #23): SARIF from real tools uploaded to the app over real HTTP, and
the built-in secret scanning, against the GitHub double.

ruff's SARIF is made here by the real ruff (`--output-format sarif`) on a fixture; semgrep's and
CodeQL's are the published-format samples in tests/data/analyzers (written by hand in those tools'
SARIF shape: see its README). Each round-trips to comments at the right lines of a review of the
analyzers' own; a re-upload posts nothing; a cloud key added by a pull request gets a blocking
finding that shows the key nowhere (GitHub's bodies, the logs, the store); hostile uploads are
refused with a 4xx naming the problem, and store nothing.
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import aiohttp
import pytest

from bot.analyzers.upload import MAX_BODY_BYTES
from tests.support.analyzers_support import encode, gzip_bomb, load, log, result, ruff_sarif
from tests.support.app_support import World, running_app, settle
from tests.support.server_support import wait_for

TOKEN = "analyses-admin-token-for-tests-0123456789abcdef"
RUFF = shutil.which("ruff", path=str(Path(sys.executable).parent))
AWS_KEY = "AKIA" + "Q3EGRT5JXMPLVW4Z"  # split: this file must not hold the key whole for scanners
VIEWS = "\n".join([
    "import sqlite3",                                              # 1
    "import requests",                                             # 2
    "",                                                            # 3
    "",                                                            # 4
    "def connect():",                                              # 5
    "    return sqlite3.connect('app.db')",                        # 6
    "",                                                            # 7
    "",                                                            # 8
    "def find(name):",                                             # 9
    "    db = connect()",                                          # 10
    "    query = \"SELECT * FROM users WHERE name = '%s'\" % name",  # 11
    "    return db.execute(query).fetchall()",                     # 12
    "def fetch(url):",                                             # 13
    "    resp = requests.get(url)",                                # 14
    "    return resp.text",                                        # 15
    "",                                                            # 16
    "",                                                            # 17
    "def calc(expr):",                                             # 18
    "    # evaluates what the user typed",                         # 19
    "    return eval(expr)",                                       # 20
]) + "\n"
TOOL_PY = "import os\nimport sys\n\nprint(sys.argv)\n"


async def _upload(world: World, document: object, sha: str, *, token: str | None = TOKEN,
                  ref: str = "refs/heads/feature", **fields: object) -> tuple[int, dict]:
    body = {"commit_sha": sha, "ref": ref, "sarif": encode(document), **fields}
    return await _post(world, body, token=token)


async def _post(world: World, body: object, *, token: str | None = TOKEN, repo: str = "octo-org/example",
                raw: bytes | None = None) -> tuple[int, dict]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    url = f"{world.url}/v1/repos/{repo}/code-scanning/sarifs"
    async with aiohttp.ClientSession() as http:
        data = raw if raw is not None else json.dumps(body).encode()
        async with http.post(url, data=data, headers={**headers, "Content-Type": "application/json"}) as response:
            return response.status, await response.json()


async def _status(world: World, upload_id: str) -> dict:
    async with aiohttp.ClientSession() as http, http.get(
            f"{world.url}/v1/repos/octo-org/example/code-scanning/sarifs/{upload_id}",
            headers={"Authorization": f"Bearer {TOKEN}"}) as response:
        assert response.status == 200
        return await response.json()


async def _complete(world: World, upload_id: str) -> dict:
    async def done() -> dict | None:
        answer = await _status(world, upload_id)
        return answer if answer["processing_status"] != "pending" else None
    return await wait_for(done, 20)


def _analyzer_reviews(pr) -> list:
    """The app's reviews carrying findings: the review job's one review (no model here: the
    analyzers' findings are the review), and an upload's."""
    return [r for r in pr.reviews if "**Reviewer**" in r.body and r.state == "COMMENTED"]


def _comments(pr) -> set[tuple[str, int, str]]:
    """(path, line, rule) of each analyzer comment: its first line names the tool and the rule."""
    out = set()
    for review in _analyzer_reviews(pr):
        for comment in review.comments:
            head = comment.body.splitlines()[0]
            out.add((comment.path, comment.line, head.split("`")[-2]))
    return out


@pytest.mark.skipif(RUFF is None, reason="ruff is installed with the project's dev dependencies")
async def test_real_tools_sarif_round_trips_to_the_right_lines_and_a_reupload_posts_nothing(
        tmp_path, github, github_app, app_private_key):
    work = tmp_path / "checkout"
    work.mkdir()
    ruff = ruff_sarif(work, {"src/tool.py": TOOL_PY}, str(RUFF))
    async with running_app(tmp_path, github, github_app, app_private_key, REVIEWER_ADMIN_TOKEN=TOKEN) as world:
        # `feedback: detailed` puts nits inline too (semgrep's use-timeout is a note: a nit).
        pr = world.pull({".reviewer.yaml": "feedback: detailed\n"}, {"app/views.py": VIEWS, "src/tool.py": TOOL_PY})
        # Uploaded before the app hears of the pull request: kept, pending, taken up when it opens.
        status, answer = await _upload(world, ruff, pr.head_sha, checkout_uri=work.as_uri())
        assert status == 202 and answer["url"].endswith(f"/code-scanning/sarifs/{answer['id']}")
        assert await _status(world, answer["id"]) == {"processing_status": "pending", "errors": []}
        await world.opened(pr)
        run = await world.completed_run(pr)
        assert (await _complete(world, answer["id"]))["processing_status"] == "complete"
        assert _comments(pr) == {("src/tool.py", 1, "F401")}
        # The tool's words as the text they are: plain in the run's annotation, escaped in Markdown.
        [note] = [a["message"] for a in run.annotations if a["path"] == "src/tool.py"]
        assert note == "`os` imported but unused (ruff F401)"
        [comment] = [c.body for r in _analyzer_reviews(pr) for c in r.comments]
        assert "\\`os\\` imported but unused" in comment

        # Now the app knows the pull request: an upload queues a job of its own.
        semgrep, codeql = load("semgrep.sarif"), load("codeql-python.sarif")
        for document in (semgrep, codeql):
            status, answer = await _upload(world, document, pr.head_sha)
            assert status == 202
            await _complete(world, answer["id"])
        comments = _comments(pr)
        assert comments == {
            ("src/tool.py", 1, "F401"),
            ("app/views.py", 20, "python.lang.security.audit.eval-detected.eval-detected"),
            ("app/views.py", 14, "python.requests.best-practice.use-timeout.use-timeout"),
            ("app/views.py", 12, "py/sql-injection"),
            ("app/views.py", 20, "py/code-injection"),
        }  # CodeQL's app/util.py is not in the pull request: dropped
        timeout = next(c for r in _analyzer_reviews(pr) for c in r.comments if c.line == 14)
        assert "```suggestion\n    resp = requests.get(url, timeout=10)\n```" in timeout.body
        posted = len(_analyzer_reviews(pr))

        # The same files again (a re-run of CI): nothing new is posted.
        for document in (ruff, semgrep, codeql):
            extra = {"checkout_uri": work.as_uri()} if document is ruff else {}
            status, answer = await _upload(world, document, pr.head_sha, **extra)
            assert status == 202
            assert (await _complete(world, answer["id"]))["errors"] == []
        await settle()
        assert len(_analyzer_reviews(pr)) == posted and _comments(pr) == comments


async def test_a_cloud_key_gets_a_blocking_finding_that_never_shows_the_key(
        tmp_path, github, github_app, app_private_key, caplog, capsys):
    caplog.set_level(logging.DEBUG)
    settings = f"import os\n\nAWS_ACCESS_KEY_ID = \"{AWS_KEY}\"\nREGION = os.environ['REGION']\n"
    async with running_app(tmp_path, github, github_app, app_private_key, REVIEWER_ADMIN_TOKEN=TOKEN) as world:
        pr = world.pull(head={"config/settings.py": settings})
        await world.opened(pr)
        run = await world.completed_run(pr)
        reviews = _analyzer_reviews(pr)
        assert [(c.path, c.line) for r in reviews for c in r.comments] == [("config/settings.py", 3)]
        comment = reviews[0].comments[0]
        assert comment.body.startswith("**blocking** · security · `detect-secrets` `aws-access-key`")
        assert "AWS Access Key added on line 3" in comment.body
        # No model is declared: the analyzers' finding decides the check run.
        assert run.conclusion == "failure" and "1 blocking" in run.output["title"]
        seen = [run.output.get("title"), run.output.get("summary"), run.output.get("text"),
                json.dumps(run.annotations), *(r.body for r in pr.reviews),
                *(c.body for r in pr.reviews for c in r.comments), *(c.body for c in pr.comments)]
        # a second delivery of the same head posts nothing again
        await world.opened(pr, action="synchronize")
        await wait_for(lambda: _two_runs(world, pr), 20)
        assert len(_analyzer_reviews(pr)) == 1
    assert all(AWS_KEY not in (text or "") for text in seen)
    assert AWS_KEY not in caplog.text
    out = capsys.readouterr()
    assert AWS_KEY not in out.out and AWS_KEY not in out.err
    for stored in tmp_path.glob("reviewer.db*"):
        assert AWS_KEY.encode() not in stored.read_bytes(), stored.name


async def _two_runs(world: World, pr) -> bool:
    return len([r for r in world.runs(pr) if r.status == "completed"]) >= 2


def _gzip_bomb() -> str:
    return base64.b64encode(gzip_bomb(101 * 1024 * 1024, b" ")).decode()


async def test_hostile_uploads_are_refused_naming_the_problem_and_store_nothing(
        tmp_path, github, github_app, app_private_key):
    good = {"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "t"}}, "results": []}]}
    sha = "ab" * 20
    outside = {"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "t"}}, "results": [
        {"ruleId": "R", "message": {"text": "m"}, "locations": [{"physicalLocation": {
            "artifactLocation": {"uri": "../../etc/passwd"}, "region": {"startLine": 1}}}]}]}]}
    many = {"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "t"}}, "results": [
        {"ruleId": "R", "message": {"text": "m"}}] * 100_000}]}
    async with running_app(tmp_path, github, github_app, app_private_key, REVIEWER_ADMIN_TOKEN=TOKEN) as world:
        assert (await _upload(world, good, sha, token=None))[0] == 401
        assert (await _upload(world, good, sha, token="wrong"))[0] == 401
        cases = [
            ({"commit_sha": sha, "ref": "refs/heads/x", "sarif": "%%% not base64 %%%"}, 400, "not-base64"),
            ({"commit_sha": sha, "ref": "refs/heads/x", "sarif": base64.b64encode(b"{}").decode()}, 400, "not-gzip"),
            ({"commit_sha": sha, "ref": "refs/heads/x", "sarif": _gzip_bomb()}, 413, "too-large"),
            ({"commit_sha": sha, "ref": "refs/heads/x", "sarif": encode({"version": "2.0.0", "runs": []})}, 400, None),
            ({"commit_sha": sha, "ref": "refs/heads/x", "sarif": encode(many)}, 400, None),
            ({"commit_sha": sha, "ref": "refs/heads/x", "sarif": encode(outside)}, 400, None),
            ({"commit_sha": "nothex", "ref": "refs/heads/x", "sarif": encode(good)}, 400, "pattern"),
        ]
        for body, status, code in cases:
            got, answer = await _post(world, body)
            assert got == status, (answer, body.get("commit_sha"))
            assert answer["message"].startswith("the SARIF upload is refused: ")
            if code is not None:
                assert answer["errors"][0]["code"] == code
        got, answer = await _post(world, {}, raw=b" " * (MAX_BODY_BYTES + 1))
        assert got == 413 and answer["errors"][0]["code"] == "too-large"
        got, answer = await _post(world, {}, raw=b"[1, 2")
        assert got == 400 and answer["errors"][0]["code"] == "not-json"
        got, answer = await _post(world, {"commit_sha": sha, "ref": "refs/heads/x", "sarif": encode(good)},
                                  repo="someone/unknown")
        assert got == 404 and "not installed on someone/unknown" in answer["message"]
        async with aiohttp.ClientSession() as http, http.get(
                f"{world.url}/v1/repos/octo-org/example/code-scanning/sarifs/{'0' * 32}",
                headers={"Authorization": f"Bearer {TOKEN}"}) as response:
            assert response.status == 404
    with sqlite3.connect(tmp_path / "reviewer.db") as conn:
        assert conn.execute("SELECT count(*) FROM sarif_uploads").fetchone()[0] == 0


async def test_reviewer_upload_sarif_converts_checkstyle_and_the_app_posts_it(tmp_path, github, github_app,
                                                                             app_private_key):
    root = Path(__file__).resolve().parent.parent.parent
    (tmp_path / "checkstyle.xml").write_text('<checkstyle><file name="src/app.py"><error line="2" severity="error" '
                                             'message="Operands are swapped" source="lint.Swap"/></file></checkstyle>')
    async with running_app(tmp_path, github, github_app, app_private_key, REVIEWER_ADMIN_TOKEN=TOKEN) as world:
        pr = world.pull()  # changes line 2 of src/app.py
        await world.opened(pr)
        await world.completed_run(pr)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("REVIEWER_", "GITHUB_"))}
        env.update(PYTHONPATH=str(root), REVIEWER_TOKEN=TOKEN, XDG_CONFIG_HOME=str(tmp_path / "no-config"))
        done = await asyncio.to_thread(subprocess.run, [
            sys.executable, "-m", "bot", "upload-sarif", "checkstyle.xml", "--format", "checkstyle",
            "--repo", "octo-org/example", "--commit", pr.head_sha, "--ref", f"refs/pull/{pr.number}/head",
            "--server", world.url], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        upload_id = done.stdout.split("id ")[1].split(",")[0]
        await _complete(world, upload_id)
    assert _comments(pr) == {("src/app.py", 2, "lint.Swap")}
    [comment] = [c for r in _analyzer_reviews(pr) for c in r.comments]
    assert comment.body.startswith("**important** · other · `checkstyle` `lint.Swap`")


async def test_an_upload_naming_the_repository_in_another_case_reaches_its_pull_request(
        tmp_path, github, github_app, app_private_key):
    """GitHub's names are case-insensitive, and so are the grant and the installation lookup: an
    upload to `OCTO-ORG/Example` is for `octo-org/example`. It is kept under the name the
    installation events gave, so that the pull request's next review takes it up (it was left
    pending), and a re-upload in either case posts nothing twice (the pull request's ledger and
    pause are by that name)."""
    document = log(result("src/app.py", 2))
    async with running_app(tmp_path, github, github_app, app_private_key, REVIEWER_ADMIN_TOKEN=TOKEN) as world:
        status, _ = await world.deliver("installation", world.github.payload("installation", "created",
                                                                             installation=world.installation))
        assert status == 202
        await wait_for(lambda: _installation_done(world), 20)  # its repositories are recorded
        pr = world.pull()  # changes line 2 of src/app.py
        body = {"commit_sha": pr.head_sha, "ref": "refs/heads/feature", "sarif": encode(document)}
        status, first = await _post(world, body, repo="OCTO-ORG/Example")
        assert status == 202
        await world.opened(pr)
        await world.completed_run(pr)
        assert (await _complete_at(first["url"]))["processing_status"] == "complete"
        assert "/v1/repos/octo-org/example/" in first["url"]  # the name the installation events gave
        shouted = first["url"].replace("octo-org/example", "OCTO-ORG/Example")
        assert (await _complete_at(shouted))["processing_status"] == "complete"  # asked in the uploader's case
        assert _comments(pr) == {("src/app.py", 2, "R1")}
        status, again = await _post(world, {**body, "ref": f"refs/pull/{pr.number}/head"}, repo="Octo-Org/EXAMPLE")
        assert status == 202
        await _complete_at(again["url"])
        await settle()
    assert len(_analyzer_reviews(pr)) == 1


async def _installation_done(world: World) -> bool:
    async with aiohttp.ClientSession() as http, http.get(world.url + "/metrics") as response:
        return 'reviewer_jobs_total{event="installation",outcome="done"} 1' in await response.text()


async def _complete_at(url: str) -> dict:
    """The upload's status at the address its answer gave, once it is no longer pending."""
    async def done() -> dict | None:
        async with aiohttp.ClientSession() as http, http.get(url, headers={"Authorization": f"Bearer {TOKEN}"}) \
                as response:
            assert response.status == 200
            answer = await response.json()
        return answer if answer["processing_status"] != "pending" else None
    return await wait_for(done, 20)
