"""reviewdog's rdjson/rdjsonl and checkstyle XML converted to SARIF, and read back as results."""

import json

import pytest

from bot.analyzers.convert import ConvertError, checkout_uri, to_sarif
from bot.analyzers.fixes import line_fix
from bot.analyzers.sarif import read_sarif

RDJSONL = "\n".join(json.dumps(d) for d in [
    {"message": "unused variable 'x'", "location": {"path": "src/a.go", "range": {"start": {"line": 14, "column": 2},
                                                                                 "end": {"line": 14, "column": 3}}},
     "severity": "WARNING", "source": {"name": "golangci-lint", "url": "https://golangci-lint.run"},
     "code": {"value": "unused", "url": "https://golangci-lint.run/usage/linters/#unused"}},
    {"message": "misspelled word", "location": {"path": "/work/repo/docs/a.md", "range": {"start": {"line": 3}}},
     "severity": "INFO", "source": {"name": "misspell"},
     "suggestions": [{"range": {"start": {"line": 3, "column": 4}, "end": {"line": 3, "column": 11}},
                      "text": "receive"}]},
]) + "\n"


def test_rdjsonl_becomes_one_run_per_source_with_rules_and_levels():
    document = to_sarif(RDJSONL.encode(), "rdjsonl", root="/work/repo")
    assert document["version"] == "2.1.0" and [r["tool"]["driver"]["name"] for r in document["runs"]] == [
        "golangci-lint", "misspell"]
    assert document["runs"][0]["tool"]["driver"]["rules"] == [
        {"id": "unused", "helpUri": "https://golangci-lint.run/usage/linters/#unused"}]
    read = read_sarif(document)
    lint, spell = read.results
    assert (lint.tool, lint.rule_id, lint.level, lint.path, lint.start_line) == ("golangci-lint", "unused", "warning",
                                                                                "src/a.go", 14)
    assert (spell.level, spell.severity, spell.path) == ("note", "nit", "docs/a.md")
    fix = line_fix(spell.edits, {3: "We recieve mail"})
    assert fix.lines == ("We receive mail",)


def test_rdjson_takes_the_results_source_and_severity_as_defaults():
    report = {"source": {"name": "eslint"}, "severity": "ERROR", "diagnostics": [
        {"message": "no-undef", "location": {"path": "a.js", "range": {"start": {"line": 2}, "end": {"line": 4}}}}]}
    [found] = read_sarif(to_sarif(json.dumps(report).encode(), "rdjson")).results
    assert (found.tool, found.level, found.start_line, found.end_line) == ("eslint", "error", 2, 4)


def test_a_range_ending_at_the_start_of_a_line_ends_on_the_line_before():
    diagnostic = {"message": "m", "location": {"path": "a", "range": {"start": {"line": 5, "column": 23},
                                                                       "end": {"line": 6, "column": 1}}}}
    [found] = read_sarif(to_sarif(json.dumps(diagnostic).encode(), "rdjsonl")).results
    assert (found.start_line, found.end_line) == (5, 5)


def test_a_whole_line_suggestion_replaces_the_lines_with_their_line_breaks():
    diagnostic = {"message": "m", "location": {"path": "a.py", "range": {"start": {"line": 2}}},
                  "suggestions": [{"range": {"start": {"line": 2}, "end": {"line": 3}}, "text": "x = 1"}]}
    [found] = read_sarif(to_sarif(json.dumps(diagnostic).encode(), "rdjsonl", tool_name="mine")).results
    assert found.tool == "mine"
    assert line_fix(found.edits, {1: "a", 2: "b", 3: "c", 4: "d"}).lines == ("x = 1",)


CHECKSTYLE = b"""<?xml version="1.0" encoding="UTF-8"?>
<checkstyle version="10.12">
  <file name="/src/repo/src/main/App.java">
    <error line="12" column="5" severity="warning" message="Missing a Javadoc comment."
           source="com.puppycrawl.tools.checkstyle.checks.javadoc.MissingJavadocMethodCheck"/>
    <error line="30" severity="error" message="Line is longer than 100 characters (found 120)."
           source="com.puppycrawl.tools.checkstyle.checks.sizes.LineLengthCheck"/>
  </file>
  <file name="README"><error severity="info" message="file-level note"/></file>
</checkstyle>"""


def test_checkstyle_xml_becomes_results():
    read = read_sarif(to_sarif(CHECKSTYLE, "checkstyle", root="/src/repo"))
    javadoc, length, note = read.results
    assert (javadoc.tool, javadoc.path, javadoc.start_line, javadoc.level) == ("checkstyle", "src/main/App.java", 12,
                                                                              "warning")
    assert javadoc.rule_id.endswith("MissingJavadocMethodCheck") and length.level == "error"
    assert (note.path, note.start_line, note.level) == ("README", None, "note")


def test_checkstyle_xml_with_entities_is_refused():
    bomb = (b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;">]>'
            b'<checkstyle><file name="a"><error line="1" message="&b;"/></file></checkstyle>')
    with pytest.raises(ConvertError, match="refused XML feature"):
        to_sarif(bomb, "checkstyle")
    external = b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><checkstyle>&e;</checkstyle>'
    with pytest.raises(ConvertError):
        to_sarif(external, "checkstyle")


@pytest.mark.parametrize("data, fmt, words", [
    (b"{", "rdjson", "not JSON"),
    (b'{"diagnostics": 3}', "rdjson", "diagnostics"),
    (b'{"message": "m"}\n{oops\n', "rdjsonl", "line 2"),
    (b'{"location": {"path": "a"}}', "rdjsonl", "message"),
    (b'{"message": "m", "location": {}}', "rdjsonl", "location.path"),
    (b"<nope/>", "checkstyle", "<nope>"),
    (b"\xff\xfe", "sarif", "UTF-8"),
    (b"[]", "sarif", "not a JSON object"),
    (b"{}", "yaml", "not one of"),
])
def test_inputs_that_are_not_their_format_are_refused_by_place(data, fmt, words):
    with pytest.raises(ConvertError, match=words):
        to_sarif(data, fmt)


def test_a_sarif_file_passes_through_and_the_checkout_uri_is_a_file_uri(tmp_path):
    assert to_sarif(b'{"version": "2.1.0", "runs": []}', "sarif") == {"version": "2.1.0", "runs": []}
    assert checkout_uri(str(tmp_path)) == tmp_path.resolve().as_uri()


def test_an_absolute_path_outside_the_root_is_left_for_the_server_to_refuse():
    diagnostic = {"message": "m", "location": {"path": "/etc/passwd", "range": {"start": {"line": 1}}}}
    read = read_sarif(to_sarif(json.dumps(diagnostic).encode(), "rdjsonl", root="/work/repo"),
                      checkout_uri="file:///work/repo")
    assert read.problems[0].code == "uri-outside-repository"
