"""The learning, its JSON, and the API's POST and PATCH bodies: every field checked, hostile ones first."""

from datetime import UTC, datetime, timedelta, timezone

import pytest

from bot.learnings.body import causes, new_learning, patched_learning
from bot.learnings.model import Learning, Scope, Source, from_json, new_id, newest_first, parse_time

NOW = datetime(2025, 5, 1, 12, 0, 0, tzinfo=UTC)


def made(body, author="alice"):
    return new_learning(body, id="0123456789abcdef", created=NOW, author=author)


def problems(body):
    learning, found = made(body)
    assert learning is None and found
    return {(issue.pointer, issue.code) for issue in found}, found


SUPPRESS = {"scope": {"account": "octo", "repository": "app", "paths": ["src/**"]}, "kind": "suppress",
            "rule": "no-print", "text": "print() is how this CLI talks to people"}


def test_a_valid_body_makes_a_learning_with_the_servers_id_time_and_author():
    learning, found = made({**SUPPRESS, "source": {"url": "https://github.com/octo/app/pull/1#discussion_r1"}})
    assert found == []
    assert learning == Learning("0123456789abcdef", Scope("octo", "app", ("src/**",)), "suppress",
                                SUPPRESS["text"], NOW, rule="no-print",
                                source=Source("https://github.com/octo/app/pull/1#discussion_r1", "alice"))
    assert learning.to_json() == {
        "id": "0123456789abcdef", "scope": {"account": "octo", "repository": "app", "paths": ["src/**"]},
        "kind": "suppress", "rule": "no-print", "category": None, "text": SUPPRESS["text"], "fingerprint": None,
        "source": {"url": "https://github.com/octo/app/pull/1#discussion_r1", "author": "alice"},
        "created": "2025-05-01T12:00:00Z"}
    assert from_json(learning.to_json()) == learning


def test_nulls_are_absent_and_a_guide_needs_neither_rule_nor_category():
    learning, found = made({"scope": {"account": "octo", "repository": None}, "kind": "guide", "text": "Tabs in Makefiles.",
                            "rule": None, "category": None, "fingerprint": None, "source": {"url": None}})
    assert found == [] and learning.scope == Scope("octo") and learning.rule is None
    assert learning.scope.full_name == "octo/*" and learning.about == "every finding"


@pytest.mark.parametrize("body, expected", [
    ("[]", ("", "type")),
    ({"scope": {"account": "octo"}, "kind": "suppress", "text": "x"}, ("", "required")),
    ({**SUPPRESS, "category": "bug"}, ("/category", "exclusive")),
    ({**SUPPRESS, "kind": "guide", "fingerprint": "abc"}, ("/fingerprint", "requires")),
    ({**SUPPRESS, "kind": "forget"}, ("/kind", "enum")),
    ({**SUPPRESS, "category": "correctness", "rule": None}, ("/category", "enum")),
    ({**SUPPRESS, "text": "   \n\t"}, ("/text", "min-length")),
    ({**SUPPRESS, "text": "x" * 2001}, ("/text", "max-length")),
    ({**SUPPRESS, "text": "fine\x00then"}, ("/text", "control-character")),
    ({**SUPPRESS, "text": "access = 'user\u202e \u2066// admin'"}, ("/text", "control-character")),
    ({**SUPPRESS, "rule": "no print"}, ("/rule", "pattern")),
    ({**SUPPRESS, "rule": "r" * 201}, ("/rule", "max-length")),
    ({**SUPPRESS, "fingerprint": "ab cd"}, ("/fingerprint", "pattern")),
    ({**SUPPRESS, "scope": {"account": "octo/app"}}, ("/scope/account", "pattern")),
    ({**SUPPRESS, "scope": {"account": "-octo"}}, ("/scope/account", "pattern")),
    ({**SUPPRESS, "scope": {"repository": "app"}}, ("/scope", "required")),
    ({**SUPPRESS, "scope": {"account": "octo", "repository": ".."}}, ("/scope/repository", "pattern")),
    ({**SUPPRESS, "scope": {"account": "octo", "repository": "a/b"}}, ("/scope/repository", "pattern")),
    ({**SUPPRESS, "scope": {"account": "octo", "paths": ["src/[a"]}}, ("/scope/paths/0", "glob-syntax")),
    ({**SUPPRESS, "scope": {"account": "octo", "paths": ["/etc/**"]}}, ("/scope/paths/0", "glob-syntax")),
    ({**SUPPRESS, "scope": {"account": "octo", "paths": ["{" + ",".join("a" * 300) + "}"]}},
     ("/scope/paths/0", "glob-syntax")),
    ({**SUPPRESS, "scope": {"account": "octo", "paths": ["*"] * 21}}, ("/scope/paths", "max-items")),
    ({**SUPPRESS, "scope": {"account": "octo", "paths": "src/**"}}, ("/scope/paths", "type")),
    ({**SUPPRESS, "source": {"url": "javascript:alert(1)"}}, ("/source/url", "pattern")),
    ({**SUPPRESS, "source": {"url": "https://x.example/" + "a" * 2048}}, ("/source/url", "max-length")),
    ({**SUPPRESS, "source": {"url": "https://x.example/a b"}}, ("/source/url", "pattern")),
    ({**SUPPRESS, "source": {"author": "mallory"}}, ("/source/author", "read-only")),
    ({**SUPPRESS, "id": "mine"}, ("/id", "read-only")),
    ({**SUPPRESS, "created": "2020-01-01T00:00:00Z"}, ("/created", "read-only")),
    ({**SUPPRESS, "extra": 1}, ("/extra", "unknown-property")),
    ({**SUPPRESS, "text": 12}, ("/text", "type")),
    ({**SUPPRESS, "kind": None}, ("/kind", "type")),
])
def test_hostile_and_wrong_bodies_name_the_field_and_the_rule(body, expected):
    if body == "[]":
        body = []
    found, issues = problems(body)
    assert expected in found
    assert all(issue.message for issue in issues)


def test_every_problem_is_reported_at_once_and_as_causes():
    _, issues = made({"scope": {"account": "octo", "paths": ["[", "ok/**", "]["]}, "kind": "suppress",
                      "text": "", "rule": "a b", "id": "x"})
    assert [(c["field"], c["reason"]) for c in causes(issues)] == [
        ("/id", "read-only"), ("/scope/paths/0", "glob-syntax"), ("/scope/paths/2", "glob-syntax"),
        ("/text", "min-length"), ("/rule", "pattern")]
    assert causes(issues)[1]["message"].startswith("`scope.paths[0]`: is not a valid doublestar glob")


def test_a_message_never_carries_a_long_hostile_value_whole():
    _, issues = made({**SUPPRESS, "kind": "<script>" + "x" * 5000})
    [issue] = issues
    assert issue.code == "enum" and len(issue.message) < 200


STORED = Learning("feedfacecafebeef", Scope("octo", "app", ("src/**",)), "suppress", "print is fine", NOW,
                  rule="no-print", source=Source("https://github.com/octo/app/pull/1", "alice"))


def patched(body):
    return patched_learning(STORED, body)


def test_a_patch_replaces_what_it_names_and_null_clears():
    learning, found = patched({"text": "print() is the CLI's output", "scope": {"repository": None, "paths": []}})
    assert found == []
    assert learning == Learning(STORED.id, Scope("octo"), "suppress", "print() is the CLI's output", NOW,
                                rule="no-print", source=STORED.source)
    learning, found = patched({"rule": None, "category": "style"})
    assert found == [] and (learning.rule, learning.category) == (None, "style")


def test_get_edit_patch_works_with_the_server_set_fields_sent_back_unchanged():
    body = STORED.to_json() | {"text": "changed"}
    body["created"] = "2025-05-01T14:00:00+02:00"  # the same moment, written another way
    learning, found = patched(body)
    assert found == [] and learning.text == "changed" and learning.created == NOW and learning.id == STORED.id


@pytest.mark.parametrize("body, expected", [
    ({"id": "other"}, ("/id", "read-only")),
    ({"created": "2020-01-01T00:00:00Z"}, ("/created", "read-only")),
    ({"created": "yesterday"}, ("/created", "read-only")),
    ({"source": {"url": "https://evil.example", "author": "mallory"}}, ("/source", "read-only")),
    ({"scope": {"account": "other-org"}}, ("/scope/account", "read-only")),
    ({"scope": {"account": 7}}, ("/scope/account", "read-only")),
    ({"rule": None}, ("", "required")),  # a suppress learning would be left about nothing
    ({"category": "bug"}, ("/category", "exclusive")),
    ({"text": None}, ("/text", "type")),
    ({"scope": "octo"}, ("/scope", "type")),
    ({"scope": {"paths": ["a/**", "["]}}, ("/scope/paths/1", "glob-syntax")),
    ({"kind": "guide", "fingerprint": "abc"}, ("/fingerprint", "requires")),
    ({"owner": "x"}, ("/owner", "unknown-property")),
    ("text", ("", "type")),
])
def test_a_patch_that_breaks_a_rule_changes_nothing(body, expected):
    learning, found = patched(body)
    assert learning is None and expected in {(i.pointer, i.code) for i in found}


def test_a_patch_may_repeat_the_account_in_another_case():
    learning, found = patched({"scope": {"account": "OCTO", "repository": "api"}})
    assert found == [] and learning.scope == Scope("octo", "api", ("src/**",))


def test_ids_times_and_order():
    assert len({new_id() for _ in range(100)}) == 100 and all(len(i) == 16 for i in (new_id(), new_id()))
    assert parse_time("2025-05-01T14:00:00+02:00") == NOW
    assert parse_time("2025-05-01T12:00:00Z").tzinfo is not None
    with pytest.raises(ValueError):
        parse_time("2025-05-01T12:00:00")  # no zone: which moment is it?
    older = Learning("b", Scope("o"), "guide", "t", NOW - timedelta(days=1))
    newer = Learning("a", Scope("o"), "guide", "t", NOW.astimezone(timezone(timedelta(hours=3))))
    same_time = Learning("c", Scope("o"), "guide", "t", NOW)
    assert [x.id for x in newest_first([older, newer, same_time])] == ["c", "a", "b"]


def test_scope_compares_logins_and_names_as_github_does():
    scope = Scope("Octo", "App")
    assert scope.covers_repository("octo", "app") and not scope.covers_repository("octo", "api")
    assert Scope("octo").covers_repository("OCTO", "anything") and not Scope("octo").covers_repository("other", "x")


def test_from_json_refuses_a_record_that_is_not_a_learning():
    with pytest.raises(ValueError):
        from_json({**STORED.to_json(), "kind": "forget"})
    with pytest.raises(KeyError):
        from_json({"id": "x"})
