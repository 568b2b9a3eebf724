"""`reviewer validate`: kinds, output shapes and exit codes, through the command line."""

import json
import re
import subprocess
import sys

import pytest

from bot.commands.cli import main
from bot.documents.yamldoc import load_yaml
from tests.support.config_examples import ROOT

ADMIN = str(ROOT / "admin.yaml")
OIDC = """apiVersion: resources.service.dev/v3
kind: ServiceOIDCConnector
metadata:
  name: okta
spec:
  client_id: reviewer
  client_secret: secret://okta/client-secret
  issuer_url: https://example.okta.com
  redirect_url: ["https://reviewer.example.com/v1/webapi/oidc/callback"]
  claims_to_roles:
    - {claim: groups, value: admins, roles: [admin]}
  bogus: 1
"""


def write(tmp_path, name, text):
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return str(path)


def run(capsys, *argv):
    code = main(["validate", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_valid_file_exits_0_quietly(tmp_path, capsys):
    path = write(tmp_path, ".reviewer.yaml", "feedback: minimal\n")
    code, out, err = run(capsys, path)
    assert (code, out) == (0, "") and "all valid" in err


def test_text_lines_are_path_line_column_code_message(tmp_path, capsys):
    path = write(tmp_path, ".reviewer.yaml", "feedback: minimal\nrules:\n  - id: Bad\n    rule: x\n")
    code, out, _ = run(capsys, path)
    assert code == 1
    assert out.splitlines() == [f"{path}:3:9: pattern: `rules[0].id`: must match ^[a-z0-9][a-z0-9-]{{0,63}}$ "
                                "(lowercase letters, digits and `-`, starting with a letter or digit); "
                                "got string 'Bad'"]


def test_json_is_exactly_the_documented_object(tmp_path, capsys):
    good = write(tmp_path, "a/.reviewer.yaml", "")
    bad = write(tmp_path, "b/.reviewer.yml", "enabeld: true\n")
    code, out, _ = run(capsys, good, bad, "--format", "json")
    assert code == 1
    assert json.loads(out) == {"valid": False, "files": [
        {"path": good, "kind": "repo-config", "valid": True, "errors": []},
        {"path": bad, "kind": "repo-config", "valid": False, "errors": [
            {"line": 1, "column": 1, "pointer": "/enabeld", "code": "unknown-property",
             "message": "`enabeld`: unknown property `enabeld`; did you mean `enabled`? (allowed: agentFiles, "
                        "approve, comments, context, enabled, feedback, filterExpr, ignore, models, "
                        "requireSuggestedFix, rules)"}]}]}


def test_github_format_prints_workflow_commands(tmp_path, capsys):
    path = write(tmp_path, ".reviewer.yaml", "feedback: loud\n")
    code, out, _ = run(capsys, path, "--format", "github")
    assert code == 1
    assert out == (f"::error file={path},line=1,col=11,title=enum::`feedback`: must be one of detailed, "
                   "standard, minimal; got string 'loud'\n")


def test_providers_are_checked_only_with_an_admin_file(tmp_path, capsys):
    path = write(tmp_path, ".reviewer.yaml", "models:\n  review: local/llama\n")
    assert run(capsys, path)[0] == 0
    code, out, _ = run(capsys, path, "--admin-config", ADMIN, "--format", "json")
    assert code == 1 and json.loads(out)["files"][0]["errors"][0]["code"] == "undeclared-provider"
    assert run(capsys, path, "--admin-config", ADMIN, "--full-name", "octo/app")[0] == 0


def test_an_invalid_admin_file_is_reported_as_a_file_of_its_own(tmp_path, capsys):
    admin = write(tmp_path, "admin.yaml", "defaults:\n  enable: false\n")
    path = write(tmp_path, ".reviewer.yaml", "")
    code, out, _ = run(capsys, path, "--admin-config", admin, "--format", "json")
    report = json.loads(out)
    assert code == 1 and report["valid"] is False
    assert [(f["path"], f["kind"], f["valid"]) for f in report["files"]] == [
        (path, "repo-config", True), (admin, "admin-config", False)]
    assert [e["code"] for e in report["files"][1]["errors"]] == ["unknown-property"]


@pytest.mark.parametrize("kind", [[], ["--kind", "repo-config"]])
def test_the_admin_file_among_the_paths_is_read_as_the_admin_file(tmp_path, capsys, kind):
    """Listed as a path too (spelled differently, or under --kind repo-config), the admin file
    is still an admin file: one entry, its kind admin-config, its own errors."""
    admin = write(tmp_path, "admin.yaml", "- not a mapping\n")
    path = write(tmp_path, ".reviewer.yaml", "")
    spelled = str(tmp_path / "." / "admin.yaml")
    code, out, _ = run(capsys, spelled, path, "--admin-config", admin, "--format", "json", *kind)
    report = json.loads(out)
    assert code == 1 and report["valid"] is False
    assert [(f["path"], f["kind"], f["valid"]) for f in report["files"]] == [
        (spelled, "admin-config", False), (path, "repo-config", True)]
    [error] = report["files"][0]["errors"]
    assert error["code"] == "not-a-mapping" and "the admin configuration" in error["message"]


def test_an_unreadable_path_is_an_invalid_file_of_the_json_report(tmp_path, capsys):
    good = write(tmp_path, ".reviewer.yaml", "")
    missing = str(tmp_path / "missing.yaml")
    code, out, err = run(capsys, missing, good, "--format", "json")
    report = json.loads(out)
    assert code == 2 and report["valid"] is False and "cannot read" in err
    assert [(f["path"], f["kind"], f["valid"]) for f in report["files"]] == [
        (missing, "repo-config", False), (good, "repo-config", True)]
    assert report["files"][0]["errors"] == [{"line": 1, "column": 1, "pointer": "", "code": "unreadable",
                                             "message": f"cannot read {missing}: No such file or directory"}]
    code, out, _ = run(capsys, missing, "--format", "json", "--kind", "oidc-connector")
    assert code == 2 and json.loads(out)["files"][0]["kind"] == "oidc-connector"


def test_an_unreadable_admin_file_is_an_invalid_file_of_the_json_report(tmp_path, capsys):
    path = write(tmp_path, ".reviewer.yaml", "feedback: loud\n")
    missing = str(tmp_path / "admin.yaml")
    code, out, _ = run(capsys, path, "--admin-config", missing, "--format", "json")
    report = json.loads(out)
    assert code == 2 and report["valid"] is False
    assert [(f["path"], f["kind"], [e["code"] for e in f["errors"]]) for f in report["files"]] == [
        (path, "repo-config", ["enum"]), (missing, "admin-config", ["unreadable"])]


@pytest.mark.parametrize("name,text,kind", [
    ("settings.yaml", "rules: []\n", "repo-config"),
    ("anything.yaml", "providers: {}\n", "admin-config"),
    ("instance.yaml", "accounts:\n  octo: {enabled: false}\n", "admin-config"),
    ("access.yaml", "access:\n  roles:\n    admin: {allow: [\"*\"]}\n", "admin-config"),
    ("okta.yaml", OIDC, "oidc-connector"),
    (".reviewer.yml", "providers: {}\n", "repo-config"),  # the name wins over the content
])
def test_the_kind_comes_from_the_name_else_the_content(tmp_path, capsys, name, text, kind):
    path = write(tmp_path, name, text)
    _, out, _ = run(capsys, path, "--format", "json")
    assert json.loads(out)["files"][0]["kind"] == kind


def test_kind_option_overrides_detection(tmp_path, capsys):
    path = write(tmp_path, "x.yaml", "providers: {}\n")
    code, out, _ = run(capsys, path, "--kind", "repo-config", "--format", "json")
    assert code == 1 and json.loads(out)["files"][0]["errors"][0]["pointer"] == "/providers"


def test_connector_errors_carry_their_document(tmp_path, capsys):
    path = write(tmp_path, "okta.yaml", OIDC)
    code, out, _ = run(capsys, path, "--format", "json")
    [error] = json.loads(out)["files"][0]["errors"]
    assert code == 1 and (error["pointer"], error["line"], error["document"]) == ("/spec/bogus", 12, 0)


def test_both_config_files_in_one_directory_are_an_error(tmp_path, capsys):
    yaml = write(tmp_path, ".reviewer.yaml", "")
    yml = write(tmp_path, ".reviewer.yml", "")
    code, out, _ = run(capsys, yaml, yml)
    assert code == 1
    assert out.splitlines() == [f"{yaml}:1:1: both-config-files: both .reviewer.yaml and .reviewer.yml are in "
                                "this directory; the app reads neither while both exist — keep one",
                                f"{yml}:1:1: both-config-files: both .reviewer.yaml and .reviewer.yml are in "
                                "this directory; the app reads neither while both exist — keep one"]


def test_a_directory_stands_for_its_config_file(tmp_path, capsys):
    write(tmp_path, ".reviewer.yml", "feedback: loud\n")
    code, out, _ = run(capsys, str(tmp_path), "--format", "json")
    assert code == 1 and json.loads(out)["files"][0]["path"] == str(tmp_path / ".reviewer.yml")


def test_a_directory_without_config_is_unreadable(tmp_path, capsys):
    code, _, err = run(capsys, str(tmp_path))
    assert code == 2 and "cannot read" in err


def test_an_unreadable_path_exits_2_and_the_others_are_still_checked(tmp_path, capsys):
    bad = write(tmp_path, ".reviewer.yaml", "feedback: loud\n")
    code, out, err = run(capsys, str(tmp_path / "missing.yaml"), bad)
    assert code == 2 and "missing.yaml" in err and ": enum: " in out


@pytest.mark.parametrize("argv,message", [
    (["--admin-config", "/nonexistent/admin.yaml"], "cannot read /nonexistent/admin.yaml"),
    (["--full-name", "octo"], "--full-name must be OWNER/NAME"),
])
def test_unusable_options_exit_2(tmp_path, capsys, argv, message):
    path = write(tmp_path, ".reviewer.yaml", "")
    code, _, err = run(capsys, path, *argv)
    assert code == 2 and message in err


def test_usage_errors_exit_2(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["validate", "x.yaml", "--kind", "nope"])
    assert exit_info.value.code == 2


def test_python_dash_m_bot_runs_the_same_command(tmp_path):
    path = write(tmp_path, ".reviewer.yaml", "approve: maybe\n")
    result = subprocess.run([sys.executable, "-m", "bot", "validate", path], capture_output=True, text=True)
    assert result.returncode == 1 and f"{path}:1:10: type:" in result.stdout


def test_the_pre_commit_hook_runs_reviewer_validate_on_the_config_file():
    doc, found = load_yaml((ROOT.parents[2] / ".pre-commit-hooks.yaml").read_text())
    [hook] = [h for h in doc.value if h["id"] == "reviewer-validate"]
    assert found == [] and (hook["id"], hook["entry"], hook["language"]) == (
        "reviewer-validate", "reviewer validate", "python")
    files = re.compile(hook["files"])
    assert files.search(".reviewer.yaml") and files.search(".reviewer.yml")
    assert not files.search("sub/.reviewer.yaml") and not files.search(".reviewer.yaml.bak")


def test_an_admin_file_given_twice_is_reported_once(tmp_path, capsys):
    admin = write(tmp_path, "admin.yaml", "defaults:\n  enable: false\n")
    code, out, _ = run(capsys, admin, "--admin-config", admin, "--format", "json")
    assert code == 1 and [f["path"] for f in json.loads(out)["files"]] == [admin]


@pytest.mark.parametrize(("name", "text", "kind"), [
    (".reviewer.yaml", "rules: " + "[" * 100_000 + "]" * 100_000 + "\n", "repo-config"),
    ("admin.yaml", "defaults:\n  rules:\n" + "    " + "- " * 100_000 + "x\n", "admin-config"),
    ("okta.yaml", OIDC.replace("  bogus: 1\n", "  bogus: " + "{a: " * 50_000 + "}" * 50_000 + "\n"),
     "oidc-connector"),
])
def test_nesting_a_hundred_thousand_deep_is_an_error_not_a_crash(tmp_path, name, text, kind):
    # In a process of its own: before the composer was bounded, this died of SIGSEGV.
    path = write(tmp_path, name, text)
    result = subprocess.run([sys.executable, "-m", "bot", "validate", "--kind", kind, "--format", "json", path],
                            capture_output=True, text=True, timeout=120)
    assert (result.returncode, result.stderr) == (1, "")
    [file] = json.loads(result.stdout)["files"]
    assert file["kind"] == kind and [e["code"] for e in file["errors"]] == ["too-deep"]
    assert file["errors"][0]["line"] in (1, 3, 12)
    assert file["errors"][0]["pointer"].startswith(("/rules/0/0", "/defaults/rules/0/0", "/spec/bogus/a/a"))


@pytest.mark.parametrize("odd", ["\u2028", "\u2029", "\x85"])
def test_a_cel_error_is_placed_by_newlines_alone(tmp_path, capsys, odd):
    """Line and paragraph separators and NEL end a line for str.splitlines(), not for editors or
    GitHub: a CEL error after one stays at its line and column."""
    text = f'rules:\n  - id: one\n    rule: "first{odd}second"\nfilterExpr: pr.title == \n'
    path = write(tmp_path, ".reviewer.yaml", text)
    code, out, _ = run(capsys, path)
    assert code == 1
    assert out.startswith(f"{path}:4:22: cel-syntax: "), out  # `pr.title ==` ends at column 22


CONNECTOR_EXAMPLES = ROOT.parent.parent.parent / "docs" / "examples" / "connectors"


@pytest.mark.parametrize(("kind", "text", "where"), [
    ("repo-config", "feedback: !!float xyz\n", (1, 11, "/feedback")),
    ("repo-config", "rules:\n  - id: a\n    rule: !!binary aGVsbG8=\n", (3, 11, "/rules/0/rule")),
    ("admin-config", (ROOT / "admin.yaml").read_text().replace("type: openai", "type: !!int openai", 1),
     (4, 11, "/providers/openai/type")),
    ("oidc-connector", (CONNECTOR_EXAMPLES / "okta-oidc.yaml").read_text().replace(
        "kind: ServiceOIDCConnector", "kind: ServiceOIDCConnector\nextra: !foo x", 1), None),
    ("saml-connector", (CONNECTOR_EXAMPLES / "okta-saml.yaml").read_text().replace(
        "kind: ServiceSAMLConnector", "kind: ServiceSAMLConnector\nextra: !!python/object:os.system x", 1), None),
])
def test_an_explicit_tag_that_cannot_hold_its_value_is_an_error_in_every_kind_of_file(tmp_path, capsys, kind, text,
                                                                                       where):
    # `feedback: !!float xyz` printed a ValueError traceback and no JSON at all.
    path = write(tmp_path, "file.yaml", text)
    code, out, err = run(capsys, "--format", "json", "--kind", kind, path)
    assert code == 1 and "Traceback" not in err
    [file] = json.loads(out)["files"]
    tagged = [e for e in file["errors"] if e["code"] == "yaml-tag"]
    assert len(tagged) == 1, file["errors"]
    if where is None:  # a connector file: the line that carries the tag
        line = next(n for n, text_line in enumerate(text.splitlines(), 1) if text_line.startswith("extra:"))
        where = (line, 8, "/extra")
    assert (tagged[0]["line"], tagged[0]["column"], tagged[0]["pointer"]) == where
