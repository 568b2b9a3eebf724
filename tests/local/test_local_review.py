"""`reviewer review` on a local repository (issue #35): the real command over a real git
repository, the model played by the chat-completions double over loopback. The change's merge base
and head hold different configurations: the merge base's is the one the review follows."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.local.test_local_sarif import upload, validate
from tests.support.chat_double import findings
from tests.support.local_support import AWS_KEY, admin_file, commit, git, listing, new_repo, reviewer
from tests.support.review_support import CALC_BASE, CALC_HEAD, PRIMARY, finding

# The merge base reviews in detail with the primary model; the head's configuration would ignore
# src/ and ask the fallback model instead, were it the one in force.
BASE_CONFIG = "feedback: detailed\n"
HEAD_CONFIG = "feedback: minimal\nignore: ['src/**']\nmodels:\n  review: local/m2\n"
SETTINGS = f'import os\n\nAWS_ACCESS_KEY_ID = "{AWS_KEY}"\n'

BUG = finding(6, "blocking", "bug", "Division by zero when b is 0.", fix="    return a / b if b else 0.0")
DOCS = finding(5, "minor", "docs", "Document what ratio returns.", rules=["docs-required"])
NIT = finding(1, "nit", "style", "Unused import order.")


@pytest.fixture
def repo(tmp_path: Path, monkeypatch) -> Path:
    """main: the configuration and src/calc.py; branch `feature` adds to calc.py, adds a file with a
    cloud key, and changes the configuration. The index is cached under the test's own cache."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("REVIEWER_ADMIN_CONFIG", raising=False)
    path = tmp_path / "app"
    new_repo(path, {".reviewer.yaml": BASE_CONFIG + "rules:\n  - id: docs-required\n    rule: Document functions.\n",
                    "src/calc.py": CALC_BASE, "README.md": "# App\n"})
    git(path, "checkout", "-q", "-b", "feature")
    commit(path, {"src/calc.py": CALC_HEAD, "config/settings.py": SETTINGS, ".reviewer.yaml": HEAD_CONFIG}, "ratio")
    return path


def _review(chat, *items: dict) -> None:
    chat.answer(PRIMARY, findings(*items, usage=(1200, 80)))


async def test_json_follows_the_merge_base_configuration(tmp_path, repo, chat, capsys):
    _review(chat, BUG, DOCS, NIT)
    code, out, err = await reviewer(capsys, "--repo", str(repo), "--base", "main", "--head", "feature",
                                    "--admin-config", admin_file(tmp_path, chat), "--format", "json")
    assert code == 1, err  # a blocking finding, and --fail-on blocking by default
    report = json.loads(out)
    assert (report["base"], report["head"], report["status"]) == ("main", "feature", "completed")
    assert report["headSha"] == git(repo, "rev-parse", "feature")
    assert report["mergeBase"] == git(repo, "rev-parse", "main")
    assert report["findings"] == [
        {"path": "config/settings.py", "startLine": 3, "endLine": 3, "severity": "blocking", "category": "security",
         "message": report["findings"][0]["message"], "source": "analyzer:detect-secrets",
         "rule": "aws-access-key"},
        {"path": "src/calc.py", "startLine": 1, "endLine": 1, "severity": "nit", "category": "style",
         "message": "Unused import order.", "source": "model"},
        {"path": "src/calc.py", "startLine": 5, "endLine": 5, "severity": "minor", "category": "docs",
         "message": "Document what ratio returns.", "source": "model", "rule": "docs-required"},
        {"path": "src/calc.py", "startLine": 6, "endLine": 6, "severity": "blocking", "category": "bug",
         "message": "Division by zero when b is 0.", "source": "model",
         "suggestedFix": "    return a / b if b else 0.0"},
    ]
    assert report["findings"][0]["message"] == (  # the tool's words as the plain text they are
        "AWS Access Key added on line 3: the value is not shown here. Remove it from the change and revoke it: "
        "it stays in the branch's history. (detect-secrets aws-access-key)")
    assert AWS_KEY not in out and AWS_KEY not in err
    # The merge base's configuration: detailed feedback (the nit is there), nothing ignored, the
    # primary model; the head's version is validated and named in the plan, not followed.
    plan = report["plan"]
    assert (plan["feedback"], plan["ignored"], plan["models"]["review"]) == ("detailed", [], f"local/{PRIMARY}")
    assert plan["files"] == [".reviewer.yaml", "config/settings.py", "src/calc.py"]
    assert [r["id"] for r in plan["rules"]] == ["docs-required"]
    assert report["usage"] == {"calls": 1, "promptTokens": 1200, "answerTokens": 80}
    assert len(chat.requests_for(PRIMARY)) == 1 and chat.requests_for("m2") == []


async def test_sarif_lists_every_finding_at_its_level(tmp_path, repo, chat, capsys):
    _review(chat, BUG, DOCS, NIT)
    code, out, _ = await reviewer(capsys, "--repo", str(repo), "--base", "main", "--head", "feature",
                                  "--admin-config", admin_file(tmp_path, chat), "--format", "sarif")
    assert code == 1
    log = json.loads(out)
    validate(log)  # against the SARIF 2.1.0 schema
    assert upload(log).results[0].path == "config/settings.py"  # and read back by a Reviewer server's upload
    [run] = log["runs"]
    assert run["tool"]["driver"]["name"] == "Reviewer"
    got = [(r["ruleId"], r["level"], r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            r["locations"][0]["physicalLocation"]["region"]["startLine"], r["properties"]["source"])
           for r in run["results"]]
    assert got == [("detect-secrets/aws-access-key", "error", "config/settings.py", 3, "analyzer:detect-secrets"),
                   ("reviewer/style", "note", "src/calc.py", 1, "model"),
                   ("reviewer/docs-required", "warning", "src/calc.py", 5, "model"),
                   ("reviewer/bug", "error", "src/calc.py", 6, "model")]
    assert [rule["id"] for rule in run["tool"]["driver"]["rules"]] == [
        "detect-secrets/aws-access-key", "reviewer/style", "reviewer/docs-required", "reviewer/bug"]
    assert [r["ruleIndex"] for r in run["results"]] == [0, 1, 2, 3]


async def test_text_groups_the_findings_by_file_with_their_lines(tmp_path, repo, chat, capsys):
    _review(chat, BUG, DOCS, NIT)
    code, out, _ = await reviewer(capsys, "--repo", str(repo), "--base", "main", "--head", "feature",
                                  "--admin-config", admin_file(tmp_path, chat))
    assert code == 1
    head = git(repo, "rev-parse", "feature")[:7]
    main = git(repo, "rev-parse", "main")[:7]
    assert out.startswith(f"Reviewer: main...feature (merge base {main}, head {head}): 4 findings: 2 blocking, "
                          "1 minor, 1 nit\n\nconfig/settings.py\n  line 3  blocking · security · "
                          "analyzer:detect-secrets aws-access-key\n    AWS Access Key added on line 3")
    calc = out[out.index("\nsrc/calc.py\n"):]
    assert calc.startswith(
        "\nsrc/calc.py\n"
        "  line 1  nit · style · model\n"
        "    Unused import order.\n"
        "      1 | import os\n"
        "  line 5  minor · docs · model docs-required\n"
        "    Document what ratio returns.\n"
        "      5 | def ratio(a, b):\n"
        "  line 6  blocking · bug · model\n"
        "    Division by zero when b is 0.\n"
        "      6 |     return a / b\n"
        "    suggested fix:\n"
        "          return a / b if b else 0.0\n")
    assert f"local/{PRIMARY}: 1 model call, 1,200 prompt tokens, 80 answer tokens" in out
    assert AWS_KEY not in out


async def test_markdown_and_workflow_commands(tmp_path, repo, chat, capsys):
    _review(chat, BUG, DOCS)
    admin = admin_file(tmp_path, chat)
    args = ("--repo", str(repo), "--base", "main", "--head", "feature", "--admin-config", admin)
    code, markdown, _ = await reviewer(capsys, *args, "--format", "markdown")
    assert code == 1
    assert markdown.startswith("## Reviewer: 3 findings: 2 blocking, 1 minor\n")
    # an analyzer's words as Markdown that shows them as they are, as the App posts them
    assert "line 3: AWS Access Key added on line 3\\: the value is not shown here\\. Remove" in markdown
    assert ("### `src/calc.py`\n\n- **minor** · docs · model docs-required — line 5: Document what ratio returns.\n\n"
            "  ```\n  def ratio(a, b):\n  ```\n") in markdown
    code, commands, _ = await reviewer(capsys, *args, "--format", "github")
    assert code == 1
    lines = commands.splitlines()
    assert ("::warning file=src/calc.py,line=5,endLine=5,title=Reviewer%3A minor docs (model docs-required)::"
            "Document what ratio returns.") in lines
    assert ("::error file=src/calc.py,line=6,endLine=6,title=Reviewer%3A blocking bug (model)::"
            "Division by zero when b is 0.") in lines
    assert lines[-1].startswith("Reviewer: main...feature")


@pytest.mark.parametrize(("fail_on", "code"), [("blocking", 0), ("important", 1), ("minor", 1), ("nit", 1),
                                               ("never", 0)])
async def test_fail_on_sets_the_exit_code(tmp_path, repo, chat, capsys, fail_on, code):
    # An important model finding and a minor one; no blocking one (the cloud key is left out of this change).
    commit(repo, {"config/settings.py": None}, "no key")
    _review(chat, finding(6, "important", "bug", "Division by zero when b is 0."), DOCS)
    got, out, err = await reviewer(capsys, "--repo", str(repo), "--base", "main", "--admin-config",
                                   admin_file(tmp_path, chat), "--fail-on", fail_on, "--format", "json")
    assert got == code, err
    assert [f["severity"] for f in json.loads(out)["findings"]] == ["minor", "important"]


@pytest.mark.parametrize("flag", ["--base", "--head"])
async def test_an_unknown_ref_is_one_line_naming_it(tmp_path, repo, capsys, flag):
    code, out, err = await reviewer(capsys, "--repo", str(repo), flag, "no-such-branch")
    assert code == 2 and out == ""
    assert err == f"reviewer review: 'no-such-branch' does not name a commit in {repo}\n"


async def test_outside_a_git_repository_is_a_usage_error(tmp_path, capsys):
    (tmp_path / "plain").mkdir()
    code, out, err = await reviewer(capsys, "--repo", str(tmp_path / "plain"))
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "not a git repository" in err and "Traceback" not in err


async def test_an_invalid_configuration_at_the_merge_base_fails(tmp_path, repo, chat, capsys):
    git(repo, "checkout", "-q", "main")
    commit(repo, {".reviewer.yaml": "feedback: loud\n"}, "a bad value")
    git(repo, "checkout", "-q", "-b", "fix")
    commit(repo, {"src/calc.py": CALC_HEAD}, "ratio")
    code, out, _ = await reviewer(capsys, "--repo", str(repo), "--base", "main", "--admin-config",
                                  admin_file(tmp_path, chat), "--format", "json", "--fail-on", "never")
    assert code == 1
    report = json.loads(out)
    assert (report["status"], report["findings"], chat.requests) == ("skipped", [], [])
    assert [(e["path"], e["code"], e["source"]) for e in report["plan"]["errors"]] == [
        (".reviewer.yaml", "enum", "merge-base")]


async def test_nothing_is_written_into_the_repository_or_the_working_directory(tmp_path, repo, chat, capsys,
                                                                              monkeypatch):
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    _review(chat, BUG)
    admin = admin_file(tmp_path, chat)

    def status() -> str:
        return subprocess.run(["git", "-C", str(repo), "--no-optional-locks", "status", "--porcelain", "--ignored"],
                              check=True, capture_output=True, text=True).stdout

    before, listed = status(), listing(repo, work)
    for form in ("text", "json", "sarif", "github", "markdown"):
        code, out, err = await reviewer(capsys, "--repo", str(repo), "--base", "main", "--head", "feature",
                                        "--admin-config", admin, "--format", form)
        assert code == 1, err
        assert AWS_KEY not in out and AWS_KEY not in err  # the secret's line is shown in no format
    assert status() == before
    assert listing(repo, work) == listed
    cached = list((tmp_path / "cache" / "reviewer" / "index").glob("*.sqlite3"))
    assert len(cached) == 1  # the index, kept between runs outside the repository


async def test_without_an_admin_file_only_the_analyzers_run(tmp_path, repo, capsys):
    code, out, _ = await reviewer(capsys, "--repo", str(repo), "--base", "main", "--head", "feature",
                                  "--format", "json")
    assert code == 1  # the cloud key is blocking
    report = json.loads(out)
    assert report["status"] == "analyzers-only"
    assert "REVIEWER_ADMIN_CONFIG" in report["reason"]
    assert [f["source"] for f in report["findings"]] == ["analyzer:detect-secrets"]
    assert report["usage"] == {"calls": 0, "promptTokens": 0, "answerTokens": 0}


async def test_the_default_base_is_the_default_branch(tmp_path, repo, capsys):
    # A clone knows its origin's default branch (origin/HEAD); a repository without one has main,
    # else master.
    clone = tmp_path / "clone"
    git(repo, "checkout", "-q", "main")  # the origin's default branch
    git(tmp_path, "clone", "-q", "--branch", "feature", str(repo), str(clone))
    code, out, _ = await reviewer(capsys, "--repo", str(clone), "--format", "json", "--fail-on", "never")
    assert code == 0 and json.loads(out)["base"] == "origin/HEAD"
    assert json.loads(out)["mergeBase"] == git(repo, "rev-parse", "main")
    old = tmp_path / "old"
    new_repo(old, {"a.py": "A = 1\n"}, branch="master")
    git(old, "checkout", "-q", "-b", "topic")
    commit(old, {"a.py": "A = 2\n"}, "change")
    code, out, _ = await reviewer(capsys, "--repo", str(old), "--format", "json")
    assert code == 0 and json.loads(out)["base"] == "master"
    git(old, "branch", "-q", "-m", "master", "trunk")
    code, out, err = await reviewer(capsys, "--repo", str(old))
    assert code == 2 and out == ""
    assert err == f"reviewer review: no base to compare with: none of origin/HEAD, main, master names a commit in " \
                  f"{old}; give --base REF\n"


async def test_a_finding_outside_the_diff_is_listed_and_decides_nothing(tmp_path, repo, chat, capsys):
    commit(repo, {"config/settings.py": None}, "no key")
    _review(chat, finding(1, "blocking", "docs", "The README names no maintainer.", path="README.md"), DOCS)
    code, out, err = await reviewer(capsys, "--repo", str(repo), "--base", "main", "--admin-config",
                                    admin_file(tmp_path, chat))
    assert code == 0, err  # blocking, but about lines the change does not show: as on a pull request
    assert "README.md\n  line 1  blocking · docs · model, outside the diff\n" in out


# A user's git settings that change what porcelain git prints: signatures before a log line,
# another log encoding, colour, a diff without a/ b/ prefixes or with mnemonic ones, blank context
# lines printed empty, hunks joined or reshaped, a text conversion of every Python file.
HOSTILE_GIT = """\
[log]
\tshowSignature = true
[gpg]
\tprogram = false
[i18n]
\tlogOutputEncoding = ISO-8859-1
[color]
\tui = always
[diff]
\tnoprefix = true
\tmnemonicPrefix = true
\tsuppressBlankEmpty = true
\tinterHunkContext = 30
\tcontext = 9
\talgorithm = patience
[diff "shout"]
\ttextconv = sed -e s/return/RETURN/
[core]
\tquotePath = true
"""


async def test_a_users_git_settings_change_nothing_the_review_reads(tmp_path, repo, chat, capsys):
    _review(chat, BUG, DOCS)
    admin = admin_file(tmp_path, chat)
    args = ("--repo", str(repo), "--base", "main", "--head", "feature", "--admin-config", admin, "--format", "json")
    _, plain, _ = await reviewer(capsys, *args)
    with (repo / ".git" / "config").open("a") as config:
        config.write(HOSTILE_GIT)
    (repo / ".git" / "info").mkdir(exist_ok=True)
    (repo / ".git" / "info" / "attributes").write_text("*.py diff=shout\n")
    shown = git(repo, "diff", "main", "feature", "--", "src/calc.py")  # what the settings do to porcelain git
    assert shown.startswith("\x1b[1mdiff --git src/calc.py") and "RETURN" in shown
    _, hostile, err = await reviewer(capsys, *args)
    assert json.loads(hostile) == json.loads(plain), err
    asked = [r.body["messages"] for r in chat.requests_for(PRIMARY)]
    assert len(asked) == 2 and asked[1] == asked[0]  # the model was shown the very same change
