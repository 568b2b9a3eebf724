"""Hidden markers through which a pull request's own comments say what the reviewer posted on it
(pure). The App remembers that in its database; `reviewer review --post` in GitHub Actions has
none, so it reads the pull request (docs/ci.md):

- each inline comment carries its finding — fingerprint, path, lines, severity, category, code,
  message, source — in `<!-- reviewer:finding … -->`, so that a finding is never posted twice;
- the summary comment carries `<!-- reviewer:state … -->`: the head last reviewed, the plan's
  digest and the merge base it was reviewed with (what bot.reviews.life decides the next review
  from), that review's conclusion and title, the severities that decided it, and the findings
  posted in the summary only.

A marker's content is base64 of compact JSON, so nothing a message holds can end the HTML comment
early. Reading is bounded and forgiving: a marker that is too long, not base64, not JSON or of the
wrong shape is passed over. Whose comment carries a marker is the caller's check: only the
reviewer's own comments are read (anyone can paste a marker into a comment of theirs).
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from bot.documents.jsonbody import JsonBodyError, parse_json
from bot.reviews.findings import SEVERITIES
from bot.reviews.fingerprints import PostedFinding

MAX_MARKER_CHARS = 60_000  # GitHub keeps 65,536 characters of a comment
_FINDING = re.compile(rf"<!-- reviewer:finding ([A-Za-z0-9+/=]{{1,{MAX_MARKER_CHARS}}}) -->")
_STATE = re.compile(rf"<!-- reviewer:state ([A-Za-z0-9+/=]{{1,{MAX_MARKER_CHARS}}}) -->")
_FIELDS = {f.name: f for f in dataclasses.fields(PostedFinding)}


def _encode(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    return base64.b64encode(text.encode("utf-8", errors="surrogateescape")).decode("ascii")


def _decode(data: str) -> Any:
    try:
        return parse_json(base64.b64decode(data, validate=True))
    except (binascii.Error, JsonBodyError, ValueError):
        return None


def _posted_json(posted: PostedFinding) -> dict[str, Any]:
    return dataclasses.asdict(posted)


def _posted(data: Any) -> PostedFinding | None:
    """A PostedFinding from its JSON, every field of its type (a missing one takes its default)."""
    if not isinstance(data, Mapping):
        return None
    values: dict[str, Any] = {}
    for name, field in _FIELDS.items():
        if name not in data:
            if field.default is dataclasses.MISSING:
                return None
            continue
        value = data[name]
        wanted = int if isinstance(field.default, int) and not isinstance(field.default, bool) else str
        if value is None and field.default is None:
            values[name] = None
        elif isinstance(value, wanted) and not isinstance(value, bool):
            values[name] = value
        else:
            return None
    return PostedFinding(**values)


def finding_marker(posted: PostedFinding) -> str:
    return f"<!-- reviewer:finding {_encode(_posted_json(posted))} -->"


def findings_in(body: str) -> list[PostedFinding]:
    """The findings a comment's markers name."""
    found = (_posted(_decode(m)) for m in _FINDING.findall(body or ""))
    return [f for f in found if f is not None]


@dataclass(frozen=True)
class PullState:
    """What the last review of a pull request left in its summary comment."""

    head_sha: str
    plan_digest: str
    merge_base: str
    conclusion: str
    title: str
    summary_only: tuple[PostedFinding, ...] = ()  # posted in the summary comment, not inline
    deciding: tuple[str, ...] = ()  # the severities of the findings that decided (on the diff)

    def to_json(self) -> dict[str, Any]:
        return {"head": self.head_sha, "digest": self.plan_digest, "mergeBase": self.merge_base,
                "conclusion": self.conclusion, "title": self.title,
                "summaryOnly": [_posted_json(p) for p in self.summary_only], "deciding": list(self.deciding)}


def state_marker(state: PullState) -> str:
    return f"<!-- reviewer:state {_encode(state.to_json())} -->"


def state_in(body: str) -> PullState | None:
    """The state a summary comment carries, or None."""
    match = _STATE.search(body or "")
    data = _decode(match.group(1)) if match else None
    if not isinstance(data, Mapping):
        return None
    head, digest, merge_base, conclusion, title = (data.get(k) for k in
                                                   ("head", "digest", "mergeBase", "conclusion", "title"))
    listed, deciding = data.get("summaryOnly"), data.get("deciding", [])
    if not (isinstance(head, str) and isinstance(digest, str) and isinstance(merge_base, str)
            and isinstance(conclusion, str) and isinstance(title, str) and isinstance(listed, list)
            and isinstance(deciding, list) and all(d in SEVERITIES for d in deciding)):
        return None
    return PullState(head, digest, merge_base, conclusion, title,
                     tuple(p for p in map(_posted, listed) if p is not None), tuple(deciding))


def without_markers(body: str) -> str:
    """A body with its finding and state markers taken out (what a reader sees, and what is compared)."""
    return _STATE.sub("", _FINDING.sub("", body or ""))


def all_posted(states: Iterable[PullState | None], comments: Iterable[Iterable[PostedFinding]]) -> list[PostedFinding]:
    """Every finding posted on the pull request, each fingerprint once: inline ones, then summary ones."""
    seen: dict[str, PostedFinding] = {}
    for found in comments:
        for posted in found:
            seen.setdefault(posted.fingerprint, posted)
    for state in states:
        for posted in state.summary_only if state is not None else ():
            seen.setdefault(posted.fingerprint, posted)
    return list(seen.values())
