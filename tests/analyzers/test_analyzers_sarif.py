"""Reading SARIF: real tools' shapes, the rules' defaults, severities, and what leaves the repository."""

import shutil
import sys
from pathlib import Path

import pytest

from bot.analyzers.model import category_of, severity_of
from bot.analyzers.sarif import Limits, read_sarif
from bot.analyzers.uris import UriContext, UriError, resolve
from tests.support.analyzers_support import load, log, result, ruff_sarif

RUFF = shutil.which("ruff", path=str(Path(sys.executable).parent))


@pytest.mark.parametrize("level, security, expected", [
    ("error", None, "important"), ("warning", None, "minor"), ("note", None, "nit"), ("none", None, "nit"),
    ("note", 9.0, "blocking"), ("warning", 7.0, "important"), ("note", 6.9, "nit"),
    ("error", 9.8, "blocking"), ("error", 7.5, "important"), ("warning", 8.9, "important"),
])
def test_the_severity_is_the_higher_of_the_level_and_the_security_severity(level, security, expected):
    assert severity_of(level, security) == expected


def test_categories_come_from_the_rule_tags_security_first():
    assert category_of(["external/cwe/cwe-089", "security", "correctness"]) == "security"
    assert category_of(["maintainability", "useless-code"]) == "maintainability"
    assert category_of(["Readability"]) == "style"
    assert category_of(["LOW CONFIDENCE"]) == "other" and category_of([]) == "other"


def test_codeql_rules_are_found_in_the_extensions_with_their_string_security_severity():
    read = read_sarif(load("codeql-python.sarif"))
    assert read.problems == () and read.tools == ("CodeQL",)
    sql, unused, code = read.results
    assert (sql.rule_id, sql.path, sql.start_line, sql.end_line) == ("py/sql-injection", "app/views.py", 12, 12)
    assert (sql.level, sql.security_severity, sql.severity, sql.category) == ("error", 8.8, "important", "security")
    assert sql.partial_fingerprints["primaryLocationLineHash"] == "6a1b2c3d4e5f6071:1"
    assert sql.rule_name == "SQL query built from user-controlled sources"
    assert (unused.path, unused.level, unused.severity, unused.category) == ("app/util.py", "note", "nit",
                                                                            "maintainability")
    assert (code.security_severity, code.severity) == (9.3, "blocking")


def test_semgrep_results_keep_their_fingerprints_help_and_fix():
    read = read_sarif(load("semgrep.sarif"))
    eval_, timeout = read.results
    assert eval_.tool == "Semgrep OSS" and eval_.level == "warning" and eval_.category == "security"
    assert eval_.help_uri == "https://semgrep.dev/r/python.lang.security.audit.eval-detected.eval-detected"
    assert list(eval_.partial_fingerprints) == ["matchBasedId/v1"]
    assert (timeout.level, timeout.severity, timeout.category) == ("note", "nit", "bug")
    [edit] = timeout.edits
    assert (edit.start_line, edit.start_column, edit.end_column, edit.text) == (
        14, 5, 29, "resp = requests.get(url, timeout=10)")


@pytest.mark.skipif(RUFF is None, reason="ruff is not installed beside this Python")
def test_ruffs_own_sarif_reads_with_the_checkout_making_its_file_uris_relative(tmp_path):
    document = ruff_sarif(tmp_path, {"pkg/mod.py": "import os\n\n\ndef f(x):\n    return x == None\n"}, RUFF)
    read = read_sarif(document, checkout_uri=tmp_path.as_uri())
    assert read.problems == ()
    by_rule = {r.rule_id: r for r in read.results}
    assert by_rule["F401"].path == "pkg/mod.py" and by_rule["F401"].start_line == 1
    assert by_rule["E711"].start_line == 5 and by_rule["E711"].level == "error"
    assert by_rule["F401"].edits and by_rule["F401"].help_uri.startswith("https://docs.astral.sh/ruff/rules/")
    refused = read_sarif(document)  # the same file without knowing where the checkout was
    assert refused.results == () and {p.code for p in refused.problems} == {"uri-outside-repository"}


def test_a_level_comes_from_the_rule_default_else_warning_and_kinds_other_than_fail_are_none():
    rules = [{"id": "R1", "defaultConfiguration": {"level": "error"}}]
    plain = {"ruleId": "R1", "message": {"text": "m"}}
    read = read_sarif(log(plain, {**plain, "ruleId": "R2"}, {**plain, "kind": "review"}, rules=rules))
    assert [r.level for r in read.results] == ["error", "warning", "none"]


def test_passes_suppressions_and_absent_results_are_skipped_and_counted():
    read = read_sarif(log(result(), result(kind="pass"), result(suppressions=[{"kind": "inSource"}]),
                          result(suppressions=[{"kind": "external", "status": "rejected"}]),
                          result(baselineState="absent")))
    assert len(read.results) == 2 and read.skipped == {"passed": 1, "suppressed": 1, "absent": 1}


def test_message_strings_and_arguments_fill_a_message_by_id():
    rules = [{"id": "R1", "messageStrings": {"default": {"text": "'{0}' is unused in {1}"}}}]
    read = read_sarif(log({"ruleId": "R1", "message": {"id": "default", "arguments": ["x", "f"]}}, rules=rules))
    assert read.results[0].message == "'x' is unused in f"


def test_a_result_without_region_is_on_the_whole_file_and_without_location_on_no_file():
    whole = {"ruleId": "R", "message": {"text": "m"},
             "locations": [{"physicalLocation": {"artifactLocation": {"uri": "a.py"}}}]}
    read = read_sarif(log(whole, {"ruleId": "R", "message": {"text": "m"}}))
    assert [(r.path, r.start_line) for r in read.results] == [("a.py", None), (None, None)]


@pytest.mark.parametrize("document, pointer, code", [
    ([], "", "type"),
    ({"version": "2.0.0", "runs": []}, "/version", "sarif-version"),
    ({"runs": []}, "/version", "required"),
    ({"version": "2.1.0", "$schema": "https://example.com/sarif-schema-2.0.0.json", "runs": []}, "/$schema",
     "sarif-version"),
    ({"version": "2.1.0"}, "/runs", "required"),
    ({"version": "2.1.0", "runs": [{"tool": {}}]}, "/runs/0/tool/driver", "required"),
    (log({"ruleId": "R"}), "/runs/0/results/0/message", "required"),
    (log(result(level="fatal")), "/runs/0/results/0/level", "enum"),
    (log(result(line=0)), "/runs/0/results/0/locations/0/physicalLocation/region/startLine", "minimum"),
])
def test_a_document_that_is_not_sarif_2_1_0_is_refused_at_its_place(document, pointer, code):
    read = read_sarif(document, pointer_base="/sarif")
    assert read.results == () and (read.problems[0].pointer, read.problems[0].code) == ("/sarif" + pointer, code)


def test_githubs_limits_are_kept_runs_results_locations_tags():
    small = Limits(runs=2, results_per_run=3, locations_per_result=2, tags_per_rule=2)
    assert read_sarif({"version": "2.1.0", "runs": [log()["runs"][0]] * 3}, limits=small).problems[0].code == "too-many"
    assert read_sarif(log(*[result()] * 4), limits=small).problems[0].pointer == "/runs/0/results"
    many = result(locations=[result()["locations"][0]] * 3)
    assert read_sarif(log(many), limits=small).problems[0].pointer == "/runs/0/results/0/locations"
    tagged = [{"id": "R1", "properties": {"tags": ["a", "b", "c"]}}]
    assert read_sarif(log(result(), rules=tagged), limits=small).problems[0].pointer == \
        "/runs/0/tool/driver/rules/0/properties/tags"


def test_a_huge_message_is_refused_not_kept():
    read = read_sarif(log(result(message={"text": "x" * 100_001})))
    assert read.problems[0].code == "too-large" and read.problems[0].pointer == "/runs/0/results/0/message/text"


def test_reading_stops_after_twenty_problems():
    read = read_sarif(log(*[result(uri="../x.py")] * 100))
    assert len(read.problems) == 20


@pytest.mark.parametrize("uri", [
    "../etc/passwd", "src/../../etc/passwd", "%2e%2e/secret", "src\\..\\..\\x", "/etc/passwd",
    "file:///etc/passwd", "file://evil.example/share/a.py", "https://evil.example/o/r/blob/main/a.py",
    "C:\\Windows\\win.ini", "git://host/x", "a\x00b.py", "", ".", "src/..",
])
def test_uris_outside_the_repository_are_refused(uri):
    read = read_sarif(log(result(uri=uri)), checkout_uri="file:///home/runner/work/r/r")
    assert read.results == () and read.problems[0].code == "uri-outside-repository"
    assert read.problems[0].pointer == "/runs/0/results/0/locations/0/physicalLocation/artifactLocation/uri"


def test_uris_inside_the_checkout_or_the_srcroot_base_are_made_relative():
    context = UriContext(checkout="/w/r")
    assert resolve("file:///w/r/src/a.py", None, context) == "src/a.py"
    assert resolve("/w/r/src/./b%20c.py", None, context) == "src/b c.py"
    assert resolve("src/x/../a.py", None, context) == "src/a.py"
    with pytest.raises(UriError):
        resolve("file:///w/rogue/a.py", None, context)  # a sibling whose name starts like the checkout
    bases = {"SRCROOT": {"uri": "file:///build/src/"}, "LIB": {"uri": "lib/", "uriBaseId": "SRCROOT"}}
    run = log(result(uri="file:///build/src/a.py"), result(uri="m.py", uriBaseId="LIB"))["runs"][0]
    run["results"][1]["locations"][0]["physicalLocation"]["artifactLocation"]["uriBaseId"] = "LIB"
    read = read_sarif({"version": "2.1.0", "runs": [{**run, "originalUriBaseIds": bases}]})
    assert [r.path for r in read.results] == ["a.py", "lib/m.py"]


def test_a_base_outside_the_checkout_is_refused():
    run = log(result(uri="a.py"))["runs"][0]
    run["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uriBaseId"] = "OUT"
    document = {"version": "2.1.0", "runs": [{**run, "originalUriBaseIds": {"OUT": {"uri": "file:///etc/"}}}]}
    assert read_sarif(document, checkout_uri="file:///w/r").problems[0].code == "uri-outside-repository"


def test_web_addresses_of_the_repository_itself_are_paths():
    read = read_sarif(log(result(uri="https://github.com/o/r/blob/abc123/src/a.py#L3")),
                      repository_url="https://github.com/o/r")
    assert read.results[0].path == "src/a.py"


def test_every_location_is_checked_not_only_the_first():
    bad = result(locations=[result()["locations"][0], result(uri="/etc/shadow")["locations"][0]])
    assert read_sarif(log(bad)).problems[0].pointer.endswith("/locations/1/physicalLocation/artifactLocation/uri")


def test_a_fix_touching_another_file_is_not_used():
    fix = {"artifactChanges": [{"artifactLocation": {"uri": "other.py"},
                                "replacements": [{"deletedRegion": {"startLine": 3}, "insertedContent": {"text": "x"}}]}]}
    assert read_sarif(log(result(fixes=[fix]))).results[0].edits == ()
