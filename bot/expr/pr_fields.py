"""The `pr` object of CEL expressions: its fields, their CEL types, and the largest `pr` there is.

The limits are GitHub's where GitHub has one (3000 files listed per pull request, 100 labels, a
256-character title, a 65,536-character body, 50-character label names), generous elsewhere.
`bot.plan.pr` clamps every `pr` it builds to them, which is what lets `bot.expr.cel_bounds` prove
how long any accepted expression can run.
"""

from __future__ import annotations

from types import MappingProxyType

# Field → CEL type, as docs/plan.md names them (the names of the format's origin, then ours).
PR_FIELDS = MappingProxyType({
    "number": "int",
    "title": "string",
    "body": "string",
    "author": "string",
    "state": "string",
    "open": "bool",
    "merged": "bool",
    "draft": "bool",
    "fork": "bool",
    "headRef": "string",
    "headSha": "string",
    "baseRef": "string",
    "url": "string",
    "createdAt": "google.protobuf.Timestamp",
    "labels": "list(map(string, string))",
    "event": "string",
    "files": "list(string)",
    "additions": "int",
    "deletions": "int",
    "changedFiles": "int",
    "commits": "int",
    "authorAssociation": "string",
})

MAX_FILES = 3000  # GitHub lists at most 3000 files of a pull request
MAX_LABELS = 100  # GitHub allows at most 100 labels on an issue or pull request
MAX_PATH = 4096  # PATH_MAX: a longer path cannot be checked out
MAX_LABEL_NAME = 100
MAX_LABEL_COLOR = 16

# Longest value of each string field (characters).
STRING_LIMITS = MappingProxyType({
    "title": 256,
    "body": 65536,
    "author": 100,
    "state": 16,
    "headRef": 255,
    "headSha": 64,
    "baseRef": 255,
    "url": 2048,
    "event": 32,
    "authorAssociation": 32,
})

EVENTS = ("opened", "reopened", "ready_for_review", "synchronize", "edited", "labeled", "unlabeled",
          "rerequested", "manual")

_DEFAULTS = {"int": 0, "string": "", "bool": False, "google.protobuf.Timestamp": "1970-01-01T00:00:00Z"}


def clamp_pr(pr: dict) -> dict:
    """`pr` with every field present, of its type, and within the limits above.

    Missing or mistyped fields take their zero value (so an expression never fails on a key a
    caller left out); longer strings and lists are cut (GitHub's own limits make that rare).
    Unknown keys are dropped: expressions are checked against PR_FIELDS alone.
    """
    out: dict = {}
    for name, cel_type in PR_FIELDS.items():
        value = pr.get(name)
        if name == "files":
            out[name] = [str(f)[:MAX_PATH] for f in (value or [])[:MAX_FILES]]
        elif name == "labels":
            out[name] = [_label(item) for item in (value or [])[:MAX_LABELS]]
        elif cel_type == "string":
            out[name] = (value if isinstance(value, str) else "")[:STRING_LIMITS[name]]
        elif cel_type == "bool":
            out[name] = value if isinstance(value, bool) else False
        elif cel_type == "int":
            number = value if isinstance(value, int) and not isinstance(value, bool) else 0
            out[name] = max(-(2**63), min(number, 2**63 - 1))  # CEL ints are 64-bit
        else:
            out[name] = value if isinstance(value, str) and value else _DEFAULTS[cel_type]
    return out


def _label(item: object) -> dict:
    if isinstance(item, str):
        return {"name": item[:MAX_LABEL_NAME], "color": ""}
    item = item if isinstance(item, dict) else {}
    name, color = item.get("name"), item.get("color")
    return {"name": (name if isinstance(name, str) else "")[:MAX_LABEL_NAME],
            "color": (color if isinstance(color, str) else "")[:MAX_LABEL_COLOR]}
