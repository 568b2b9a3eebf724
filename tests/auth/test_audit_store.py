"""The audit log's decisions (bot/audit/log.py: the fields a change touched, the filters, who reads
what) and its store on both backends (the `storage` fixture: SQLite, then PostgreSQL): entries
come back newest first, filtered, paged, and pruned by age."""

from __future__ import annotations

import time
from datetime import UTC, datetime

import pytest

from bot.audit.log import ACTIONS, Audit, QueryError, actor_of, changed_fields, parse_query, visible_entries
from bot.auth.access import EVERYTHING, Access, Role, grant_for
from bot.auth.guard import BREAK_GLASS, Principal
from bot.auth.sessions import Session
from bot.server.jobs.retention import prune_audit
from bot.store.model import AuditQuery, Storage


def test_changed_fields_names_what_changed_and_never_a_value():
    before = {"metadata": {"name": "okta", "labels": {"team": "a"}},
              "spec": {"client_secret": "s3cret-old", "client_id": "rev", "claims_to_roles": [{"roles": ["a"]}]}}
    after = {"metadata": {"name": "okta", "labels": {"team": "a", "tier": "1"}},
             "spec": {"client_secret": "s3cret-new", "client_id": "rev", "claims_to_roles": [{"roles": ["b"]}],
                      "display": "Okta"}}
    names = changed_fields(before, after)
    assert names == ["metadata.labels.tier", "spec.claims_to_roles", "spec.client_secret", "spec.display"]
    assert not any("s3cret" in name for name in names)
    assert changed_fields(None, {"spec": {"a": 1}}) == ["spec.a"]  # a creation: every field is new
    assert changed_fields({"spec": {"a": 1, "b": 2}}, {"spec": {"a": 1}}) == ["spec.b"]  # a removal
    assert changed_fields(after, after) == []


def test_the_actor_is_the_user_or_the_token_and_no_user_passes_for_the_token():
    def signed_in(username: str, connector: str) -> Principal:
        return Principal(username, ("admin",), EVERYTHING, Session(username, connector, ["admin"], 0.0, 1.0))
    assert actor_of(signed_in("dana@example.com", "okta")) == "dana@example.com"
    assert actor_of(Principal("admin-token", (), EVERYTHING, None)) == "break-glass token"  # the bearer token
    assert actor_of(signed_in("admin-token", BREAK_GLASS)) == "break-glass token"  # a console session it opened
    assert actor_of(signed_in("Break-Glass Token", "okta")) == "Break-Glass Token (signed in through okta)"
    assert actor_of(signed_in("server", "corp")) == "server (signed in through corp)"


@pytest.mark.parametrize("params, field, rule", [
    ({"action": "connector.explode"}, "action", "is not an action of the audit log"),
    ({"since": "yesterday"}, "since", "is not an ISO 8601 time"),
    ({"until": "2026-13-45"}, "until", "is not an ISO 8601 time"),
    ({"since": "2026-11-28", "until": "2026-11-27"}, "until", "is not after since"),
    ({"limit": "0"}, "limit", "is not an integer from 1 to 500"),
    ({"limit": "501"}, "limit", "is not an integer from 1 to 500"),
    ({"limit": "ten"}, "limit", "is not an integer from 1 to 500"),
    ({"limit": "\u0661\u0662"}, "limit", "is not an integer from 1 to 500"),  # Arabic-Indic digits
    ({"before": "-3"}, "before", "is not a positive integer"),
    ({"actor": "x" * 257}, "actor", "is longer than 256 characters"),
    ({"acter": "ann"}, "acter", "is not a filter of the audit log"),
])
def test_a_bad_filter_is_named_with_its_rule(params, field, rule):
    with pytest.raises(QueryError) as raised:
        parse_query(params)
    assert raised.value.field == field and rule in str(raised.value) and str(raised.value).startswith(f"{field}: ")


def test_filters_are_read_and_empty_ones_ignored():
    query = parse_query({"actor": " ann ", "action": "connector.apply", "since": "2026-11-27T10:00:00Z",
                         "until": "2026-11-27T13:00:00+02:00", "limit": "20", "before": "9"})
    ten = datetime(2026, 11, 27, 10, tzinfo=UTC).timestamp()
    assert query == AuditQuery(limit=20, before_seq=9, actor="ann", action="connector.apply", since=ten,
                               until=ten + 3600)
    assert parse_query({"actor": "", "since": " ", "limit": ""}) == AuditQuery()
    assert parse_query({"since": "2026-11-27"}).since == parse_query({"since": "2026-11-27T00:00:00Z"}).since


async def test_entries_come_back_newest_first_filtered_and_paged(storage: Storage):
    audit = Audit(storage.audit)
    base = time.time() - 3600
    clock = iter(base + n for n in range(10))
    audit.clock = lambda: next(clock)
    await audit.record("ann", "connector.apply", "oidcconnectors/okta", ip="10.0.0.1",
                       details={"created": True, "fields": ["spec.client_id"]})
    await audit.record("bob", "delivery.redeliver", "d-1", ip="10.0.0.2", account="acme")
    await audit.record("server", "admin-config.reload", "/etc/reviewer/admin.yaml", ip=None)
    await audit.record("ann", "delivery.redeliver", "d-2", ip="::1", account="other")
    everything = await storage.audit.entries(AuditQuery())
    assert [e.target for e in everything] == ["d-2", "/etc/reviewer/admin.yaml", "d-1", "oidcconnectors/okta"]
    first = everything[-1]
    assert (first.actor, first.ip, first.action, first.account, first.details, first.at) == \
        ("ann", "10.0.0.1", "connector.apply", None, {"created": True, "fields": ["spec.client_id"]}, base)
    assert [e.target for e in await storage.audit.entries(AuditQuery(actor="ann"))] == ["d-2", "oidcconnectors/okta"]
    assert [e.target for e in await storage.audit.entries(AuditQuery(action="delivery.redeliver"))] == ["d-2", "d-1"]
    assert [e.target for e in await storage.audit.entries(AuditQuery(since=base + 1, until=base + 3))] == \
        ["/etc/reviewer/admin.yaml", "d-1"]  # since included, until excluded
    assert [e.target for e in await storage.audit.entries(AuditQuery(with_account=True))] == ["d-2", "d-1"]
    page = await storage.audit.entries(AuditQuery(limit=2))
    rest = await storage.audit.entries(AuditQuery(limit=2, before_seq=page[-1].seq))
    assert [e.target for e in page + rest] == [e.target for e in everything]


async def test_a_narrowed_reader_sees_only_its_accounts_and_pages_on(storage: Storage):
    audit = Audit(storage.audit)
    for n in range(30):
        account = "acme-corp" if n % 3 == 0 else ("other" if n % 3 == 1 else None)
        await audit.record("ann", "delivery.redeliver", f"d-{n}", ip="127.0.0.1", account=account)
    access = Access({"acme": Role("acme", frozenset({"audit:read"}), ("acme*",)),
                     "none": Role("none", frozenset({"deliveries:read"}))})
    narrowed = grant_for(access, ["acme"])
    shown, next_before = await visible_entries(storage.audit, AuditQuery(limit=4), narrowed)
    assert [e.target for e in shown] == ["d-27", "d-24", "d-21", "d-18"] and next_before == shown[-1].seq
    more, _ = await visible_entries(storage.audit, AuditQuery(limit=100, before_seq=next_before), narrowed)
    assert [e.target for e in more] == [f"d-{n}" for n in range(15, -1, -3)]
    assert all(e.account == "acme-corp" for e in shown + more)
    whole, last = await visible_entries(storage.audit, AuditQuery(limit=100), EVERYTHING)
    assert len(whole) == 30 and last is None  # un-narrowed: instance-wide entries too
    assert not grant_for(access, ["none"]).holds("audit:read")


async def test_old_entries_are_pruned_like_deliveries(storage: Storage):
    audit = Audit(storage.audit, clock=lambda: time.time() - 40 * 86400)
    for n in range(250):  # more than one batch
        await audit.record("ann", "connector.delete", f"oidcconnectors/c{n}", ip="127.0.0.1")
    await Audit(storage.audit).record("ann", "connector.delete", "oidcconnectors/recent", ip="127.0.0.1")
    assert await prune_audit(storage.audit, 30) == 250
    assert [e.target for e in await storage.audit.entries(AuditQuery())] == ["oidcconnectors/recent"]


async def test_an_unknown_action_is_a_programming_error(storage: Storage):
    with pytest.raises(ValueError, match="is not an audit action"):
        await Audit(storage.audit).record("ann", "connector.rename", "x", ip=None)
    assert "connector.apply" in ACTIONS and await storage.audit.entries(AuditQuery()) == []
