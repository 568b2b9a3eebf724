"""ruff, ShellCheck and actionlint: which files each reads, how it is called so that it runs no
repository code and reads nothing outside its temporary copy, and its output as SARIF.

- ruff (`ruff check --output-format sarif`): ruff has no plugins; it reads the repository's
  `ruff.toml`, `.ruff.toml` or `pyproject.toml` `[tool.ruff]`. A configuration whose `extend`
  leaves the copy (absolute, `..`, `~` or `$VAR`, which ruff expands) is not copied, since ruff
  would read that file; `--no-cache` (no cache written, wherever `cache-dir` says), `--no-fix`
  (even with `fix = true`), `--force-exclude` (the repository's excludes hold for named files).
- ShellCheck (`shellcheck -f json1`): files are checked alone, never with `-x`, so no `source`d
  file is read; the repository's `.shellcheckrc` is rewritten to the keys that only choose checks
  (`enable`, `disable`, `shell`, `severity`, `extended-analysis`) and given with `--rcfile`, else
  `--norc`, so that `external-sources` or `source-path` from any `.shellcheckrc` (the repository's,
  or one above the temporary directory) never applies.
- actionlint (`actionlint -format '{{json .}}'`): its ShellCheck and pyflakes integrations are
  turned off (`-shellcheck= -pyflakes=`), since they start other programs; the repository's
  `.github/actionlint.yaml` (runner labels, variables, ignores: data) is given with `-config-file`.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
RUFF_CONFIGS = ("ruff.toml", ".ruff.toml", "pyproject.toml")
SHELLCHECK_RC = ".shellcheckrc"
ACTIONLINT_CONFIGS = (".github/actionlint.yaml", ".github/actionlint.yml")
_SHELL_SUFFIXES = (".sh", ".bash", ".ksh", ".bats")
_SHEBANG = re.compile(rb"^#!\s*(?:/usr/bin/env\s+(?:-S\s+)?)?(?:/\S*/)?(sh|bash|dash|ksh|mksh)\b")
_WORKFLOW = re.compile(r"^\.github/workflows/[^/]+\.ya?ml$")
_RC_KEYS = frozenset({"enable", "disable", "shell", "severity", "extended-analysis"})
_RC_VALUE = re.compile(r"^[A-Za-z0-9,_=-]+$")
# ruff's rule prefixes → the tags bot/analyzers/model.py maps to our categories.
_RUFF_TAGS = (("S", "security"), ("PERF", "performance"), ("D", "documentation"), ("B", "correctness"),
              ("PL", "correctness"), ("F", "correctness"), ("C90", "complexity"), ("E", "style"), ("W", "style"),
              ("I", "style"), ("N", "naming"), ("UP", "maintainability"), ("SIM", "maintainability"))


class Unavailable(Exception):
    """The tool is not installed."""


def binary(name: str) -> str:
    """The tool installed beside this Python (its PyPI package's), else on PATH."""
    found = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    if found is None:
        raise Unavailable(f"{name} is not installed on the server")
    return found


@dataclass(frozen=True)
class Tool:
    name: str  # the setting's key and the SARIF driver name
    wants: Callable[[str, bytes], bool]  # (path, head content) → check this file
    configs: Callable[[Mapping[str, bytes]], tuple[dict[str, bytes], list[str]]]  # repo configs → (kept, notes)
    argv: Callable[[str, list[str], dict[str, bytes]], list[str]]  # (binary, files, kept configs) → argv
    sarif: Callable[[bytes], dict[str, Any]]  # stdout → SARIF log


# ruff ----------------------------------------------------------------------------------------


def _ruff_wants(path: str, _content: bytes) -> bool:
    return path.endswith((".py", ".pyi"))


def _ruff_extend_leaves(table: Any) -> bool:
    extend = table.get("extend") if isinstance(table, dict) else None
    if extend is None:
        return False
    return (not isinstance(extend, str) or extend.startswith(("/", "\\")) or "~" in extend or "$" in extend
            or ".." in re.split(r"[\\/]", extend) or re.match(r"^[A-Za-z]:", extend) is not None)


def _ruff_configs(found: Mapping[str, bytes]) -> tuple[dict[str, bytes], list[str]]:
    kept: dict[str, bytes] = {}
    notes: list[str] = []
    for path, content in found.items():
        if path.rsplit("/", 1)[-1] not in RUFF_CONFIGS:
            continue
        try:
            data = tomllib.loads(content.decode("utf-8"))
        except (UnicodeDecodeError, tomllib.TOMLDecodeError):
            notes.append(f"ruff: {path} is not valid TOML; ruff ran without it")
            continue
        table: Any = data
        if path.endswith("pyproject.toml"):
            tool = data.get("tool", {})
            table = tool.get("ruff") if isinstance(tool, dict) else None
            if not isinstance(tool, dict) or not isinstance(table, dict | None):
                what = "`tool`" if not isinstance(tool, dict) else "`tool.ruff`"
                notes.append(f"ruff: {path}: {what} is not a table, so ruff cannot read the file; ruff ran without it")
                continue
        if _ruff_extend_leaves(table):
            notes.append(f"ruff: {path} extends a file outside the repository; ruff ran without it")
            continue
        kept[path] = content
    if not any(_ruff_config_at_root(path, content) for path, content in kept.items()):
        # ruff looks for a configuration up from each file, past the copy's root into the temporary
        # directory's parents: an empty one at the root ends the search there.
        kept["ruff.toml"] = b""
    return kept, notes


def _ruff_config_at_root(path: str, content: bytes) -> bool:
    if path in ("ruff.toml", ".ruff.toml"):
        return True
    return path == "pyproject.toml" and "ruff" in tomllib.loads(content.decode("utf-8")).get("tool", {})


def _ruff_argv(tool: str, files: list[str], _configs: dict[str, bytes]) -> list[str]:
    return [tool, "check", "--no-cache", "--no-fix", "--force-exclude", "--exit-zero", "--output-format", "sarif",
            "--", *files]


def _ruff_sarif(stdout: bytes) -> dict[str, Any]:
    document = json.loads(stdout)
    for run in document.get("runs", []):
        for rule in run.get("tool", {}).get("driver", {}).get("rules", []):
            rule_id = rule.get("id", "")
            tags = [tag for prefix, tag in _RUFF_TAGS if rule_id.startswith(prefix) and rule_id[len(prefix):][:1].isdigit()]
            if tags:
                rule.setdefault("properties", {}).setdefault("tags", tags[:1])
    return document


# ShellCheck ----------------------------------------------------------------------------------


def _shell_wants(path: str, content: bytes) -> bool:
    return path.endswith(_SHELL_SUFFIXES) or bool(_SHEBANG.match(content[:200]))


def _shellcheck_configs(found: Mapping[str, bytes]) -> tuple[dict[str, bytes], list[str]]:
    content = found.get(SHELLCHECK_RC)
    if content is None:
        return {}, []
    kept, dropped = [], []
    for line in content.decode("utf-8", "replace").splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        key, _, value = line.partition("=")
        if key.strip() in _RC_KEYS and _RC_VALUE.match(value.strip()):
            kept.append(f"{key.strip()}={value.strip()}")
        else:
            dropped.append(key.strip()[:40])
    notes = [f"shellcheck: {SHELLCHECK_RC} options not applied: {', '.join(sorted(set(dropped)))}"] if dropped else []
    return {SHELLCHECK_RC: ("\n".join(kept) + "\n").encode()}, notes


def _shellcheck_argv(tool: str, files: list[str], configs: dict[str, bytes]) -> list[str]:
    rc = ["--rcfile", SHELLCHECK_RC] if SHELLCHECK_RC in configs else ["--norc"]
    return [tool, "--format=json1", *rc, "--", *files]


_SHELLCHECK_LEVELS = {"error": "error", "warning": "warning", "info": "note", "style": "note"}


def _shellcheck_sarif(stdout: bytes) -> dict[str, Any]:
    comments = json.loads(stdout).get("comments", [])
    rules: dict[str, dict[str, Any]] = {}
    results = []
    for c in comments:
        rule_id = f"SC{c['code']}"
        rules.setdefault(rule_id, {"id": rule_id, "helpUri": f"https://www.shellcheck.net/wiki/{rule_id}",
                                   "properties": {"tags": ["style" if c["level"] in ("info", "style")
                                                           else "correctness"]}})
        region = {"startLine": c["line"], "endLine": c.get("endLine", c["line"]), "startColumn": c["column"],
                  "endColumn": c.get("endColumn", c["column"])}
        result: dict[str, Any] = {"ruleId": rule_id, "level": _SHELLCHECK_LEVELS.get(c["level"], "warning"),
                                  "message": {"text": c["message"]},
                                  "locations": [{"physicalLocation": {"artifactLocation": {"uri": c["file"]},
                                                                      "region": region}}]}
        replacements = [{"deletedRegion": {"startLine": r["line"], "startColumn": r["column"],
                                           "endLine": r["endLine"], "endColumn": r["endColumn"]},
                         "insertedContent": {"text": r["replacement"]}}
                        for r in ((c.get("fix") or {}).get("replacements") or [])]
        if replacements:
            result["fixes"] = [{"artifactChanges": [{"artifactLocation": {"uri": c["file"]},
                                                     "replacements": replacements}]}]
        results.append(result)
    return _log("shellcheck", "https://www.shellcheck.net", list(rules.values()), results)


# actionlint ----------------------------------------------------------------------------------


def _actionlint_wants(path: str, _content: bytes) -> bool:
    return bool(_WORKFLOW.match(path))


def _actionlint_configs(found: Mapping[str, bytes]) -> tuple[dict[str, bytes], list[str]]:
    for path in ACTIONLINT_CONFIGS:
        if path in found:
            return {path: found[path]}, []
    return {}, []


def _actionlint_argv(tool: str, files: list[str], configs: dict[str, bytes]) -> list[str]:
    config = ["-config-file", next(iter(configs))] if configs else []
    return [tool, "-format", "{{json .}}", "-no-color", "-shellcheck=", "-pyflakes=", *config, "--", *files]


def _actionlint_sarif(stdout: bytes) -> dict[str, Any]:
    errors = json.loads(stdout or b"[]")
    kinds = sorted({e["kind"] for e in errors})
    rules = [{"id": kind, "helpUri": "https://github.com/rhysd/actionlint/blob/main/docs/checks.md",
              "properties": {"tags": ["correctness"]}} for kind in kinds]
    results = []
    for e in errors:
        region = {"startLine": e["line"], "startColumn": e["column"]}
        if e.get("end_column", 0) >= e["column"]:
            region["endColumn"] = e["end_column"] + 1  # actionlint's end column is the last one, SARIF's the next
        results.append({"ruleId": e["kind"], "level": "error", "message": {"text": e["message"]},
                        "locations": [{"physicalLocation": {"artifactLocation": {"uri": e["filepath"]},
                                                            "region": region}}]})
    return _log("actionlint", "https://github.com/rhysd/actionlint", rules, results)


def _log(name: str, uri: str, rules: list[dict[str, Any]], results: list[dict[str, Any]]) -> dict[str, Any]:
    return {"$schema": SCHEMA, "version": "2.1.0",
            "runs": [{"tool": {"driver": {"name": name, "informationUri": uri, "rules": rules}}, "results": results}]}


TOOLS: Mapping[str, Tool] = {
    "ruff": Tool("ruff", _ruff_wants, _ruff_configs, _ruff_argv, _ruff_sarif),
    "shellcheck": Tool("shellcheck", _shell_wants, _shellcheck_configs, _shellcheck_argv, _shellcheck_sarif),
    "actionlint": Tool("actionlint", _actionlint_wants, _actionlint_configs, _actionlint_argv, _actionlint_sarif),
}
CONFIG_FILES = (*RUFF_CONFIGS, SHELLCHECK_RC, *ACTIONLINT_CONFIGS)
