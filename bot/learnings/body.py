"""The bodies of `POST /v1/learnings` and `PATCH /v1/learnings/{id}`, checked field by field.

Every problem is an `Issue` (JSON pointer, stable code, message naming the field), as the
configuration files' and the resource API's are, so the API answers them as `details.causes`
(`causes`). A body is untrusted: every string is bounded, globs are parsed by the plan's own glob
parser, a source link must be http(s) (the console shows it as a link), and text may not hold
control characters or bidirectional overrides (it is shown in the console and sent to a model).

Fields the server sets — `id`, `created`, `source.author` — are refused in a new learning
(`read-only`); a PATCH may carry them back unchanged, so that GET, edit, PATCH works, and refuses
any other value. A PATCH replaces each field it names; `null` clears `rule`, `category`,
`fingerprint` and `scope.repository`; `scope.account` never changes (a learning moves to another
account by being deleted and added there, with the permission on both).
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from bot.config.admin_schema import LOGIN
from bot.config.repo_schema import GLOB
from bot.documents.pointers import human_pointer
from bot.learnings.model import KINDS, Learning, from_json, parse_time
from bot.reviews.findings import CATEGORIES
from bot.shapes import Arr, Check, Issue, Obj, Str, validate

MAX_TEXT = 2000
MAX_PATHS = 20
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _printable(value: str) -> tuple[str, str] | None:
    found = _CONTROL.search(value)
    if found is None:
        return None
    return ("control-character", f"must not hold control characters or bidirectional overrides; "
                                 f"U+{ord(found.group()):04X} at offset {found.start()}")


def _not_blank(value: str) -> tuple[str, str] | None:
    return ("min-length", "must not be blank") if not value.strip() else None


PRINTABLE = Check("printable", _printable)
REPOSITORY = Str(min_length=1, max_length=100, pattern=r"^(?!\.\.?$)[A-Za-z0-9._-]+$",
                 pattern_hint="a repository's name within the account, such as `app`",
                 description="One repository of the account; absent or null: every repository of it.")
RULE = Str(min_length=1, max_length=200, pattern=r"^\S+$", pattern_hint="a rule id, without spaces",
           checks=(PRINTABLE,), description="The rule id (of the configuration's rules or an analyzer's).")
SCOPE = Obj(
    properties={
        "account": LOGIN,
        "repository": REPOSITORY,
        "paths": Arr(items=GLOB, max_items=MAX_PATHS, description="Globs over repository paths; empty: every path."),
    },
    required=("account",),
)
FIELDS = Obj(
    properties={
        "scope": SCOPE,
        "kind": Str(enum=KINDS),
        "text": Str(min_length=1, max_length=MAX_TEXT, checks=(PRINTABLE, Check("not-blank", _not_blank))),
        "rule": RULE,
        "category": Str(enum=CATEGORIES),
        "fingerprint": Str(pattern=r"^[A-Za-z0-9:._/+=-]{1,128}$",
                           pattern_hint="1 to 128 letters, digits and `:._/+=-`"),
        "source": Obj(properties={"url": Str(max_length=2048, pattern=r"^https?://[^\s]+$",
                                             pattern_hint="an http:// or https:// URL")}),
    },
    required=("scope", "kind", "text"),
)
CLEARABLE = ("rule", "category", "fingerprint")  # and scope.repository
SERVER_SET = ("id", "created")


def new_learning(body: Any, *, id: str, created: datetime, author: str | None) -> tuple[Learning | None, list[Issue]]:
    """The learning a POST body makes (the server gives its id, time and author), or every problem."""
    if not isinstance(body, dict):
        return None, [Issue("", "type", "the body must be a JSON object")]
    issues = [Issue(f"/{key}", "read-only", f"{human_pointer('/' + key)}: set by the server; leave it out")
              for key in SERVER_SET if key in body]
    source = body.get("source")
    if isinstance(source, dict) and "author" in source:
        issues.append(Issue("/source/author", "read-only",
                            "`source.author`: set by the server to who adds the learning; leave it out"))
    candidate = _without_nulls({k: v for k, v in body.items() if k not in SERVER_SET})
    if isinstance(candidate.get("source"), dict):
        candidate["source"] = {k: v for k, v in candidate["source"].items() if k != "author"}
    issues += validate(FIELDS, candidate) + _cross_checks(candidate)
    if issues:
        return None, issues
    record = {**candidate, "id": id, "created": created.isoformat(),
              "source": {"url": (candidate.get("source") or {}).get("url"), "author": author}}
    return from_json(record), []


def patched_learning(learning: Learning, body: Any) -> tuple[Learning | None, list[Issue]]:
    """`learning` with a PATCH body's fields replaced, or every problem (the learning unchanged)."""
    if not isinstance(body, dict):
        return None, [Issue("", "type", "the body must be a JSON object")]
    stored = learning.to_json()
    issues = _unchanged(body, stored)
    merged = {**stored, **{k: v for k, v in body.items() if k not in (*SERVER_SET, "source")}}
    scope = body.get("scope")
    if isinstance(scope, dict):
        merged["scope"] = {**stored["scope"], **scope, "account": stored["scope"]["account"]}
    candidate = _without_nulls({k: v for k, v in merged.items() if k not in (*SERVER_SET, "source")})
    issues += validate(FIELDS, candidate) + _cross_checks(candidate)
    if issues:
        return None, issues
    return from_json({**candidate, "id": learning.id, "created": stored["created"], "source": stored["source"]}), []


def causes(issues: list[Issue]) -> list[dict[str, str]]:
    """The problems as a `Status`'s `details.causes`, the resource API's shape."""
    return [{"field": issue.pointer, "reason": issue.code, "message": issue.message} for issue in issues]


def _unchanged(body: dict, stored: dict) -> list[Issue]:
    """Server-set fields and `scope.account` may come back only as they are."""
    out = []
    for key in SERVER_SET:
        if key in body and not _same_value(key, body[key], stored[key]):
            out.append(Issue(f"/{key}", "read-only", f"{human_pointer('/' + key)}: set by the server; "
                                                     f"it cannot change (it is {stored[key]!r})"))
    source = body.get("source")
    if "source" in body and source != stored["source"]:
        out.append(Issue("/source", "read-only", "`source`: where the learning came from; it cannot change"))
    scope = body.get("scope")
    account = scope.get("account") if isinstance(scope, dict) else None
    if account is not None and (not isinstance(account, str) or account.lower() != stored["scope"]["account"].lower()):
        out.append(Issue("/scope/account", "read-only",
                         f"`scope.account`: cannot change (it is {stored['scope']['account']!r}); "
                         "delete the learning and add it to the other account"))
    return out


def _same_value(key: str, given: Any, stored: str) -> bool:
    if key != "created" or not isinstance(given, str):
        return bool(given == stored)
    try:
        return parse_time(given) == parse_time(stored)
    except ValueError:
        return False


def _without_nulls(body: dict) -> dict:
    """Optional fields given as null are absent (and, in a PATCH, cleared)."""
    out = {k: v for k, v in body.items() if not (v is None and k in CLEARABLE)}
    scope = out.get("scope")
    if isinstance(scope, dict) and scope.get("repository", "") is None:
        out["scope"] = {k: v for k, v in scope.items() if k != "repository"}
    source = out.get("source")
    if isinstance(source, dict) and source.get("url", "") is None:
        out["source"] = {k: v for k, v in source.items() if k != "url"}
    return out


def _cross_checks(body: dict) -> list[Issue]:
    """What one field's shape cannot say: rule or category, and what each kind needs."""
    out = []
    if "rule" in body and "category" in body:
        out.append(Issue("/category", "exclusive", "`category`: set `rule` or `category`, not both"))
    if body.get("kind") == "suppress" and "rule" not in body and "category" not in body:
        out.append(Issue("", "required", "the body: a `suppress` learning names the `rule` or the `category` of the "
                                         "findings it leaves out"))
    if body.get("kind") == "guide" and "fingerprint" in body:
        out.append(Issue("/fingerprint", "requires", "`fingerprint`: only a `suppress` learning matches a "
                                                     "finding's fingerprint"))
    return out
