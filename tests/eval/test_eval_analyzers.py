"""`reviewer eval` runs the analyzers' step as a pull request does (issue #25 asks for it): the
built-in secret scanning finds a cloud key the scripted model is silent about, the finding counts
in the case's recall, the model's prompt lists it, and the key is shown nowhere."""

from __future__ import annotations

import json
from pathlib import Path

from tests.eval.test_eval_cli import admin, chat, commit, corpus, git, reviewer  # noqa: F401 - `chat` is a fixture
from tests.support.chat_double import findings

AWS_KEY = "AKIA" + "Q3EGRT5JXMPLVW4Z"
CASE = """\
  - id: key
    repo: repos/app
    base: main
    head: key
    must_find: [{path: config/settings.py, lines: [3, 3], about: "a cloud key committed"}]
"""


def _repo(tmp_path: Path) -> None:
    path = tmp_path / "corpus" / "repos" / "app"
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.email", "dev@example.com")
    git(path, "config", "user.name", "Dev")
    commit(path, {"README.md": "# App\n"}, "init")
    git(path, "checkout", "-q", "-b", "key", "main")
    commit(path, {"config/settings.py": f"import os\n\nAWS_ACCESS_KEY_ID = \"{AWS_KEY}\"\n"}, "settings")


async def test_the_built_in_secret_scan_counts_in_a_case(tmp_path, chat, capsys):  # noqa: F811
    _repo(tmp_path)
    chat.answer("m1", findings())
    code, out, err = await reviewer(capsys, corpus(tmp_path, CASE), "--admin-config", admin(tmp_path, chat),
                                    "--format", "json")
    assert code == 0, err
    [case] = json.loads(out)["cases"]
    assert case["recall"] == 1.0 and case["noise"]["blocking"] == 1
    [found] = case["findings"]
    assert (found["path"], found["startLine"], found["severity"]) == ("config/settings.py", 3, "blocking")
    assert "(detect-secrets aws-access-key)" in found["message"]
    prompt = chat.requests[0].body["messages"][1]["content"]
    assert "Findings analyzers already reported on this diff" in prompt and "config/settings.py:3-3" in prompt
    assert AWS_KEY not in out and AWS_KEY not in err
