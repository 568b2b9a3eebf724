"""The findings format (docs/reviews.md "The findings format"): its JSON Schema, and reading a
model's answer.

A model's answer is untrusted text. It is accepted as one JSON object, bare or inside a fenced code
block; an answer with no such object is *unusable* (the engine then tries the fallback model),
while a usable answer keeps every well-formed finding and drops each malformed one with a count,
so that one bad entry never costs the rest of the review. A category is a label, not what a finding
is about: one we do not know (`correctness`) or none at all is kept as `other`, with its severity,
and noted; only what a finding cannot be placed or weighed without (path, lines, severity, message)
makes it malformed.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from bot.documents.jsonbody import parse_json
from bot.reviews.walkthrough import SCHEMA as WALKTHROUGH_SCHEMA

SEVERITIES = ("blocking", "important", "minor", "nit")
CATEGORIES = (
    "bug", "risk", "breaking-change", "security",
    "performance", "maintainability", "style", "docs", "other",
)
OTHER = "other"  # the category of a finding whose category is none of the others
MAX_FINDINGS = 100  # more than this is noise; the rest are counted, not posted
MAX_MESSAGE_CHARS = 4000
MAX_FIX_CHARS = 20000

FINDINGS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["findings"],
    "properties": {
        "findings": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["path", "startLine", "endLine", "severity", "category", "message"],
                "properties": {
                    "path": {"type": "string", "minLength": 1},
                    "startLine": {"type": "integer", "minimum": 1},
                    "endLine": {"type": "integer", "minimum": 1},
                    "severity": {"type": "string", "enum": list(SEVERITIES)},
                    "category": {"type": "string", "enum": list(CATEGORIES)},
                    "message": {"type": "string", "minLength": 1},
                    "suggestedFix": {"type": "string"},
                    "rules": {"type": "array", "items": {"type": "string"}},
                },
            },
        },
        "walkthrough": WALKTHROUGH_SCHEMA,  # one line per changed file (docs/reviews.md "Learnings")
    },
}


@dataclass(frozen=True, slots=True)
class Finding:
    path: str
    start_line: int
    end_line: int
    severity: str
    category: str
    message: str
    suggested_fix: str | None = None
    rules: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ParsedAnswer:
    findings: tuple[Finding, ...] = ()
    malformed: int = 0  # entries dropped for breaking the schema
    over_limit: int = 0  # well-formed entries past MAX_FINDINGS
    problems: tuple[str, ...] = field(default=())  # the first few reasons and remarks, for the check run
    error: str | None = None  # set: the answer as a whole is unusable
    walkthrough: tuple[Any, ...] = ()  # the answer's `walkthrough` entries, unchecked (bot/reviews/walkthrough.py)


_OPENER = re.compile(r"^ {0,3}(`{3,}|~{3,})[ \t]*([^\s`]*)")
_THINK = re.compile(r"^\s*<think>.*?</think>", re.S)
MAX_ANSWER_CHARS = 2_000_000


def _fenced_blocks(text: str) -> list[tuple[str, str]]:
    """(info word, body) of each fenced block, read line by line as CommonMark does: a block ends
    at a fence of the same character at least as long, or at the end of the text. Linear time."""
    blocks: list[tuple[str, str]] = []
    fence: str | None = None
    info, body = "", list[str]()
    for line in text.splitlines():
        if fence is None:
            opener = _OPENER.match(line)
            if opener:
                fence, info, body = opener.group(1), opener.group(2).lower(), []
        elif line.strip() and set(line.strip()) == {fence[0]} and len(line.strip()) >= len(fence):
            blocks.append((info, "\n".join(body)))
            fence = None
        else:
            body.append(line)
    if fence is not None:
        blocks.append((info, "\n".join(body)))
    return blocks


def _candidates(text: str) -> list[str]:
    """The whole answer first, then each fenced block, JSON-labelled ones before the others."""
    fenced = _fenced_blocks(text)
    labelled = [body for label, body in fenced if label in ("json", "jsonc")]
    others = [body for label, body in fenced if label not in ("json", "jsonc")]
    return [text, *labelled, *others]


def load_answer_object(text: str) -> dict | None:
    # Reasoning models served locally often prefix their answer with a <think> block.
    text = _THINK.sub("", text[:MAX_ANSWER_CHARS], count=1)
    for candidate in _candidates(text):
        try:
            value = parse_json(candidate)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return None


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check(entry: Any) -> str | None:
    """Why an entry is malformed, or None. Names the field, as every error here does."""
    if not isinstance(entry, dict):
        return "a finding is not an object"
    if not isinstance(entry.get("path"), str) or not entry["path"].strip():
        return "path: a non-empty string is required"
    for key in ("startLine", "endLine"):
        if not _is_int(entry.get(key)) or entry[key] < 1:
            return f"{key}: an integer of at least 1 is required"
    if entry["endLine"] < entry["startLine"]:
        return "endLine: must not be before startLine"
    if entry.get("severity") not in SEVERITIES:
        return f"severity: must be one of {', '.join(SEVERITIES)}"
    if not isinstance(entry.get("message"), str) or not entry["message"].strip():
        return "message: a non-empty string is required"
    if entry.get("suggestedFix") is not None and not isinstance(entry["suggestedFix"], str):
        return "suggestedFix: must be a string"
    rules = entry.get("rules")
    if rules is not None and not (isinstance(rules, list) and all(isinstance(r, str) for r in rules)):
        return "rules: must be a list of rule ids"
    return None


def _recategorised(entry: dict) -> str | None:
    """Why a well-formed finding's category becomes `other`, or None when it is one of ours."""
    category = entry.get("category")
    if category in CATEGORIES:
        return None
    if category is None:
        return f"category missing; kept as {OTHER}"
    shown = category if isinstance(category, str) else json.dumps(category)[:40]
    return f"category {shown[:40]!r} is not one of ours; kept as {OTHER}"


def _finding(entry: dict) -> Finding:
    path = entry["path"].strip()
    path = path[2:] if path.startswith("./") else path
    fix = entry.get("suggestedFix")
    category = entry.get("category")
    return Finding(
        path=path,
        start_line=entry["startLine"],
        end_line=entry["endLine"],
        severity=entry["severity"],
        category=category if category in CATEGORIES else OTHER,
        message=entry["message"].strip()[:MAX_MESSAGE_CHARS],
        # An empty fix is read as "no fix": models write "" for none far more often than they
        # mean "delete these lines", and a wrong deletion suggestion is worse than none.
        suggested_fix=fix[:MAX_FIX_CHARS] if isinstance(fix, str) and fix.strip() else None,
        rules=tuple(dict.fromkeys(entry.get("rules") or ())),
    )


def parse_answer(text: str) -> ParsedAnswer:
    """Read a model's answer into findings; never raises."""
    obj = load_answer_object(text)
    if obj is None:
        return ParsedAnswer(error="the answer holds no JSON object (bare or in a fenced block)")
    entries = obj.get("findings")
    if not isinstance(entries, list):
        return ParsedAnswer(error='the answer\'s JSON object has no "findings" list')
    findings: list[Finding] = []
    problems: list[str] = []
    malformed = over_limit = 0
    for index, entry in enumerate(entries):
        reason = _check(entry)
        if reason is not None:
            malformed += 1
            if len(problems) < 5:
                problems.append(f"findings[{index}]: {reason}")
        elif len(findings) >= MAX_FINDINGS:
            over_limit += 1
        else:
            findings.append(_finding(entry))
            remark = _recategorised(entry)
            if remark is not None and len(problems) < 5:
                problems.append(f"findings[{index}]: {remark}")
    walkthrough = obj.get("walkthrough")
    return ParsedAnswer(tuple(findings), malformed, over_limit, tuple(problems),
                        walkthrough=tuple(walkthrough) if isinstance(walkthrough, list) else ())
