"""The audit log: every change an administrator makes, with who, when, from where and what
(docs/operations.md "Auditing"). The store keeps the entries (bot.store.model.AuditStore); this module
decides what an entry holds and who may read it, and `Audit.record` is the one way in, called by
the resource API, the admin API, the console, the admin file's watcher and the learnings API.

What an entry never holds: a secret value. A connector change names the fields it touched
(`spec.client_secret`), never their values; `details` is for names and counts only.

Reading needs `audit:read`; an entry that belongs to an account (a redelivery, a learning) is shown
to a grant narrowed to that account, an instance-wide one (a connector, the admin file) only to an
un-narrowed grant, as with `connectors:read` and the sign-in log (bot/auth/access.py).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from bot.auth.access import Grant
from bot.auth.guard import BREAK_GLASS, Principal
from bot.store.model import AuditEntry, AuditQuery, AuditStore

log = logging.getLogger("reviewer.audit")

PERMISSION = "audit:read"
# What an entry may say was done. Another part that records a new kind of change adds it here.
ACTIONS = (
    "connector.apply",      # a connector created or replaced (resource API PUT, console Apply)
    "connector.delete",     # a connector deleted
    "delivery.redeliver",   # a failed delivery run again (admin API, console Redeliver)
    "admin-config.reload",  # the admin file changed and was put in force
    "admin-config.refuse",  # the admin file changed and was refused (the previous one stays)
    "learning.add",         # a learning added through the API or the console
    "learning.change",      # a learning's text, scope or rule changed
    "learning.delete",      # a learning deleted
    "signin-link.create",   # a one-time console sign-in link made with the break-glass token
    "sarif.upload",         # a SARIF upload accepted (bot/server/api/uploads.py)
    "session.end",          # another user's sign-in session ended (the console's sessions page)
    "signin.break-glass",   # a console session opened with the break-glass REVIEWER_ADMIN_TOKEN
)
BREAK_GLASS_ACTOR = "break-glass token"  # the actor of the admin token and of console sessions it opened
SERVER_ACTOR = "server"  # the actor of what the server does on its own (an admin file reloaded)
DEFAULT_LIMIT = 100
MAX_LIMIT = 500
MAX_ACTOR = 256  # characters of an actor filter (a username)
MAX_FIELDS = 100  # field names an entry keeps for one change
QUERY_KEYS = ("actor", "action", "since", "until", "limit", "before")


def actor_of(principal: Principal) -> str:
    """Who a change is recorded as: the signed-in user's name, or "break-glass token" for the
    admin token and a console session opened with it (the token names no one). A user whose
    identity provider names them like one of the server's own actors is recorded with the
    connector they came through, so that no sign-in can pass for the token or the server."""
    session = principal.session
    if session is None or session.connector == BREAK_GLASS:
        return BREAK_GLASS_ACTOR
    if principal.username.strip().lower() in (BREAK_GLASS_ACTOR, SERVER_ACTOR):
        return f"{principal.username} (signed in through {session.connector})"
    return principal.username


def changed_fields(before: Mapping[str, Any] | None, after: Mapping[str, Any] | None) -> list[str]:
    """The dotted names of the leaves that differ between two documents (a value added, removed or
    changed; a list counts as one leaf), sorted; at most MAX_FIELDS. Names only: a caller records
    them, never the values, which may be secrets."""
    flat_before, flat_after = _leaves(before or {}), _leaves(after or {})
    names = sorted(k for k in flat_before.keys() | flat_after.keys() if flat_before.get(k, _ABSENT) != flat_after.get(k, _ABSENT))
    return names[:MAX_FIELDS]


_ABSENT = object()


def _leaves(value: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    found: dict[str, Any] = {}
    for key, item in value.items():
        name = f"{prefix}{key}"
        if isinstance(item, Mapping) and item:
            found.update(_leaves(item, name + "."))
        else:
            found[name] = item
    return found


class QueryError(ValueError):
    """A filter that cannot be used: `field` names it, the message says the rule."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field


def parse_query(params: Mapping[str, str]) -> AuditQuery:
    """The filters of `GET /v1/audit` and `/console/audit` (an empty value is no filter); QueryError
    names the first one that is wrong: an unknown parameter, an action not in ACTIONS, a time that
    is not ISO 8601, a limit outside 1..MAX_LIMIT, a `before` that is not a positive integer."""
    getall = getattr(params, "getall", None)  # a query string's multidict: one key may come twice
    for key in params:
        if getall is not None and len(getall(key)) > 1:
            raise QueryError(key, "is given more than once")
        if key not in QUERY_KEYS:
            raise QueryError(key, f"is not a filter of the audit log (filters: {', '.join(QUERY_KEYS)})")
    given = {k: v.strip() for k, v in params.items() if v.strip()}
    actor = given.get("actor")
    if actor is not None and len(actor) > MAX_ACTOR:
        raise QueryError("actor", f"is longer than {MAX_ACTOR} characters")
    action = given.get("action")
    if action is not None and action not in ACTIONS:
        raise QueryError("action", f"{action!r} is not an action of the audit log (one of: {', '.join(ACTIONS)})")
    since, until = _time(given, "since"), _time(given, "until")
    if since is not None and until is not None and since >= until:
        raise QueryError("until", "is not after since")
    limit = _integer(given, "limit", MAX_LIMIT)
    return AuditQuery(limit=DEFAULT_LIMIT if limit is None else limit, before_seq=_integer(given, "before", None),
                      actor=actor, action=action, since=since, until=until)


def _time(given: Mapping[str, str], key: str) -> float | None:
    text = given.get(key)
    if text is None:
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise QueryError(key, f"{text[:64]!r} is not an ISO 8601 time such as 2026-11-27T09:30:00Z "
                              "(a time without a zone is UTC)") from None
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()


def _integer(given: Mapping[str, str], key: str, most: int | None) -> int | None:
    text = given.get(key)
    if text is None:
        return None
    number = int(text) if text.isascii() and text.isdigit() and len(text) <= 18 else 0
    if number < 1 or (most is not None and number > most):
        rule = f"an integer from 1 to {most}" if most is not None else "a positive integer (an entry's seq)"
        raise QueryError(key, f"{text[:64]!r} is not {rule}")
    return number


def visible(grant: Grant, entry: AuditEntry) -> bool:
    """Whether `grant` may read `entry`: on its account, or un-narrowed for an instance-wide one."""
    return grant.allows(PERMISSION, entry.account)


SCAN_PAGES = 20  # pages a narrowed reader's listing reads before it stops (the next page goes on)


async def visible_entries(store: AuditStore, query: AuditQuery, grant: Grant) -> tuple[list[AuditEntry], int | None]:
    """Up to `query.limit` entries `grant` may read, newest first, and the `before` of the next page
    (None: there is none). An un-narrowed grant reads one page; a narrowed one reads pages of
    entries that belong to some account and keeps those of its accounts, for at most SCAN_PAGES
    pages (a page that found fewer still says where the next one starts)."""
    if grant.allows(PERMISSION, None):
        rows = await store.entries(query)
        return rows, (rows[-1].seq if len(rows) == query.limit else None)
    shown: list[AuditEntry] = []
    before = query.before_seq
    for _ in range(SCAN_PAGES):
        page = await store.entries(AuditQuery(query.limit, before, query.actor, query.action, query.since,
                                              query.until, with_account=True))
        for entry in page:
            if visible(grant, entry):
                shown.append(entry)
                if len(shown) == query.limit:
                    return shown, entry.seq
        if len(page) < query.limit:
            return shown, None
        before = page[-1].seq
    return shown, before


def entry_json(entry: AuditEntry) -> dict[str, Any]:
    """An entry as the API answers it (times in UTC, ISO 8601)."""
    return {"seq": entry.seq, "at": iso_time(entry.at), "actor": entry.actor, "ip": entry.ip,
            "action": entry.action, "target": entry.target, "account": entry.account, "details": entry.details}


def iso_time(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class Audit:
    """Records entries in the store, and a log line for each. The change it records has already
    happened when it is called, so a store that refuses the entry does not undo it: the failure is
    logged (with the entry's fields, so the log still tells it) and the caller goes on."""

    store: AuditStore
    clock: Callable[[], float] = time.time

    async def record(self, actor: Principal | str, action: str, target: str, *, ip: str | None,
                     account: str | None = None, details: Mapping[str, Any] | None = None) -> AuditEntry | None:
        """Records one change; `actor` is the caller (a Principal) or an actor's name (SERVER_ACTOR).
        `ip` is the client's address as the server sees it (`request.remote`; None for the server's
        own). Returns the entry recorded, or None when the store refused it. ValueError for an
        action not in ACTIONS: a programming error, never a user's. From a route, after the change:

            await request.app[AUDIT].record(principal, "learning.add", f"learnings/{id}",
                                            ip=request.remote, account=owner)

        (`AUDIT` is bot.server.api.audit's app key; the console's pages have `console.audit`.)"""
        if action not in ACTIONS:
            raise ValueError(f"{action!r} is not an audit action (bot/audit/log.py ACTIONS)")
        name = actor if isinstance(actor, str) else actor_of(actor)
        entry = AuditEntry(at=self.clock(), actor=name, ip=ip, action=action, target=target, account=account,
                           details=dict(details or {}))
        fields = {"actor": name, "ip": ip, "action": action, "target": target, "account": account,
                  "details": entry.details}
        try:
            seq = await self.store.record(entry)
        except Exception as exc:  # the change stands; the log line keeps what happened
            log.error("audit entry could not be stored: %s", type(exc).__name__, extra={"audit": fields})
            return None
        log.info("audit: %s %s by %s", action, target, name, extra={"audit": fields})
        return AuditEntry(entry.at, name, ip, action, target, account, entry.details, seq)
