"""Other report formats → SARIF 2.1.0 (pure), so that every analyzer's output takes one path.

- reviewdog's Diagnostic Format (proto/rdf/reviewdog.proto): `rdjson` is one `DiagnosticResult`
  (`{"source", "severity", "diagnostics": [...]}`), `rdjsonl` one `Diagnostic` per line
  (`{"message", "location": {"path", "range": {"start": {"line", "column"}, "end": ...}},
  "severity": "ERROR"|"WARNING"|"INFO", "source": {"name", "url"}, "code": {"value", "url"},
  "suggestions": [{"range", "text"}]}`). A range's end column is exclusive, as SARIF's is; a range
  without columns is whole lines, the last one's line break included.
- checkstyle XML (`<checkstyle><file name><error line column severity message source/></file>`),
  read with defusedxml (no entities, no external references).

Each source (reviewdog's `source.name`, else the `tool_name` given, else the format) becomes one
run; rule ids become the run's rules, with their URLs. Absolute paths under `root` (the directory
the tool ran in) become relative, as reviewdog does; any other absolute path is left for the
server to refuse.
"""

from __future__ import annotations

import json
import posixpath
from collections.abc import Iterable
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import quote

from defusedxml import ElementTree
from defusedxml.common import DefusedXmlException

FORMATS = ("sarif", "rdjson", "rdjsonl", "checkstyle")
SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_RD_LEVELS = {"ERROR": "error", "WARNING": "warning", "INFO": "note"}
_CHECKSTYLE_LEVELS = {"error": "error", "warning": "warning", "info": "note", "ignore": "none"}
MAX_INPUT_BYTES = 100 * 1024 * 1024


class ConvertError(ValueError):
    """An input that is not the format it was said to be; the message names the place."""


def to_sarif(data: bytes, fmt: str, *, tool_name: str | None = None, root: str | None = None) -> dict[str, Any]:
    """The SARIF log of a report in `fmt` (one of FORMATS); raises ConvertError."""
    if len(data) > MAX_INPUT_BYTES:
        raise ConvertError(f"the report is larger than {MAX_INPUT_BYTES:,} bytes")
    if fmt == "checkstyle":
        return _checkstyle(data, tool_name or "checkstyle", root)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ConvertError(f"the report is not UTF-8 text (byte {exc.start})") from None
    if fmt == "sarif":
        document = _json(text, "the SARIF file")
        if not isinstance(document, dict):
            raise ConvertError("the SARIF file is not a JSON object")
        return document
    if fmt == "rdjson":
        result = _json(text, "the rdjson report")
        if not isinstance(result, dict) or not isinstance(result.get("diagnostics", []), list):
            raise ConvertError("the rdjson report is not a DiagnosticResult object with a `diagnostics` list")
        return _reviewdog(result.get("diagnostics", []), result, tool_name or "reviewdog", root)
    if fmt == "rdjsonl":
        lines = [(n, line) for n, line in enumerate(text.splitlines(), 1) if line.strip()]
        diagnostics = [_json(line, f"line {n} of the rdjsonl report") for n, line in lines]
        return _reviewdog(diagnostics, {}, tool_name or "reviewdog", root, [n for n, _ in lines])
    raise ConvertError(f"format {fmt!r} is not one of {', '.join(FORMATS)}")


def _json(text: str, what: str) -> Any:
    try:
        return json.loads(text)
    except ValueError as exc:
        raise ConvertError(f"{what} is not JSON: {exc}") from None
    except RecursionError:
        raise ConvertError(f"{what} is nested too deeply") from None


def _path(path: Any, root: str | None, where: str) -> str:
    if not isinstance(path, str) or not path:
        raise ConvertError(f"{where}: location.path is required")
    path = path.replace("\\", "/")
    if root and path.startswith("/"):
        base = posixpath.normpath(root.replace("\\", "/"))
        normal = posixpath.normpath(path)
        if normal.startswith(base.rstrip("/") + "/"):
            return normal[len(base.rstrip("/")) + 1:]
    return path


def _uri(path: str) -> str:
    return PurePosixPath(path).as_uri() if path.startswith("/") else quote(path)


def _obj(value: Any, default: dict | None = None) -> dict:
    return value if isinstance(value, dict) else ({} if default is None else default)


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 1 else None


def _region(range_: Any) -> dict[str, int] | None:
    """reviewdog's range as a SARIF region; whole lines where no column is given."""
    if not isinstance(range_, dict):
        return None
    start = _obj(range_.get("start"))
    end = _obj(range_.get("end"))
    line = _int(start.get("line"))
    if line is None:
        return None
    region = {"startLine": line}
    end_line = _int(end.get("line")) or line
    if _int(start.get("column")):
        region["startColumn"] = start["column"]
    if _int(end.get("column")):
        if end["column"] == 1 and end_line > line:  # up to the start of a line: the line before, whole
            end_line -= 1
        else:
            region["endColumn"] = end["column"]
    region["endLine"] = max(end_line, line)
    return region


def _replacement(suggestion: Any) -> dict[str, Any] | None:
    if not isinstance(suggestion, dict) or not isinstance(suggestion.get("text", ""), str):
        return None
    text = suggestion.get("text", "")
    range_ = _obj(suggestion.get("range"))
    start = _obj(range_.get("start"))
    end = _obj(range_.get("end"), start)
    line, end_line = _int(start.get("line")), _int(end.get("line")) or _int(start.get("line"))
    if line is None or end_line is None:
        return None
    if _int(start.get("column")) is None and _int(end.get("column")) is None:  # whole lines, line break included
        deleted = {"startLine": line, "startColumn": 1, "endLine": end_line + 1, "endColumn": 1}
        text = text + "\n" if text and not text.endswith("\n") else text
    else:
        deleted = {"startLine": line, "startColumn": _int(start.get("column")) or 1,
                   "endLine": end_line, "endColumn": _int(end.get("column")) or _int(start.get("column")) or 1}
    return {"deletedRegion": deleted, "insertedContent": {"text": text}}


def _reviewdog(diagnostics: Iterable[Any], result: dict, tool: str, root: str | None,
               numbers: list[int] | None = None) -> dict[str, Any]:
    default_level = _RD_LEVELS.get(str(result.get("severity", "")), "warning")
    source = _obj(result.get("source"))
    runs: dict[str, _Run] = {}
    for index, diagnostic in enumerate(diagnostics):
        where = f"line {numbers[index]}" if numbers else f"diagnostics[{index}]"
        if not isinstance(diagnostic, dict) or not isinstance(diagnostic.get("message"), str):
            raise ConvertError(f"{where}: a Diagnostic with a `message` string is required")
        own = _obj(diagnostic.get("source"), source)
        name = _str(own.get("name")) or tool
        run = runs.setdefault(name, _Run(name, _str(own.get("url"))))
        location = _obj(diagnostic.get("location"))
        path = _path(location.get("path"), root, where)
        code = _obj(diagnostic.get("code"))
        rule_id = _str(code.get("value"))
        level = _RD_LEVELS.get(str(diagnostic.get("severity", "")), default_level)
        fixes = [r for r in map(_replacement, diagnostic.get("suggestions") or []) if r is not None]
        run.add(path, _region(location.get("range")), diagnostic["message"], level, rule_id,
                _str(code.get("url")), fixes)
    return _log(runs.values() or [_Run(tool, None)])


def _checkstyle(data: bytes, tool: str, root: str | None) -> dict[str, Any]:
    try:
        tree = ElementTree.fromstring(data)
    except DefusedXmlException as exc:
        raise ConvertError(f"the checkstyle report uses a refused XML feature ({exc.__class__.__name__})") from None
    except ElementTree.ParseError as exc:
        raise ConvertError(f"the checkstyle report is not XML: {exc}") from None
    if tree.tag != "checkstyle":
        raise ConvertError(f"the checkstyle report's root element is <{tree.tag[:40]}>, not <checkstyle>")
    run = _Run(tool, None)
    for file_index, file in enumerate(tree.iter("file")):
        path = _path(file.get("name"), root, f"<file> {file_index + 1}")
        for error in file.iter("error"):
            message = error.get("message")
            if not message:
                raise ConvertError(f"{path}: an <error> without a message")
            line = _digits(error.get("line"))
            region = None
            if line is not None:
                region = {"startLine": line, "endLine": line}
                if (column := _digits(error.get("column"))) is not None:
                    region["startColumn"] = column
            level = _CHECKSTYLE_LEVELS.get((error.get("severity") or "error").lower(), "warning")
            run.add(path, region, message, level, error.get("source") or None, None, [])
    return _log([run])


def _digits(text: str | None) -> int | None:
    return int(text) if text and text.isdigit() and 0 < len(text) < 10 and int(text) >= 1 else None


class _Run:
    def __init__(self, name: str, url: str | None) -> None:
        self.name, self.url = name, url
        self.rules: dict[str, dict[str, Any]] = {}
        self.results: list[dict[str, Any]] = []

    def add(self, path: str, region: dict[str, int] | None, message: str, level: str, rule_id: str | None,
            rule_url: str | None, replacements: list[dict[str, Any]]) -> None:
        physical: dict[str, Any] = {"artifactLocation": {"uri": _uri(path)}}
        if region is not None:
            physical["region"] = region
        result: dict[str, Any] = {"message": {"text": message}, "level": level,
                                  "locations": [{"physicalLocation": physical}]}
        if rule_id is not None:
            result["ruleId"] = rule_id
            rule = self.rules.setdefault(rule_id, {"id": rule_id})
            if rule_url and rule_url.startswith(("https://", "http://")):
                rule.setdefault("helpUri", rule_url)
        if replacements:
            result["fixes"] = [{"artifactChanges": [{"artifactLocation": {"uri": _uri(path)},
                                                     "replacements": replacements}]}]
        self.results.append(result)

    def to_json(self) -> dict[str, Any]:
        driver: dict[str, Any] = {"name": self.name, "rules": list(self.rules.values())}
        if self.url and self.url.startswith(("https://", "http://")):
            driver["informationUri"] = self.url
        return {"tool": {"driver": driver}, "results": self.results}


def _log(runs: Iterable[_Run]) -> dict[str, Any]:
    return {"$schema": SCHEMA, "version": "2.1.0", "runs": [run.to_json() for run in runs]}


def checkout_uri(directory: str) -> str:
    """The `file://` URI of a directory, as an upload's `checkout_uri`."""
    return Path(directory).resolve().as_uri()
