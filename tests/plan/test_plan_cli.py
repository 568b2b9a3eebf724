"""`reviewer plan` against real temporary git repositories."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from bot.commands.cli import main

CONFIG = """\
ignore: ["vendor/**"]
rules:
  - id: app
    rule: Check the app.
    paths: ["src/**"]
  - id: style
    file: STYLE.md
  - id: docs
    rule: Docs are plain English.
    paths: ["docs/**"]
    whenExpr: 'pr.author == "Ann Dev" && pr.event == "manual" && pr.number == 0'
context:
  - path: ARCH.md
    description: How the app is built
    paths: ["src/**"]
"""


class Repo:
    def __init__(self, path: Path) -> None:
        self.path = path
        path.mkdir(parents=True)
        self.git("init", "-q", "-b", "main")
        self.git("config", "user.email", "ann@example.com")
        self.git("config", "user.name", "Ann Dev")

    def git(self, *args: str) -> str:
        return subprocess.run(["git", "-C", str(self.path), *args], check=True, capture_output=True,
                              text=True).stdout

    def commit(self, message: str, files: dict[str, str | None]) -> None:
        for name, text in files.items():
            target = self.path / name
            if text is None:
                target.unlink()
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(text)
        self.git("add", "-A")
        self.git("commit", "-q", "-m", message)


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    """main: a configured repository; branch `feature`: one commit that changes, renames, deletes."""
    repo = Repo(tmp_path / "repo")
    repo.commit("init", {".reviewer.yaml": CONFIG, "src/app.py": "x = 1\n", "docs/guide.md": "# Guide\n",
                         "vendor/lib.js": "v\n", "STYLE.md": "style\n", "ARCH.md": "arch\n", "AGENTS.md": "a\n",
                         "src/CLAUDE.md": "c\n", "old.txt": "old\n"})
    repo.git("checkout", "-q", "-b", "feature")
    return repo


def plan(capsys, repo: Repo, *extra: str, code: int = 0) -> dict:
    assert main(["plan", "--repo", str(repo.path), "--base", "main", "--format", "json", *extra]) == code
    return json.loads(capsys.readouterr().out)


def change(repo: Repo, files: dict[str, str | None] | None = None, message: str = "fix: guard\n\nBody.") -> None:
    repo.commit(message, files or {"src/app.py": "x = 2\n", "vendor/lib.js": "w\n", "old.txt": None,
                                   "docs/guide.md": None, "docs/manual.md": "# Guide\n"})


def test_plan_of_a_branch(capsys, repo: Repo) -> None:
    change(repo)
    result = plan(capsys, repo)
    assert result["decision"] == "review"
    assert sorted(result["files"]) == ["docs/manual.md", "old.txt", "src/app.py"]  # deleted counts, renamed new
    assert result["ignored"] == ["vendor/lib.js"]
    assert [(r["id"], r["matchedPaths"]) for r in result["rules"]] == [
        ("app", ["src/app.py"]), ("style", result["files"]), ("docs", ["docs/manual.md"])]
    assert result["context"][0]["matchedPaths"] == ["src/app.py"]
    assert result["agentFiles"] == ["AGENTS.md", "src/CLAUDE.md"]
    assert result["errors"] == []


def test_text_form_says_what_why_and_what_not(capsys, repo: Repo) -> None:
    change(repo, {"docs/guide.md": "# Guide 2\n"})
    assert main(["plan", "--repo", str(repo.path), "--base", "main"]) == 0
    text = capsys.readouterr().out
    assert "Decision: review — 1 file, 2 rules, 0 context files" in text
    assert ('docs [repository] "Docs are plain English." — paths match 1 file: docs/guide.md; '
            "whenExpr is true") in text
    assert "rule `app` (repository): its paths match none of the files to review" in text
    assert "context `ARCH.md` (repository): its paths match none of the files to review" in text


def test_text_form_of_a_skip_says_why(capsys, repo: Repo) -> None:
    change(repo, {"vendor/lib.js": "only this\n"})
    assert main(["plan", "--repo", str(repo.path), "--base", "main"]) == 0
    text = capsys.readouterr().out
    assert "Decision: skip (ignored-only) — no changed path is left to review" in text
    assert "Ignored (1):\n  vendor/lib.js" in text and "- Every changed path is ignored." in text


def test_offline_pr_comes_from_the_head_commit(capsys, repo: Repo) -> None:
    repo.git("config", "user.name", "Bob Other")
    change(repo, {"docs/guide.md": "# Guide 2\n"})
    assert [r["id"] for r in plan(capsys, repo)["rules"]] == ["style"]  # docs' whenExpr names Ann


def test_a_changed_config_is_planned_with_the_merge_base_version(capsys, repo: Repo) -> None:
    change(repo, {".reviewer.yaml": CONFIG.replace("ignore:", "ignores:") + "  - path: GONE.md\n"
                                                                            "    description: gone\n",
                  "src/app.py": "x = 3\n"})
    result = plan(capsys, repo)
    assert result["decision"] == "review" and result["ignored"] == []
    assert [r["id"] for r in result["rules"]] == ["app", "style"]
    assert [(e["source"], e["code"], e["line"], e["pointer"]) for e in result["errors"]] == [
        ("head", "unknown-property", 1, "/ignores")]
    fixed = CONFIG + "  - path: GONE.md\n    description: gone\n"
    change(repo, {".reviewer.yaml": fixed})
    missing = plan(capsys, repo)["errors"]
    assert [(e["source"], e["code"], e["line"], e["pointer"]) for e in missing] == [
        ("head", "missing-file", 16, "/context/1/path")]
    assert "`GONE.md`, which does not exist in the pull request's head" in missing[0]["message"]


def test_the_base_branch_moving_on_leaves_the_plan_at_the_merge_base(capsys, repo: Repo) -> None:
    """After the fork, main changes `.reviewer.yaml` (another rule, `src/**` ignored, a file the
    old config names deleted) and the files: the plan still uses the fork point's configuration,
    its tree and only the branch's own changes, as the app does at the pull request's merge base."""
    change(repo, {"src/app.py": "x = 7\n", "docs/guide.md": "# Guide 7\n"})
    fork = repo.git("merge-base", "main", "feature").strip()
    repo.git("checkout", "-q", "main")
    repo.commit("main moves on", {".reviewer.yaml": "ignore: ['src/**']\nrules:\n  - id: later\n    rule: New.\n",
                                  "STYLE.md": None, "src/other.py": "y = 1\n"})
    repo.git("checkout", "-q", "feature")
    result = plan(capsys, repo)
    assert result["decision"] == "review" and result["errors"] == []
    assert result["files"] == ["docs/guide.md", "src/app.py"] and result["ignored"] == []
    assert [r["id"] for r in result["rules"]] == ["app", "style", "docs"]
    assert main(["plan", "--repo", str(repo.path), "--base", "main"]) == 0
    assert f"onto main, merge base {fork[:7]}" in capsys.readouterr().out


def test_adding_a_second_config_file_is_a_head_error(capsys, repo: Repo) -> None:
    change(repo, {".reviewer.yml": "approve: true\n", "src/app.py": "x = 5\n"})
    result = plan(capsys, repo)
    assert result["decision"] == "review" and result["approve"] is False
    assert [(e["path"], e["source"], e["code"]) for e in result["errors"]] == [
        (".reviewer.yml", "head", "both-config-files")]


def test_invalid_config_at_the_merge_base(capsys, tmp_path: Path) -> None:
    repo = Repo(tmp_path / "bad")
    repo.commit("init", {".reviewer.yaml": "feedback: loud\nrules:\n  - id: x\n    file: NOPE.md\n", "a.py": "1\n"})
    repo.git("checkout", "-q", "-b", "feature")
    change(repo, {"a.py": "2\n"})
    result = plan(capsys, repo)
    assert result["skipReason"] == "invalid-config"
    errors = [(e["code"], e["line"], e["column"], e["source"]) for e in result["errors"]]
    assert errors == [("enum", 1, 11, "merge-base")]


def test_missing_referenced_file_is_an_error_at_its_line(capsys, tmp_path: Path) -> None:
    repo = Repo(tmp_path / "missing")
    repo.commit("init", {".reviewer.yaml": "rules:\n  - id: x\n    file: NOPE.md\n", "a.py": "1\n"})
    repo.git("checkout", "-q", "-b", "feature")
    change(repo, {"a.py": "2\n"})
    result = plan(capsys, repo)
    assert result["skipReason"] == "invalid-config"
    assert [(e["path"], e["code"], e["line"], e["column"], e["pointer"]) for e in result["errors"]] == [
        (".reviewer.yaml", "missing-file", 3, 11, "/rules/0/file")]


def test_both_config_files(capsys, repo: Repo) -> None:
    repo.git("checkout", "-q", "main")
    repo.commit("second config", {".reviewer.yml": "approve: true\n"})
    repo.git("checkout", "-q", "-b", "other")
    change(repo, {"src/app.py": "x = 9\n"})
    result = plan(capsys, repo)
    assert result["skipReason"] == "invalid-config"
    assert [(e["path"], e["code"]) for e in result["errors"]] == [(".reviewer.yml", "both-config-files")]


def test_pr_file_gives_title_labels_and_draft(capsys, repo: Repo, tmp_path: Path) -> None:
    repo.git("checkout", "-q", "main")
    repo.commit("filter", {".reviewer.yaml": "filterExpr: '!pr.draft && pr.number == 42'\n" + CONFIG})
    repo.git("checkout", "-q", "-b", "pr42")
    change(repo, {"src/app.py": "x = 42\n"})
    pull = {"number": 42, "title": "Add x", "draft": True, "labels": [{"name": "wip", "color": "ffffff"}],
            "user": {"login": "octocat"}, "head": {"ref": "pr42", "sha": "0" * 40}, "base": {"ref": "main"}}
    (tmp_path / "pr.json").write_text(json.dumps(pull))
    assert plan(capsys, repo, "--pr", str(tmp_path / "pr.json"))["skipReason"] == "filtered"
    (tmp_path / "pr.json").write_text(json.dumps({"pull_request": {**pull, "draft": False}}))
    assert plan(capsys, repo, "--pr", str(tmp_path / "pr.json"))["decision"] == "review"
    assert plan(capsys, repo)["skipReason"] == "filtered"  # from git: number 0


ADMIN = """\
providers:
  p: {type: openai, baseUrl: 'https://p.example/v1'}
defaults:
  models: {review: p/big}
  rules:
    - id: house
      file: HOUSE.md
accounts:
  octo:
    disabledRepositories: ['app']
"""


def test_admin_config_and_full_name(capsys, repo: Repo, tmp_path: Path) -> None:
    change(repo)
    admin = tmp_path / "admin.yaml"
    admin.write_text(ADMIN)
    result = plan(capsys, repo, "--admin-config", str(admin), "--full-name", "octo/web")
    assert result["models"]["review"] == "p/big" and [r["id"] for r in result["rules"]] == ["app", "style", "docs"]
    assert result["notes"][0].startswith(f"The rule `house` of the instance configuration ({admin}:7) is left out")
    assert plan(capsys, repo, "--admin-config", str(admin), "--full-name", "octo/app")["skipReason"] == "disabled"
    repo.git("remote", "add", "origin", "git@github.com:octo/app.git")
    assert plan(capsys, repo, "--admin-config", str(admin))["skipReason"] == "disabled"


def test_default_base_is_origin_head_else_main(capsys, repo: Repo) -> None:
    change(repo)
    assert main(["plan", "--repo", str(repo.path), "--format", "json"]) == 0
    assert len(json.loads(capsys.readouterr().out)["files"]) == 3


@pytest.mark.parametrize("args", [
    ["--base", "no-such-branch"], ["--head=--output=x"], ["--admin-config", "/nonexistent/admin.yaml"],
    ["--pr", "/nonexistent/pr.json"],
])
def test_usage_and_git_errors_exit_2(capsys, repo: Repo, args: list[str]) -> None:
    change(repo)
    assert main(["plan", "--repo", str(repo.path), *args]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.startswith("reviewer plan: ")


def test_not_a_repository_and_bad_inputs_exit_2(capsys, repo: Repo, tmp_path: Path) -> None:
    change(repo)
    assert main(["plan", "--repo", str(tmp_path / "nowhere")]) == 2
    (tmp_path / "plain").mkdir()
    assert main(["plan", "--repo", str(tmp_path / "plain")]) == 2
    (tmp_path / "admin.yaml").write_text("providers: 3\n")
    assert main(["plan", "--repo", str(repo.path), "--admin-config", str(tmp_path / "admin.yaml")]) == 2
    assert "admin.yaml:1:12: type:" in capsys.readouterr().err
    (tmp_path / "pr.json").write_text("[1, 2]")
    assert main(["plan", "--repo", str(repo.path), "--pr", str(tmp_path / "pr.json")]) == 2
    assert "not a GitHub pull request object" in capsys.readouterr().err


@pytest.mark.parametrize("text, words", [
    ("[" * 100_000 + "]" * 100_000, "deeper than 64 levels"),
    ('{"number": ' + "9" * 5000 + "}", "`number`: the integer has 5000 digits"),
    ("{not json", "not valid JSON"),
])
def test_a_hostile_pr_file_is_a_usage_error_not_a_traceback(capsys, repo: Repo, tmp_path: Path, text, words) -> None:
    change(repo)
    (tmp_path / "pr.json").write_text(text)
    assert main(["plan", "--repo", str(repo.path), "--pr", str(tmp_path / "pr.json")]) == 2
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err


def test_console_script(repo: Repo) -> None:
    change(repo)
    script = Path(__file__).resolve().parent.parent.parent / ".venv" / "bin" / "reviewer"
    done = subprocess.run([str(script), "plan", "--repo", str(repo.path), "--base", "main", "--format", "json"],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["decision"] == "review"
