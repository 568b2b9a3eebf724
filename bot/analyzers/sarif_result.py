"""Reading one SARIF result (pure): its rule, message, level, location, fingerprints and fix."""

from __future__ import annotations

import re
from typing import Any

from bot.analyzers.model import LEVELS, AnalyzerResult, Edit
from bot.analyzers.sarif_reader import Reader, as_list, as_mapping, is_line, number, strings
from bot.analyzers.uris import UriContext, UriError, resolve

MAX_MESSAGE_CHARS = 4000  # what a finding keeps (bot/reviews/findings.py keeps as much)
_PLACEHOLDER = re.compile(r"\{(\d+)\}")
_SKIPPED_KINDS = frozenset({"pass", "notApplicable"})


class ResultReader:
    """Reads the results of one run, against its rules and its URI context."""

    def __init__(self, reader: Reader, tool: str, rules: list[list], by_id: dict[str, dict],
                 context: UriContext, artifacts: list) -> None:
        self.reader, self.tool, self.rules, self.by_id = reader, tool, rules, by_id
        self.context, self.artifacts = context, artifacts

    def read(self, result: Any, pointer: str) -> AnalyzerResult | None:
        reader = self.reader
        if not isinstance(result, dict):
            reader.problem(pointer, "type", f"{pointer}: a result is an object")
            return None
        rule = self.rule(result)
        rule_id = reader.text(result.get("ruleId"), f"{pointer}/ruleId", reader.limits.name_chars)
        if rule_id is None:
            ref_id = as_mapping(result.get("rule")).get("id")
            rule_id = ref_id if isinstance(ref_id, str) else rule.get("id") if isinstance(rule.get("id"), str) else None
        message = self.message(result, rule, pointer)
        level = self.level(result, rule, pointer)
        locations = reader.array(result.get("locations"), f"{pointer}/locations",
                                 reader.limits.locations_per_result, "locations")
        self.check_flows(result, pointer)
        path, start, end = self.location(locations, pointer)
        if message is None or level is None:
            return None
        if reason := self.skip_reason(result):
            self.reader.skipped[reason] += 1
            return None
        properties = as_mapping(rule.get("properties"))
        tags = strings(properties.get("tags")) + strings(as_mapping(result.get("properties")).get("tags"))
        return AnalyzerResult(
            tool=self.tool, rule_id=rule_id, level=level,
            security_severity=number(properties.get("security-severity")),
            message=message[:MAX_MESSAGE_CHARS], path=path, start_line=start, end_line=end,
            edits=self.edits(result, path, pointer) if path else (),
            partial_fingerprints=self.fingerprints(result, pointer),
            help_uri=_help_uri(rule), rule_name=_rule_name(rule), tags=tuple(dict.fromkeys(tags)),
        )

    def rule(self, result: dict) -> dict:
        ref = as_mapping(result.get("rule"))
        component = as_mapping(ref.get("toolComponent")).get("index")
        rules = self.rules[0]
        if isinstance(component, int) and not isinstance(component, bool) and 0 <= component < len(self.rules) - 1:
            rules = self.rules[component + 1]
        index = result.get("ruleIndex", ref.get("index"))
        if isinstance(index, int) and not isinstance(index, bool) and 0 <= index < len(rules):
            return as_mapping(rules[index])
        rule_id = result.get("ruleId", ref.get("id"))
        return self.by_id.get(rule_id, {}) if isinstance(rule_id, str) else {}

    def message(self, result: dict, rule: dict, pointer: str) -> str | None:
        message = result.get("message")
        if not isinstance(message, dict):
            self.reader.problem(f"{pointer}/message", "required" if message is None else "type",
                                f"{pointer}/message: a message object is required")
            return None
        text = self.reader.text(message.get("text"), f"{pointer}/message/text", self.reader.limits.text_chars)
        if text is None and isinstance(message.get("id"), str):
            template = as_mapping(as_mapping(rule.get("messageStrings")).get(message["id"])).get("text")
            text = template if isinstance(template, str) else None
        if text is None:
            text = _rule_name(rule)
        if not text or not text.strip():
            self.reader.problem(f"{pointer}/message", "required", f"{pointer}/message: text (or an id of the rule's "
                                                                  "messageStrings) is required")
            return None
        arguments = as_list(message.get("arguments"))
        return _PLACEHOLDER.sub(lambda m: str(arguments[int(m[1])]) if int(m[1]) < len(arguments) else m[0],
                                text[: self.reader.limits.text_chars]).strip()

    def level(self, result: dict, rule: dict, pointer: str) -> str | None:
        level = result.get("level")
        if level is None:
            kind = result.get("kind", "fail")
            default = as_mapping(rule.get("defaultConfiguration")).get("level")
            level = (default if default in LEVELS else "warning") if kind == "fail" else "none"
        if level not in LEVELS:
            self.reader.problem(f"{pointer}/level", "enum", f"{pointer}/level: must be one of {', '.join(LEVELS)}")
            return None
        return level

    def skip_reason(self, result: dict) -> str | None:
        if result.get("kind") in _SKIPPED_KINDS:
            return "passed"
        suppressions = result.get("suppressions")
        if isinstance(suppressions, list) and any(isinstance(s, dict) and s.get("status", "accepted") == "accepted"
                                                  for s in suppressions):
            return "suppressed"
        if result.get("baselineState") == "absent":
            return "absent"
        return None

    def check_flows(self, result: dict, pointer: str) -> None:
        total = 0
        for flow in result.get("codeFlows") or []:
            for thread in as_mapping(flow).get("threadFlows") or []:
                locations = as_mapping(thread).get("locations")
                total += len(locations) if isinstance(locations, list) else 0
        if total > self.reader.limits.thread_flow_locations_per_result:
            self.reader.problem(f"{pointer}/codeFlows", "too-many", f"{pointer}/codeFlows: {total:,} thread-flow "
                                f"locations; GitHub's limit, which we keep, is "
                                f"{self.reader.limits.thread_flow_locations_per_result:,}")

    def location(self, locations: list, pointer: str) -> tuple[str | None, int | None, int | None]:
        """The first location's path and lines; every location's URI is checked."""
        found: tuple[str | None, int | None, int | None] = (None, None, None)
        for index, location in enumerate(locations):
            physical = as_mapping(as_mapping(location).get("physicalLocation"))
            where = f"{pointer}/locations/{index}/physicalLocation"
            path = self.path(physical.get("artifactLocation"), f"{where}/artifactLocation")
            if index == 0 and path is not None:
                start, end = self.region(physical.get("region"), f"{where}/region")
                found = (path, start, end)
        return found

    def path(self, artifact: Any, pointer: str) -> str | None:
        artifact = as_mapping(artifact)
        index = artifact.get("index")
        if "uri" not in artifact and isinstance(index, int) and 0 <= index < len(self.artifacts):
            artifact = as_mapping(as_mapping(self.artifacts[index]).get("location"))
        if "uri" not in artifact:
            return None
        try:
            return resolve(artifact["uri"], artifact.get("uriBaseId"), self.context)
        except UriError as exc:
            self.reader.problem(f"{pointer}/uri", exc.code, f"{pointer}/uri: {exc.message}")
            return None

    def region(self, region: Any, pointer: str) -> tuple[int | None, int | None]:
        region = as_mapping(region)
        start, end = region.get("startLine"), region.get("endLine", region.get("startLine"))
        if start is None:
            return None, None  # a region by characters or bytes alone: the whole file
        for key, value in (("startLine", start), ("endLine", end)):
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                self.reader.problem(f"{pointer}/{key}", "minimum", f"{pointer}/{key}: an integer of at least 1 "
                                                                   "is required")
                return None, None
        if end < start:
            self.reader.problem(f"{pointer}/endLine", "minimum", f"{pointer}/endLine: must not be before startLine")
            return None, None
        return start, end

    def fingerprints(self, result: dict, pointer: str) -> dict[str, str]:
        for key in ("partialFingerprints", "fingerprints"):
            given = as_mapping(result.get(key))
            found = {k[: self.reader.limits.name_chars]: v for k, v in given.items() if isinstance(v, str)}
            if any(len(v) > self.reader.limits.name_chars for v in found.values()):
                self.reader.problem(f"{pointer}/{key}", "too-large", f"{pointer}/{key}: a fingerprint longer than "
                                                                     f"{self.reader.limits.name_chars} characters")
                return {}
            if found:
                return found
        return {}

    def edits(self, result: dict, path: str, pointer: str) -> tuple[Edit, ...]:
        """The first fix whose changes are all to this result's own file, by lines and columns."""
        for fix in result.get("fixes") or []:
            changes = as_mapping(fix).get("artifactChanges")
            if not isinstance(changes, list) or not changes:
                continue
            edits: list[Edit] = []
            usable = True
            for change in changes:
                change = as_mapping(change)
                try:
                    where = as_mapping(change.get("artifactLocation"))
                    same = resolve(where.get("uri"), where.get("uriBaseId"), self.context) == path
                except UriError:
                    same = False
                replacements = change.get("replacements")
                if not same or not isinstance(replacements, list):
                    usable = False
                    break
                for replacement in replacements:
                    edit = _edit(as_mapping(replacement), self.reader.limits.text_chars)
                    if edit is None:
                        usable = False
                        break
                    edits.append(edit)
            if usable and edits:
                return tuple(edits)
        return ()

def _edit(replacement: dict, limit: int) -> Edit | None:
    region = as_mapping(replacement.get("deletedRegion"))
    start = region.get("startLine")
    end = region.get("endLine", start)
    text = as_mapping(replacement.get("insertedContent")).get("text", "")
    if not (is_line(start) and is_line(end)):
        return None  # a region by character offsets: not a change of lines we can show
    columns = [region.get("startColumn"), region.get("endColumn")]
    if any(c is not None and (not isinstance(c, int) or isinstance(c, bool) or c < 1) for c in columns):
        return None
    if not isinstance(text, str) or len(text) > limit or end < start:
        return None
    return Edit(start, columns[0], end, columns[1], text)


def _rule_name(rule: dict) -> str | None:
    short = as_mapping(rule.get("shortDescription")).get("text")
    name = short if isinstance(short, str) and short.strip() else rule.get("name")
    return name.strip()[:200] if isinstance(name, str) and name.strip() else None


def _help_uri(rule: dict) -> str | None:
    uri = rule.get("helpUri")
    return uri if isinstance(uri, str) and uri.startswith(("https://", "http://")) and len(uri) <= 2048 else None
