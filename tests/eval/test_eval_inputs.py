"""`reviewer eval`'s inputs: the corpus validated like every file we read (errors at their line,
exit 1), case configs, admin files and saved reports checked before any model is asked, usage
errors (exit 2), `reviewer validate` and `reviewer schema` knowing the corpus, and the progress bar."""

from __future__ import annotations

import asyncio
import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from bot.commands.cli import main
from bot.config.schemas import eval_corpus_json_schema
from bot.eval.corpus import load_corpus
from tests.support.chat_double import ChatDouble, failing

ROOT = Path(__file__).resolve().parent.parent.parent

BAD = """\
cases:
  - id: first
    repo: repos/app
    base: main
    head: feature
    must_find:
      - {path: src/a.py, lines: [9, 3], about: "backwards"}
      - {path: ../outside.py, lines: [1, 2], about: "escapes"}
    must_not:
      - {path: src/b.py, lines: [0, 2]}
    confg: minimal.yaml
  - id: first
    repo: repos/app
    base: --upload-pack=evil
    head: feature
"""

GOOD = """\
cases:
  - id: only
    repo: repos/app
    base: main
    head: feature
    must_find: [{path: src/a.py, lines: [1, 2], about: "a defect"}]
    config: minimal.yaml
"""


def write(tmp_path: Path, text: str, name: str = "corpus.yaml") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


@pytest.fixture
def admin(tmp_path: Path) -> str:
    return write(tmp_path, "providers:\n  local: {type: openai, baseUrl: 'http://127.0.0.1:9/v1'}\n"
                           "defaults:\n  models: {review: local/m}\n", "admin.yaml")


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["eval", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_corpus_errors_are_reported_at_their_line_and_exit_1(tmp_path, admin, capsys):
    corpus = write(tmp_path, BAD)
    code, out, err = run(capsys, str(tmp_path), "--admin-config", admin)
    assert code == 1 and out == ""
    lines = err.splitlines()
    assert lines[:7] == [
        f"{corpus}:7:33: line-range: `cases[0].must_find[0].lines`: the last line (3) must not come before the first (9)",
        f"{corpus}:8:16: path-escapes: `cases[0].must_find[1].path`: must stay inside the repository: `..` leads "
        "above its root; got string '../outside.py'",
        f"{corpus}:10:34: minimum: `cases[0].must_not[0].lines[0]`: must be at least 1; got 0",
        f"{corpus}:11:5: unknown-property: `cases[0].confg`: unknown property `confg`; did you mean `config`? "
        "(allowed: base, config, head, id, must_find, must_not, repo, tags)",
        f"{corpus}:12:5: required: `cases[1]`: missing required property `must_find`",
        f"{corpus}:12:9: duplicate-id: `cases[1].id`: case id `first` is already used at line 2; each case needs "
        "its own id",
        f"{corpus}:14:11: pattern: `cases[1].base`: must match ^[^\\s-][^\\s]*$ (a commit id (best: the full 40 "
        "hexadecimal digits, so that the case cannot move) or a ref, without spaces and not starting with `-`); "
        "got string '--upload-pack=evil'",
    ]
    assert lines[-1] == f"reviewer eval: the corpus {corpus} is invalid (7 error(s))"


@pytest.mark.parametrize("text, code, where", [
    ("cases: []\n", "min-items", (1, 8)),
    ("- a\n", "not-a-mapping", (1, 1)),
    ("cases:\n  - {id: a, repo: r, base: b, head: h, must_find: [], id: b}\n", "duplicate-key", (2, 55)),
    ("cases: [\n", "yaml-syntax", (1, 9)),
])
def test_what_yaml_and_the_shape_refuse(tmp_path, text, code, where):
    corpus, problems = load_corpus(text, "corpus.yaml")
    assert corpus is None and (problems[0].code, (problems[0].line, problems[0].column)) == (code, where)


def test_a_case_config_is_checked_at_its_own_lines_and_must_exist(tmp_path, admin, capsys):
    write(tmp_path, GOOD)
    code, _, err = run(capsys, str(tmp_path), "--admin-config", admin)
    assert code == 1
    assert err.splitlines()[0] == (f"{tmp_path}/corpus.yaml:7:13: missing-file: `cases[0].config`: "
                                   f"{tmp_path}/minimal.yaml does not exist")
    config = write(tmp_path, "feedback: terse\nmodels: {review: elsewhere/m}\n", "minimal.yaml")
    code, _, err = run(capsys, str(tmp_path), "--admin-config", admin)
    assert code == 1
    assert err.splitlines()[:2] == [
        f"{config}:1:11: enum: `feedback`: must be one of detailed, standard, minimal; got string 'terse'",
        f"{config}:2:18: undeclared-provider: `models.review`: provider `elsewhere` of model `elsewhere/m` is not "
        "declared by the instance (declared: local)"]


def test_admin_files_are_validated_and_unreadable_inputs_exit_2(tmp_path, admin, capsys):
    write(tmp_path, GOOD.replace("    config: minimal.yaml\n", ""))
    bad_admin = write(tmp_path, "providers:\n  local: {type: grpc, baseUrl: 'http://x'}\n", "bad-admin.yaml")
    code, _, err = run(capsys, str(tmp_path), "--admin-config", bad_admin)
    assert code == 1 and f"{bad_admin}:2:17: enum: `providers.local.type`: must be one of openai" in err
    code, _, err = run(capsys, str(tmp_path), "--admin-config", admin, "--compare", bad_admin)
    assert code == 1 and f"the admin configuration {bad_admin} is invalid" in err
    code, _, err = run(capsys, str(tmp_path / "nowhere"), "--admin-config", admin)
    assert code == 2 and f"cannot read the corpus {tmp_path}/nowhere" in err
    code, _, err = run(capsys, str(tmp_path), "--admin-config", str(tmp_path / "absent.yaml"))
    assert code == 2 and "cannot read the admin configuration" in err


@pytest.mark.parametrize("report, message", [
    ("{", "is not JSON"),
    ('{"cases": []}', "it is not a version-1 report of `reviewer eval --format json`"),
    ('{"version": 1, "cases": [{"id": "a", "status": "completed", "tally": {"cases": "one"}}]}',
     "cases[0] (a): its tally is not usable"),
])
def test_a_baseline_that_is_not_a_report_is_a_usage_error(tmp_path, admin, capsys, report, message):
    write(tmp_path, GOOD.replace("    config: minimal.yaml\n", ""))
    baseline = write(tmp_path, report, "baseline.json")
    code, _, err = run(capsys, str(tmp_path), "--admin-config", admin, "--baseline", baseline)
    assert code == 2 and f"--baseline {baseline}" in err and message in err


@pytest.mark.parametrize("args, message", [
    (["--min-recall", "1.5"], "argument --min-recall: 1.5 is not between 0 and 1"),
    (["--min-recall", "most"], "argument --min-recall: 'most' is not a number"),
    (["--jobs", "0"], "argument --jobs: 0 is less than 1"),
    (["--format", "html"], "argument --format: invalid choice: 'html'"),
    ([], "the following arguments are required: --admin-config"),
])
def test_usage_errors_exit_2(tmp_path, capsys, args, message):
    with pytest.raises(SystemExit) as stopped:
        main(["eval", str(tmp_path), *args])
    assert stopped.value.code == 2 and message in capsys.readouterr().err


def test_validate_knows_a_corpus_and_schema_publishes_it(tmp_path, capsys):
    corpus = write(tmp_path, BAD)
    assert main(["validate", corpus, "--format", "json"]) == 1
    [result] = json.loads(capsys.readouterr().out)["files"]
    assert result["kind"] == "eval-corpus" and len(result["errors"]) == 7
    good = write(tmp_path, GOOD, "other.yaml")  # by its content, whatever its name
    assert main(["validate", good]) == 0
    assert main(["validate", "--kind", "eval-corpus", write(tmp_path, "rules: []\n", "x.yaml")]) == 1
    assert "unknown-property" in capsys.readouterr().out
    schema = eval_corpus_json_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    starter = ROOT / "eval" / "corpus" / "corpus.yaml"
    if starter.exists():
        doc = __import__("bot.documents.yamldoc", fromlist=["load_yaml"]).load_yaml(starter.read_text())[0]
        jsonschema.validate(doc.value, schema)
        assert load_corpus(starter.read_text(), str(starter))[1] == []


async def test_the_progress_bar_is_drawn_only_on_a_terminal(tmp_path):
    """The provider answers, but its model fails every review: the case still runs, fails, and the
    bar counts it."""
    chat = await ChatDouble().start()
    chat.answer("m", failing(500, "overloaded"))
    admin = write(tmp_path, f"providers:\n  local: {{type: openai, baseUrl: '{chat.base_url}'}}\n"
                            "defaults:\n  models: {review: local/m}\n", "admin.yaml")
    repo = tmp_path / "repos" / "app"
    repo.mkdir(parents=True)
    for args in (["init", "-q", "-b", "main"], ["config", "user.email", "d@example.com"],
                 ["config", "user.name", "D"]):
        subprocess.run(["git", "-C", str(repo), *args], check=True)
    (repo / "a.py").write_text("x = 1\n")
    subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(repo), "commit", "-q", "-m", "init"], check=True)
    subprocess.run(["git", "-C", str(repo), "checkout", "-q", "-b", "feature"], check=True)
    (repo / "a.py").write_text("x = 2\n")
    subprocess.run(["git", "-C", str(repo), "commit", "-q", "-am", "change"], check=True)
    write(tmp_path, GOOD.replace("    config: minimal.yaml\n", "").replace("src/a.py", "a.py"))
    command = [sys.executable, "-m", "bot", "eval", str(tmp_path), "--admin-config", admin]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    master, slave = pty.openpty()
    try:
        done = await asyncio.to_thread(subprocess.run, command, stdout=subprocess.PIPE, stderr=slave, env=env,
                                       timeout=120, check=False)
        os.set_blocking(master, False)
        drawn = os.read(master, 65536).decode()
    finally:
        os.close(master)
        os.close(slave)
    assert done.returncode == 0 and "only  failed" in done.stdout.decode()
    assert "[########################] 1/1 only" in drawn
    piped = await asyncio.to_thread(subprocess.run, command, capture_output=True, env=env, timeout=120, check=False)
    await chat.close()
    assert piped.returncode == 0 and b"[#" not in piped.stderr and b"1/1" not in piped.stderr
    assert b"gave no usable answer" not in piped.stderr  # the report says why, once, on stdout
    assert b"HTTP 500: overloaded" in piped.stdout


def test_a_provider_that_does_not_answer_stops_the_run_before_any_case(tmp_path, admin, capsys):
    """The admin file's provider is a closed port: asked once, as `reviewer doctor` asks it, and the
    run stops with the doctor's line instead of failing every case."""
    write(tmp_path, GOOD.replace("    config: minimal.yaml\n", ""))
    code, out, err = run(capsys, str(tmp_path), "--admin-config", admin)
    assert code == 2 and out == ""
    assert err.splitlines() == [
        "fail provider local: no answer from http://127.0.0.1:9/v1/models: Connection refused",
        f"reviewer eval: a model provider of {admin} does not answer; no case was run (`reviewer doctor` checks a "
        "configuration)"]


def test_the_example_admin_file_is_valid_and_not_on_the_servers_own_port():
    """`make eval`'s default admin file names a model server; Reviewer listens on 8080 by default, so
    a provider there would be Reviewer itself, which answers 404 to the model's paths."""
    from urllib.parse import urlsplit

    from bot.config.admin import load_admin_config
    from bot.server.settings import Settings

    path = ROOT / "eval" / "admin.example.yaml"
    admin, problems = load_admin_config(path.read_bytes(), str(path))
    assert admin is not None and problems == []
    assert [urlsplit(p.base_url).port for p in admin.providers.values()] != []
    assert all(urlsplit(p.base_url).port != Settings.port for p in admin.providers.values())
