"""The routing table (bot/events/routes.py) against what the app subscribes to and what it does with
each delivery: every event of the manifest is routed, every route is an event the app receives,
and a delivery is classified as its route says."""

from __future__ import annotations

from typing import get_args

from bot.events.jobs import classify
from bot.events.routes import ROUTES, UPLOAD_EVENT, Work, route, routed_events
from bot.github.manifest import load_manifest

# Every app receives these without subscribing (app.yml says so beside its events).
ALWAYS_DELIVERED = frozenset({"installation", "installation_repositories"})


def test_every_event_the_app_subscribes_to_is_routed():
    subscribed = set(load_manifest()["default_events"])
    assert subscribed - routed_events() == set()


def test_every_routed_event_is_delivered_to_the_app():
    subscribed = set(load_manifest()["default_events"])
    assert routed_events() - subscribed - ALWAYS_DELIVERED == {UPLOAD_EVENT}


def test_every_kind_of_work_has_a_route():
    assert {r.work for r in ROUTES} == set(get_args(Work))


def test_a_narrow_route_comes_before_the_wide_one_of_its_event():
    assert route("installation", "created") == "index_installation"
    assert route("installation", "suspend") == "record_installation"
    assert route("installation_repositories", None) == "record_installation"
    assert route("pull_request", "closed") == "outcome"
    assert route("pull_request", "synchronize") == "review"
    assert route("pull_request", "assigned") is None
    assert route("push", None) == "index_push"


def test_what_is_not_routed_is_ignored_with_a_reason():
    assert classify("ping", {"zen": "x"}).reason == "event ping is not handled"
    assert classify("pull_request", {"action": "assigned"}).reason == "pull_request.assigned is not handled"
    assert classify("issue_comment", {"action": "edited"}).reason == "issue_comment.edited is not handled"


def test_installations_are_recorded_and_index_jobs_only_when_repositories_come_or_go():
    created = classify("installation", {"action": "created", "installation": {"id": 7}})
    suspended = classify("installation", {"action": "suspend", "installation": {"id": 7}})
    assert (created.kind, created.indexes, created.key) == ("installation", True, "installation/7")
    assert (suspended.kind, suspended.indexes, suspended.key) == ("installation", False, None)
