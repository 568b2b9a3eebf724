"""An upload's results as JSON and back (pure), for the store (bot/store/uploads.py) between the
HTTP handler that reads an upload and the review job that applies it."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from bot.analyzers.model import AnalyzerResult, Edit


def result_to_json(result: AnalyzerResult) -> dict[str, Any]:
    data = asdict(result)
    data["edits"] = [asdict(edit) for edit in result.edits]
    data["partial_fingerprints"] = dict(result.partial_fingerprints)
    data["tags"] = list(result.tags)
    return data


def result_from_json(data: dict[str, Any]) -> AnalyzerResult:
    return AnalyzerResult(
        tool=str(data["tool"]), rule_id=data.get("rule_id"), level=str(data["level"]),
        security_severity=data.get("security_severity"), message=str(data["message"]), path=data.get("path"),
        start_line=data.get("start_line"), end_line=data.get("end_line"),
        edits=tuple(Edit(**edit) for edit in data.get("edits") or ()),
        partial_fingerprints=dict(data.get("partial_fingerprints") or {}), help_uri=data.get("help_uri"),
        rule_name=data.get("rule_name"), tags=tuple(data.get("tags") or ()))
