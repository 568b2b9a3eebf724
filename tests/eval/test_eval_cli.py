"""`reviewer eval` end to end: the real command (bot.commands.cli.main) over real git repositories, reviewing
with the chat-completions double over loopback, every figure of the report checked exactly."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path

import pytest

from bot.commands.cli import main
from tests.support.chat_double import ChatDouble, Reply, asks, failing, findings

KEY_VAR = "REVIEWER_EVAL_TEST_KEY"
API_KEY = "sk-eval-test-0a1b2c3d4e5f"

BASE = "".join(f"def step_{n}(value):\n    return value + {n}\n\n" for n in range(12))  # 36 lines
# The pull request changes lines 5, 17 and 29 of src/calc.py (the `return` of steps 1, 5 and 9).
HEAD = BASE.replace("return value + 1\n", "return value - 1  # MARK_CALC\n") \
           .replace("return value + 5\n", "return scale(value, 5)\n").replace("return value + 9\n", "return value / 9\n")


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout.strip()


def commit(repo: Path, files: dict[str, str], message: str) -> str:
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


@pytest.fixture
def repo(tmp_path: Path) -> dict[str, str]:
    """main: src/calc.py, src/one.py, src/two.py; branches `calc`, `one`, `two` each change one file."""
    path = tmp_path / "corpus" / "repos" / "app"
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.email", "dev@example.com")
    git(path, "config", "user.name", "Dev")
    shas = {"main": commit(path, {"src/calc.py": BASE, "src/one.py": "ONE = 1\n", "src/two.py": "TWO = 2\n",
                                  "src/util.py": "def scale(value, by):\n    return value * by\n",
                                  "README.md": "# App\n"}, "init")}
    for branch, files in (("calc", {"src/calc.py": HEAD}), ("one", {"src/one.py": "ONE = 11  # MARK_ONE\n"}),
                          ("two", {"src/two.py": "TWO = 22  # MARK_TWO\n"})):
        git(path, "checkout", "-q", "-b", branch, "main")
        shas[branch] = commit(path, files, f"change {branch}")
    return shas


def corpus(tmp_path: Path, cases: str) -> str:
    (tmp_path / "corpus" / "corpus.yaml").write_text("cases:\n" + cases)
    return str(tmp_path / "corpus")


CALC_CASE = """\
  - id: calc
    repo: repos/app
    base: main
    head: calc
    must_find:
      - {path: src/calc.py, lines: [5, 5], about: "step_1 subtracts"}
      - {path: src/calc.py, lines: [17, 17], about: "step_5 multiplies"}
      - {path: src/calc.py, lines: [29, 29], about: "step_9 divides"}
    must_not:
      - {path: src/calc.py, lines: [31, 33]}
      - {path: README.md}
"""

ONE_TWO = """\
  - id: one
    repo: repos/app
    base: main
    head: one
    must_find: [{path: src/one.py, lines: [1, 1], about: "ONE changed"}]
  - id: two
    repo: repos/app
    base: main
    head: two
    must_find: [{path: src/two.py, lines: [1, 1], about: "TWO changed"}]
"""


def admin(tmp_path: Path, chat: ChatDouble, name: str = "admin.yaml", model: str = "m1", extra: str = "") -> str:
    path = tmp_path / name
    path.write_text(f"providers:\n  local:\n    type: openai\n    baseUrl: {chat.base_url}\n"
                    f"    apiKey: env://{KEY_VAR}\n    timeout: 5\n    price: {{input: 2, output: 10}}\n"
                    f"defaults:\n  models: {{review: local/{model}}}\n  feedback: detailed\n{extra}")
    return str(path)


def at(line: int, severity: str, message: str, path: str = "src/calc.py", end: int | None = None) -> dict:
    return {"path": path, "startLine": line, "endLine": end or line, "severity": severity, "category": "bug",
            "message": message}


@pytest.fixture
async def chat(monkeypatch):
    monkeypatch.setenv(KEY_VAR, API_KEY)
    double = await ChatDouble(api_key=API_KEY).start()
    yield double
    await double.close()


async def reviewer(capsys, *args: str) -> tuple[int, str, str]:
    """The real command, in a thread: the double answers on this test's event loop meanwhile."""
    code = await asyncio.to_thread(main, ["eval", *args])
    out, err = capsys.readouterr()
    return code, out, err


TWO_OF_THREE = findings(at(5, "blocking", "step_1 subtracts instead of adding."),
                        at(17, "important", "step_5 multiplies."),
                        at(31, "nit", "Name the constant."), usage=(1000, 100))


async def test_two_of_three_items_and_one_false_finding(tmp_path, repo, chat, capsys):
    chat.answer("m1", TWO_OF_THREE)
    code, out, _ = await reviewer(capsys, corpus(tmp_path, CALC_CASE), "--admin-config", admin(tmp_path, chat),
                                  "--format", "json")
    assert code == 0
    report = json.loads(out)
    [case] = report["cases"]
    assert (case["status"], case["headSha"], case["mergeBase"]) == ("completed", repo["calc"], repo["main"])
    assert round(case["recall"], 2) == 0.67 and round(case["precision"], 2) == 0.67 and case["quiet"] == 0.5
    assert [i["matched"] for i in case["mustFind"]] == [True, True, False]
    assert [i["matches"] for i in case["mustFind"]] == [[{"finding": 0, "judge": None}],
                                                        [{"finding": 1, "judge": None}], []]
    assert [f["matches"] for f in case["findings"]] == [[0], [1], []]
    assert [p["quiet"] for p in case["mustNot"]] == [False, True]
    assert case["noise"] == {"blocking": 1, "important": 1, "minor": 0, "nit": 1, "minorShare": 1 / 3}
    assert case["cost"] == {"calls": 1, "toolRounds": 0, "promptTokens": 1000, "answerTokens": 100,
                            "unreported": 0, "money": 0.003, "unpriced": 0}
    overall = report["overall"]
    assert (overall["cases"], overall["found"], overall["items"], overall["matched"], overall["findings"]) == (
        1, 2, 3, 2, 3)
    assert overall["recall"] == 2 / 3 and overall["precision"] == 2 / 3 and overall["quiet"] == 0.5
    assert (overall["calls"], overall["toolRounds"], overall["tokens"], overall["money"]) == (
        1, 0, {"prompt": 1000, "answer": 100, "unreported": 0}, 0.003)
    assert overall["seconds"] == case["seconds"] > 0
    [asked] = chat.requests
    prompt = asked.body["messages"][1]["content"]
    assert "MARK_CALC" in prompt  # the diff, and what the index built at the merge base retrieved for it:
    assert "Repository index: 1 definition(s)" in prompt and "src/util.py:1-2 — definition `scale`" in prompt



async def test_lookups_the_model_asks_for_are_counted_as_tool_rounds(tmp_path, repo, chat, capsys):
    # As on the server: the changed file at the head, the rest from the index at the merge base.
    chat.answer("m1", asks(("definition", {"name": "scale", "path": "src/calc.py", "line": 17}),
                           usage=(900, 20)),
                asks(("read", {"path": "src/calc.py", "start": 5, "end": 5}), usage=(1100, 20)), TWO_OF_THREE)
    code, out, _ = await reviewer(capsys, corpus(tmp_path, CALC_CASE), "--admin-config", admin(tmp_path, chat),
                                  "--format", "json")
    assert code == 0
    [case] = json.loads(out)["cases"]
    assert (case["cost"]["calls"], case["cost"]["toolRounds"], case["cost"]["promptTokens"]) == (3, 2, 3000)
    definition, read = chat.tool_messages("m1")
    assert "src/util.py:1-2 (default branch) — function `scale`" in definition["content"]
    assert "     5     return value - 1  # MARK_CALC" in read["content"]  # the head, not the merge base
    assert chat.violations == []

async def test_the_text_and_markdown_forms_say_the_same(tmp_path, repo, chat, capsys):
    chat.answer("m1", TWO_OF_THREE)
    args = (corpus(tmp_path, CALC_CASE), "--admin-config", admin(tmp_path, chat))
    code, text, _ = await reviewer(capsys, *args)
    assert code == 0
    assert "calc  completed  2/3     2/3        1/2    3         1      1,000/100" in text
    assert ("overall: recall 0.67 (2/3), precision 0.67 (2/3), quiet 0.50 (1/2); 3 findings (1 blocking, "
            "1 important, 0 minor, 1 nit; 33% minor or nit); 1 model calls, 0 tool rounds, 1,000 prompt + 100 "
            "answer tokens, money 0.0030") in text
    code, markdown, _ = await reviewer(capsys, *args, "--format", "markdown")
    assert code == 0 and markdown.startswith("### Review evaluation: 1 case(s)")
    assert "| calc | completed | 2/3 | 2/3 | 1/2 | 3 | 1 | 1,000/100 |" in markdown


async def test_a_judge_confirms_one_match_and_rejects_the_other(tmp_path, repo, chat, capsys):
    chat.answer("m1", TWO_OF_THREE)
    chat.answer("judge", Reply(content='{"verdicts": [{"pair": 0, "same": true}, {"pair": 1, "same": false}]}',
                               usage=(300, 20)))
    admin_file = admin(tmp_path, chat, extra="eval:\n  judge: local/judge\n")
    code, out, _ = await reviewer(capsys, corpus(tmp_path, CALC_CASE), "--admin-config", admin_file,
                                  "--format", "json")
    assert code == 0
    report = json.loads(out)
    [case] = report["cases"]
    assert [i["matches"] for i in case["mustFind"]] == [[{"finding": 0, "judge": "confirmed"}], [], []]
    assert [i["rejected"] for i in case["mustFind"]] == [[], [1], []]
    assert round(case["recall"], 2) == 0.33 and round(case["precision"], 2) == 0.33
    assert report["judge"] == {"model": "local/judge", "confirmed": 1, "rejected": 1, "unjudged": 0, "calls": 1,
                               "tokens": {"prompt": 300, "answer": 20}}
    assert case["cost"]["calls"] == 1 and case["cost"]["promptTokens"] == 1000  # the judge is not the review's cost
    [judged] = chat.requests_for("judge")
    asked = judged.body["messages"][1]["content"]
    assert '"step_1 subtracts"' in asked and '"step_5 multiplies."' in asked


async def test_a_judge_that_fails_leaves_matches_by_place_and_says_so(tmp_path, repo, chat, capsys):
    chat.answer("m1", TWO_OF_THREE)
    chat.answer("judge", failing(500, "judge down"))
    admin_file = admin(tmp_path, chat, extra="eval:\n  judge: local/judge\n")
    code, out, _ = await reviewer(capsys, corpus(tmp_path, CALC_CASE), "--admin-config", admin_file,
                                  "--format", "json")
    report = json.loads(out)
    [case] = report["cases"]
    assert code == 0 and round(case["recall"], 2) == 0.67
    assert report["judge"]["unjudged"] == 2 and "judge down" in case["judge"]["error"]


async def test_the_gate_on_min_recall_both_ways(tmp_path, repo, chat, capsys):
    chat.answer("m1", TWO_OF_THREE)
    args = (corpus(tmp_path, CALC_CASE), "--admin-config", admin(tmp_path, chat), "--format", "json")
    code, out, _ = await reviewer(capsys, *args, "--min-recall", "0.6")
    assert code == 0 and json.loads(out)["gate"] == {"passed": True, "minRecall": 0.6, "failures": []}
    code, out, _ = await reviewer(capsys, *args, "--min-recall", "0.7")
    assert code == 1
    assert json.loads(out)["gate"]["failures"] == ["recall 0.67 is below --min-recall 0.7"]


def both(reply_one: Reply, reply_two: Reply, chat: ChatDouble, model: str = "m1") -> None:
    chat.answer_when(model, "MARK_ONE", reply_one)
    chat.answer_when(model, "MARK_TWO", reply_two)


FOUND_ONE = findings(at(1, "important", "ONE changed.", path="src/one.py"))
FOUND_TWO = findings(at(1, "important", "TWO changed.", path="src/two.py"))
NOTHING = findings()


async def test_the_baseline_gate_both_ways(tmp_path, repo, chat, capsys):
    both(FOUND_ONE, FOUND_TWO, chat)
    args = (corpus(tmp_path, ONE_TWO), "--admin-config", admin(tmp_path, chat), "--format", "json")
    code, out, _ = await reviewer(capsys, *args, "--jobs", "2")
    assert code == 0 and json.loads(out)["overall"]["recall"] == 1.0
    baseline = tmp_path / "baseline.json"
    baseline.write_text(out)
    code, out, _ = await reviewer(capsys, *args, "--baseline", str(baseline))  # the same again: no drop
    report = json.loads(out)
    assert code == 0 and report["gate"]["passed"] and report["baseline"]["cases"] == ["one", "two"]
    assert report["baseline"]["differences"]["recall"] == {"delta": 0.0, "low": 0.0, "high": 0.0}
    chat.routes.clear()
    chat.answer("m1", NOTHING)  # the model now finds nothing
    code, out, _ = await reviewer(capsys, *args, "--baseline", str(baseline))
    report = json.loads(out)
    assert code == 1 and report["baseline"]["differences"]["recall"] == {"delta": -1.0, "low": -1.0, "high": -1.0}
    assert report["gate"]["failures"] == [
        "recall dropped by 1.00 against the baseline (95% interval -1.00 to -1.00)"]


async def test_compare_gives_each_difference_a_paired_bootstrap_interval(tmp_path, repo, chat, capsys):
    both(FOUND_ONE, NOTHING, chat, "m1")  # the first admin file's model finds one of the two
    both(FOUND_ONE, FOUND_TWO, chat, "m2")  # the second's finds both
    args = (corpus(tmp_path, ONE_TWO), "--admin-config", admin(tmp_path, chat),
            "--compare", admin(tmp_path, chat, "second.yaml", "m2"), "--format", "json")
    code, out, _ = await reviewer(capsys, *args)
    assert code == 0
    report = json.loads(out)
    assert (report["overall"]["recall"], report["compare"]["overall"]["recall"]) == (0.5, 1.0)
    # Two cases, recall differences 0 and 1: a resample holds the second case 0, 1 or 2 times (a
    # quarter, a half, a quarter of the time), so the interval runs from 0 to 1 around 0.5.
    assert report["compare"]["differences"]["recall"] == {"delta": 0.5, "low": 0.0, "high": 1.0}
    assert report["compare"]["differences"]["findings"] == {"delta": 1.0, "low": 0.0, "high": 2.0}
    assert report["compare"]["differences"]["calls"] == {"delta": 0.0, "low": 0.0, "high": 0.0}
    code, again, _ = await reviewer(capsys, *args)
    first, second = (json.loads(text)["compare"]["differences"] for text in (out, again))
    del first["seconds"], second["seconds"]  # wall time differs from one run to the next; the rest is seeded
    assert first == second


async def test_only_some_cases_and_an_unknown_id(tmp_path, repo, chat, capsys):
    both(FOUND_ONE, FOUND_TWO, chat)
    args = (corpus(tmp_path, ONE_TWO), "--admin-config", admin(tmp_path, chat), "--format", "json")
    code, out, _ = await reviewer(capsys, *args, "--only", "two")
    assert code == 0 and [c["id"] for c in json.loads(out)["cases"]] == ["two"]
    code, _, err = await reviewer(capsys, *args, "--only", "two", "three")
    assert code == 2 and "--only: the corpus has no case three" in err


async def test_a_model_that_fails_counts_as_finding_nothing(tmp_path, repo, chat, capsys):
    chat.answer("m1", failing(500, "overloaded"))
    code, out, _ = await reviewer(capsys, corpus(tmp_path, CALC_CASE), "--admin-config", admin(tmp_path, chat),
                                  "--format", "json")
    [case] = json.loads(out)["cases"]
    assert code == 0 and case["status"] == "failed" and "HTTP 500: overloaded" in case["reason"]
    assert (case["recall"], case["precision"], case["quiet"], case["cost"]["calls"]) == (0.0, None, 1.0, 1)
    assert case["cost"]["money"] == 0.0
    chat.answer("m1", failing(503, "maintenance"))
    code, text, _ = await reviewer(capsys, corpus(tmp_path, ONE_TWO), "--admin-config", admin(tmp_path, chat))
    assert code == 0 and ("  2 cases failed (one, two): no model gave a usable answer: local/m1: provider 'local': "
                          "HTTP 503: maintenance") in text.splitlines()


async def test_a_case_whose_repository_is_missing_is_unavailable_and_left_out(tmp_path, repo, chat, capsys):
    chat.answer("m1", TWO_OF_THREE)
    missing = CALC_CASE.replace("id: calc", "id: gone").replace("repos/app", "repos/nowhere")
    code, out, _ = await reviewer(capsys, corpus(tmp_path, CALC_CASE + missing), "--admin-config",
                                  admin(tmp_path, chat), "--format", "json")
    report = json.loads(out)
    assert code == 0 and [c["status"] for c in report["cases"]] == ["completed", "unavailable"]
    assert "no such directory" in report["cases"][1]["reason"] and report["overall"]["cases"] == 1
    code, _, err = await reviewer(capsys, corpus(tmp_path, missing), "--admin-config", admin(tmp_path, chat))
    assert code == 2 and "no case could be run: gone:" in err


async def test_a_case_config_replaces_the_repositorys(tmp_path, repo, chat, capsys):
    chat.answer("m1", TWO_OF_THREE)
    (tmp_path / "corpus" / "minimal.yaml").write_text("feedback: minimal\nignore: ['README.md']\n")
    cases = CALC_CASE + "    config: minimal.yaml\n"
    code, out, _ = await reviewer(capsys, corpus(tmp_path, cases), "--admin-config", admin(tmp_path, chat),
                                  "--format", "json")
    [case] = json.loads(out)["cases"]
    assert code == 0 and len(case["findings"]) == 3  # all three are bugs: minimal keeps them
    assert "Feedback level: minimal" in chat.requests[0].body["messages"][1]["content"]
