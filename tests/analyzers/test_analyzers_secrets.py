"""Secret scanning of the added lines: blocking findings that name the kind and the line, and never
the value — searched for in every output: the SARIF, the results, the findings, the notes, the logs."""

import asyncio
import json
import logging

import pytest

from bot.analyzers.builtin import run_builtins
from bot.analyzers.builtin.secrets import scan_secrets
from bot.analyzers.filter import place
from bot.analyzers.settings import AnalyzerSettings
from bot.reviews.diff import read_patches

# Made up here, in the formats the detectors know; split so that no scanner of this repository
# flags the test itself.
AWS_KEY = "AKIA" + "Q3EGRT5JXMPLVW4Z"
GITHUB_TOKEN = "ghp_" + "k8Rz2QpLm4Vx7NcB1sTe9YhW3dJf6GaU0iKo"
PRIVATE_KEY_LINE = "-----BEGIN " + "RSA PRIVATE KEY-----"
PASSWORD = "Tr0ub4dor&3-" + "horse-battery"
SECRETS = (AWS_KEY, GITHUB_TOKEN, PASSWORD)


def added(*lines: str, start: int = 1) -> str:
    return f"@@ -0,0 +{start},{len(lines)} @@\n" + "".join(f"+{line}\n" for line in lines)


def patches(**files: str):
    return read_patches([{"filename": path.replace("__", "/").replace("_DOT_", "."), "status": "added",
                          "patch": patch} for path, patch in files.items()])


PR = patches(
    config__settings_DOT_py="@@ -1,2 +1,6 @@\n import os\n+REGION = 'eu-west-1'\n"
                            f"+AWS_ACCESS_KEY_ID = '{AWS_KEY}'\n+db_password = \"{PASSWORD}\"\n"
                            f"+client = Github('{GITHUB_TOKEN}')\n debug = False\n",
    deploy__key_DOT_pem=added(PRIVATE_KEY_LINE, "MIIEowIBAAKCAQEA7Zs9qk2u", "-----END RSA PRIVATE KEY-----"),
)


def test_a_pull_request_adding_a_cloud_key_gets_a_blocking_finding_on_its_line():
    run = asyncio.run(run_builtins(AnalyzerSettings(), PR, {}, {}))
    found = {(r.path, r.start_line, r.rule_id) for r in run.results}
    assert found == {("config/settings.py", 3, "aws-access-key"), ("config/settings.py", 4, "secret-keyword"),
                     ("config/settings.py", 5, "github-token"), ("deploy/key.pem", 1, "private-key")}
    assert {r.severity for r in run.results} == {"blocking"} and {r.category for r in run.results} == {"security"}
    aws = next(r for r in run.results if r.rule_id == "aws-access-key")
    assert aws.message.startswith("AWS Access Key added on line 3") and aws.tool == "detect-secrets"


def test_no_output_quotes_a_secret(caplog):
    caplog.set_level(logging.DEBUG)
    document = scan_secrets(PR)
    run = asyncio.run(run_builtins(AnalyzerSettings(), PR, {}, {}))
    placement = place(run.results, PR, mode="nofilter")
    outputs = [json.dumps(document), repr(run), repr(placement), repr([f.to_finding() for f in placement.findings]),
               caplog.text]
    assert len(placement.inline) == 4
    for secret in SECRETS:
        for output in outputs:
            assert secret not in output
            assert secret[4:16] not in output  # nor a piece of it


def test_the_same_secret_on_a_moved_line_keeps_its_fingerprint():
    first = place(asyncio.run(run_builtins(AnalyzerSettings(), PR, {}, {})).results, PR).inline
    moved = patches(config__settings_DOT_py=added("# a comment", "", f"AWS_ACCESS_KEY_ID = '{AWS_KEY}'", start=40))
    again = place(asyncio.run(run_builtins(AnalyzerSettings(), moved, {}, {})).results, moved).inline
    assert again[0].start_line == 42
    assert again[0].fingerprint in {f.fingerprint for f in first}


@pytest.mark.parametrize("path, line", [
    ("docs/aws.md", "aws_access_key_id = AKIAIOSFODNN7EXAMPLE"),  # AWS's own documentation key
    ("app/settings.py", "password = 'changeme'"),
    ("app/settings.py", "api_key = '<your-api-key>'"),
    ("app/settings.py", "token = 'xxxxxxxxxxxxxxxxxxxxxxxxxxxx'"),
    ("tests/fixtures/response.py", "etag = 'b3f1c0ffee9d4a1e8c7b6a5f4e3d2c1b0a9f8e7d6c5b4a39'"),
    ("tests/test_api.py", "password = 'Zq8#vT2!mK9@pL4$'"),
    ("pkg/versions.py", "COMMIT_SHA = 'b3f1c0ffee9d4a1e8c7b6a5f4e3d2c1b0a9f8e7d'"),
    ("app/views.py", "password = request.form['password']"),
    ("package-lock.json", '"integrity": "sha512-Kq5sNDMPSmJ0p1dH8wZ5a5n8dZV2H9u6y0WJv8bGgXyZrQ2bPzLQ=="'),
])
def test_placeholders_fixtures_hashes_and_references_are_not_secrets(path, line):
    assert scan_secrets(read_patches([{"filename": path, "patch": added(line)}]))["runs"][0]["results"] == []


def test_a_real_format_key_in_a_test_is_still_found():
    found = scan_secrets(read_patches([{"filename": "tests/test_s3.py", "patch": added(f"KEY = '{AWS_KEY}'")}]))
    assert [r["ruleId"] for r in found["runs"][0]["results"]] == ["aws-access-key"]


def test_only_added_lines_are_scanned():
    context_only = read_patches([{"filename": "a.py", "patch": f"@@ -1,2 +1,3 @@\n KEY = '{AWS_KEY}'\n+x = 1\n y\n"}])
    removed = read_patches([{"filename": "a.py", "patch": f"@@ -1,2 +1,1 @@\n-KEY = '{AWS_KEY}'\n y\n"}])
    assert scan_secrets(context_only)["runs"][0]["results"] == []
    assert scan_secrets(removed)["runs"][0]["results"] == []


def test_turned_off_secret_scanning_runs_nothing():
    assert asyncio.run(run_builtins(AnalyzerSettings(secrets=False), PR, {}, {})).runs == ()


def test_scans_in_threads_take_turns_and_agree():
    async def many():
        return await asyncio.gather(*[run_builtins(AnalyzerSettings(), PR, {}, {}) for _ in range(4)])
    runs = asyncio.run(many())
    assert len({tuple(sorted((r.path, r.start_line) for r in run.results)) for run in runs}) == 1
