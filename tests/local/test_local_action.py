"""The GitHub Action (action.yml) and the pre-push hook (.pre-commit-hooks.yaml) that run
`reviewer review`: their metadata is what GitHub and pre-commit take, the action's inputs reach its
scripts only through the environment, its fetch step gives a shallow checkout the pull request's
history, and the workflow docs/ci.md shows is a valid workflow that uses the action."""

from __future__ import annotations

import re
import subprocess
from importlib import resources
from pathlib import Path

import jsonschema
import pytest
from ruamel.yaml import YAML

from tests.support.local_support import commit, git, new_repo

ROOT = Path(__file__).resolve().parent.parent.parent


def _yaml(text: str) -> object:
    return YAML(typ="safe").load(text)


def _vendored(name: str) -> dict:
    import json
    return json.loads(resources.files("check_jsonschema.builtin_schemas.vendor").joinpath(name).read_text())


ACTION = _yaml((ROOT / "action.yml").read_text())


def test_the_action_is_valid_action_metadata():
    jsonschema.Draft7Validator(_vendored("github-actions.json")).validate(ACTION)


def test_the_schema_check_can_fail():
    broken = {**ACTION, "runs": {**ACTION["runs"], "steps": [{"run": "echo no shell"}]}}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft7Validator(_vendored("github-actions.json")).validate(broken)


def test_a_composite_action_whose_steps_each_name_a_shell():
    assert ACTION["name"] and ACTION["description"]
    assert set(ACTION["inputs"]) >= {"admin-config", "fail-on"}
    assert all(i.get("description") for i in ACTION["inputs"].values())
    assert ACTION["inputs"]["fail-on"]["default"] == "blocking"
    assert ACTION["runs"]["using"] == "composite"
    steps = ACTION["runs"]["steps"]
    assert all("shell" in s for s in steps if "run" in s)
    assert any(re.search(r"pip install .*\$GITHUB_ACTION_PATH", s.get("run", "")) for s in steps)
    [review] = [s for s in steps if "reviewer review" in s.get("run", "")]
    assert "--post" in review["run"] and review["env"]["REVIEWER_ADMIN_CONFIG"] == "${{ inputs.admin-config }}"


def test_no_input_is_pasted_into_a_script():
    """`${{ }}` in `run` would let an input (or the event's text) inject shell: only `env` carries them."""
    for step in ACTION["runs"]["steps"]:
        assert "${{" not in step.get("run", ""), step


def test_the_pre_push_hook_reviews_the_change():
    hooks = {h["id"]: h for h in _yaml((ROOT / ".pre-commit-hooks.yaml").read_text())}
    hook = hooks["reviewer"]
    assert (hook["entry"], hook["language"], hook["stages"]) == ("reviewer review", "python", ["pre-push"])
    assert hook["pass_filenames"] is False and hook["always_run"] is True
    assert set(hook) <= {"id", "name", "entry", "language", "files", "exclude", "types", "types_or", "exclude_types",
                         "always_run", "fail_fast", "verbose", "pass_filenames", "require_serial", "description",
                         "language_version", "minimum_pre_commit_version", "args", "stages"}


def _workflows(text: str) -> list[dict]:
    blocks = re.findall(r"```yaml\n(.*?)```", text, flags=re.S)
    return [doc for doc in map(_yaml, blocks) if isinstance(doc, dict) and "jobs" in doc]


def test_the_workflow_in_the_docs_is_valid_and_uses_the_action():
    [workflow] = _workflows((ROOT / "docs" / "ci.md").read_text())
    jsonschema.Draft7Validator(_vendored("github-workflows.json")).validate(workflow)
    assert workflow["permissions"] == {"checks": "write", "pull-requests": "write", "contents": "read"}
    [job] = workflow["jobs"].values()
    uses = [s for s in job["steps"] if "uses" in s]
    assert uses[0]["uses"].startswith("actions/checkout@") and uses[0]["with"]["fetch-depth"] == 0
    [ours] = [s for s in uses if set(s.get("with", {})) & {"admin-config", "fail-on"}]
    assert set(ours["with"]) <= set(ACTION["inputs"])
    assert ours["env"]  # the model's key, through the environment


def test_the_fetch_step_gives_a_shallow_checkout_the_merge_base(tmp_path):
    origin = tmp_path / "origin"
    base = new_repo(origin, {"a.txt": "1\n"})
    commit(origin, {"a.txt": "2\n"}, "main moves on")
    git(origin, "checkout", "-q", "-b", "feature", base)
    head = commit(origin, {"b.txt": "b\n"}, "feature")
    git(origin, "config", "uploadpack.allowReachableSHA1InWant", "true")  # as GitHub serves
    main = git(origin, "rev-parse", "main")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--depth", "1", "--branch", "main", f"file://{origin}", str(clone))
    env = {"BASE_SHA": main, "HEAD_SHA": head, "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    done = subprocess.run(["bash", str(ROOT / "scripts" / "fetch_pull.sh")], cwd=clone, env=env, capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr
    assert git(clone, "merge-base", main, head) == base
    assert git(clone, "rev-parse", "--is-shallow-repository") == "false"
