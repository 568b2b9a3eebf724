"""A learning: one thing a team told the reviewer, with where it applies and where it came from.

`suppress` learnings leave matching findings out of later reviews; `guide` learnings go into the
prompt of later reviews of their scope. The scope is an account, optionally one repository of it,
optionally some paths (globs; none: every path). A suppress learning names the rule (a rule id, of
a rule of the configuration or of an analyzer) or the category it is about, and may carry the
fingerprint of the finding it was made from.

`to_json` / `from_json` are the API's and the store's one shape:
`{id, scope: {account, repository, paths}, rule, category, text, kind, source: {url, author},
fingerprint, created}`. `from_json` reads what this module wrote; bodies from clients go through
`bot.learnings.body`, which checks every field.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal, cast

Kind = Literal["suppress", "guide"]
KINDS: tuple[Kind, ...] = ("suppress", "guide")


@dataclass(frozen=True, slots=True)
class Scope:
    """Where a learning applies. Logins and repository names compare case-insensitively, as on
    GitHub; path globs case-sensitively, as everywhere in a plan."""

    account: str
    repository: str | None = None  # a repository's name within the account; None: all of them
    paths: tuple[str, ...] = ()  # globs over repository paths; empty: every path

    def covers_repository(self, account: str, repository: str) -> bool:
        if self.account.lower() != account.lower():
            return False
        return self.repository is None or self.repository.lower() == repository.lower()

    @property
    def full_name(self) -> str:
        """`owner/name`, or `owner/*` for every repository of the account."""
        return f"{self.account}/{self.repository or '*'}"


@dataclass(frozen=True, slots=True)
class Source:
    """Where a learning came from: the comment (or reaction's comment) and who wrote it."""

    url: str | None = None
    author: str | None = None


@dataclass(frozen=True, slots=True)
class Learning:
    id: str
    scope: Scope
    kind: Kind
    text: str
    created: datetime  # aware, UTC
    rule: str | None = None
    category: str | None = None
    fingerprint: str | None = None  # the finding it was made from: that finding is matched whatever it says
    source: Source = field(default_factory=Source)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "scope": {"account": self.scope.account, "repository": self.scope.repository,
                      "paths": list(self.scope.paths)},
            "kind": self.kind,
            "rule": self.rule,
            "category": self.category,
            "text": self.text,
            "fingerprint": self.fingerprint,
            "source": {"url": self.source.url, "author": self.source.author},
            "created": format_time(self.created),
        }

    @property
    def about(self) -> str:
        """What the learning is about, in words: "rule `x`", "category `bug`", or "every finding"."""
        if self.rule:
            return f"rule `{self.rule}`"
        if self.category:
            return f"category `{self.category}`"
        return "every finding"


def from_json(data: Mapping[str, Any]) -> Learning:
    """A learning from its JSON (`to_json`'s shape, as the store keeps it). Raises KeyError or
    ValueError on a record that is not one: stored records are ours, so that is a bug to see."""
    scope = data["scope"]
    source = data.get("source") or {}
    kind = data["kind"]
    if kind not in KINDS:
        raise ValueError(f"kind {kind!r} is not one of {', '.join(KINDS)}")
    return Learning(
        id=str(data["id"]),
        scope=Scope(str(scope["account"]), scope.get("repository"), tuple(scope.get("paths") or ())),
        kind=cast(Kind, kind),
        text=str(data["text"]),
        created=parse_time(str(data["created"])),
        rule=data.get("rule"),
        category=data.get("category"),
        fingerprint=data.get("fingerprint"),
        source=Source(source.get("url"), source.get("author")),
    )


def new_id() -> str:
    """A new learning's id: 16 hex digits, short enough to type in `reviewer learnings rm ID`."""
    return secrets.token_hex(8)


def format_time(moment: datetime) -> str:
    """RFC 3339 in UTC, to the second: `2025-05-01T12:00:00Z`."""
    return moment.astimezone(UTC).replace(microsecond=0).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_time(text: str) -> datetime:
    """An RFC 3339 time (`Z` or an offset) as an aware UTC datetime; ValueError when it is none."""
    moment = datetime.fromisoformat(text.replace("Z", "+00:00") if text.endswith("Z") else text)
    if moment.tzinfo is None:
        raise ValueError(f"{text!r} has no time zone")
    return moment.astimezone(UTC)


def newest_first(learnings: list[Learning] | tuple[Learning, ...]) -> list[Learning]:
    """Newest first; the id breaks ties so that the order never depends on the store's."""
    return sorted(learnings, key=lambda learning: (learning.created, learning.id), reverse=True)
