"""Reading a SARIF 2.1.0 document into results (pure): its shape checked, GitHub's limits kept.

GitHub's code scanning reads a subset of SARIF and refuses files past hard limits ("SARIF results
exceed hard limit": 20 runs per file, 25,000 results and 25,000 rules per run, 100 tool extensions
per run, 1,000 locations per result, 20 tags per rule, 10,000 thread-flow locations per result);
we refuse the same. Each result is read with its rule's defaults, found by `ruleIndex`, by
`rule.index` in the tool component `rule.toolComponent.index` names (CodeQL puts its rules in
`tool.extensions`), else by id: `defaultConfiguration.level`, `properties.security-severity`
(a number, or CodeQL's string "8.8"), `properties.tags`, `shortDescription`, `helpUri`.

What is not a problem to report is skipped and counted: `kind` pass or notApplicable, a result
with an accepted suppression, a `baselineState` of absent. Every refusal names its place as a JSON
pointer under `pointer_base` (`/sarif` for an upload).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from bot.analyzers.model import AnalyzerResult, Problem
from bot.analyzers.sarif_reader import GITHUB_LIMITS, Limits, Reader, Refused, as_list, as_mapping
from bot.analyzers.sarif_result import ResultReader
from bot.analyzers.uris import context_for

__all__ = ["GITHUB_LIMITS", "Limits", "SarifRead", "read_sarif"]


@dataclass(frozen=True)
class SarifRead:
    results: tuple[AnalyzerResult, ...] = ()
    problems: tuple[Problem, ...] = ()
    skipped: Mapping[str, int] = field(default_factory=dict)  # reason → count: suppressed, passed, absent
    tools: tuple[str, ...] = ()  # each run's driver name, in order


def read_sarif(document: Any, *, checkout_uri: str | None = None, repository_url: str | None = None,
               limits: Limits = GITHUB_LIMITS, pointer_base: str = "") -> SarifRead:
    """Every result of every run, or the problems that refuse the document (never raises)."""
    reader = Reader(limits, pointer_base)
    tools: list[str] = []
    try:
        runs = _runs(reader, document)
        for index, run in enumerate(runs):
            tool = _run(reader, run, f"/runs/{index}", checkout_uri, repository_url)
            if tool is not None:
                tools.append(tool)
    except Refused:
        pass
    if reader.problems:
        return SarifRead(problems=tuple(reader.problems), tools=tuple(tools))
    return SarifRead(tuple(reader.results), (), dict(reader.skipped), tuple(tools))


def _runs(reader: Reader, document: Any) -> list:
    if not isinstance(document, dict):
        reader.problem("", "type", "a SARIF log is a JSON object")
        return []
    version = document.get("version")
    if version != "2.1.0":
        reader.problem("/version", "sarif-version" if version is not None else "required",
                       "/version: must be \"2.1.0\" (SARIF 2.1.0, the version GitHub takes)"
                       if version is not None else "/version: \"2.1.0\" is required")
    schema = document.get("$schema")
    if schema is not None and not (isinstance(schema, str) and "2.1.0" in schema):
        reader.problem("/$schema", "sarif-version", "/$schema: names another SARIF version than 2.1.0")
    if "runs" not in document:
        reader.problem("/runs", "required", "/runs: a list of runs is required")
    return reader.array(document.get("runs"), "/runs", reader.limits.runs, "runs")


def _run(reader: Reader, run: Any, pointer: str, checkout_uri: str | None,
         repository_url: str | None) -> str | None:
    if not isinstance(run, dict):
        reader.problem(pointer, "type", f"{pointer}: a run is an object")
        return None
    tool = run.get("tool")
    driver = tool.get("driver") if isinstance(tool, dict) else None
    if not isinstance(driver, dict):
        reader.problem(f"{pointer}/tool/driver", "required", f"{pointer}/tool/driver: the tool's driver is required")
        return None
    name = reader.text(driver.get("name"), f"{pointer}/tool/driver/name", reader.limits.name_chars, required=True)
    if not name:
        return None
    components = [driver, *_extensions(reader, as_mapping(tool), pointer)]
    rules = [reader.array(c.get("rules"), f"{pointer}/tool/{'driver' if i == 0 else f'extensions/{i - 1}'}/rules",
                          reader.limits.rules_per_run, "rules") for i, c in enumerate(components)]
    if sum(map(len, rules)) > reader.limits.rules_per_run:
        reader.problem(f"{pointer}/tool", "too-many", f"{pointer}/tool: more than {reader.limits.rules_per_run:,} "
                                                      "rules in the run; GitHub's limit, which we keep")
    by_id: dict[str, dict] = {}
    for ci, component_rules in enumerate(rules):
        for ri, rule in enumerate(component_rules):
            _check_rule(reader, rule, f"{pointer}/tool/{'driver' if ci == 0 else f'extensions/{ci - 1}'}/rules/{ri}")
            if isinstance(rule, dict) and isinstance(rule.get("id"), str):
                by_id.setdefault(rule["id"], rule)
    context = context_for(run, checkout_uri, repository_url)
    artifacts = as_list(run.get("artifacts"))
    results = run.get("results")
    for index, result in enumerate(reader.array(results, f"{pointer}/results", reader.limits.results_per_run,
                                                "results")):
        found = ResultReader(reader, name, rules, by_id, context, artifacts).read(result, f"{pointer}/results/{index}")
        if found is not None:
            reader.results.append(found)
    return name


def _extensions(reader: Reader, tool: dict, pointer: str) -> list[dict]:
    found = reader.array(tool.get("extensions"), f"{pointer}/tool/extensions", reader.limits.extensions_per_run,
                         "tool extensions")
    return [e if isinstance(e, dict) else {} for e in found]


def _check_rule(reader: Reader, rule: Any, pointer: str) -> None:
    if not isinstance(rule, dict):
        reader.problem(pointer, "type", f"{pointer}: a rule is an object")
        return
    reader.text(rule.get("id"), f"{pointer}/id", reader.limits.name_chars, required=True)
    properties = rule.get("properties")
    if isinstance(properties, dict):
        reader.array(properties.get("tags"), f"{pointer}/properties/tags", reader.limits.tags_per_rule, "tags")
