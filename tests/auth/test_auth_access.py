"""The admin file's `access` section (validated at line and column) and the decisions made from it:
roles to permissions, accounts, MFA; and role mapping from claims with Teleport's matching."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from bot.auth.access import DEFAULT_ACCESS, access_from, grant_for, needs_mfa
from bot.auth.roles import RoleMapping, map_roles
from bot.config.admin import load_admin_config
from bot.config.admin_schema import PERMISSIONS

ACCESS = """\
access:
  roles:
    admin:   {allow: ["*"]}
    auditor: {allow: ["config:read", "deliveries:read", "connectors:read"], accounts: ["acme*"]}
    ops:     {allow: ["config:read"]}
  mfa:
    required: ["connectors:write", "config:write"]
"""


def test_a_valid_access_section_loads_and_decides():
    admin, problems = load_admin_config(ACCESS, "admin.yaml")
    assert problems == []
    access = access_from(admin.data["access"])
    auditor = grant_for(access, ["auditor"])
    assert auditor.allows("config:read", "acme-corp") and auditor.allows("config:read", "ACME")
    assert not auditor.allows("config:read", "other") and not auditor.allows("connectors:write")
    both = grant_for(access, ["auditor", "ops"])
    assert both.allows("config:read", "other")  # a role without `accounts` covers every account
    assert not both.allows("deliveries:read", "other")
    assert grant_for(access, ["admin"]).allows("deliveries:write", "anyone")
    assert grant_for(access, ["viewer"]).permissions == []  # a role no entry defines grants nothing
    assert needs_mfa(access, "connectors:write", None, 1000.0)
    assert needs_mfa(access, "connectors:write", 600.0, 1000.0)  # older than 5 minutes
    assert not needs_mfa(access, "connectors:write", 800.0, 1000.0)
    assert not needs_mfa(access, "connectors:read", None, 1000.0)


def test_without_an_access_section_admin_and_viewer_are_defined():
    admin, _ = load_admin_config("defaults: {enabled: true}\n", "admin.yaml")
    access = access_from(admin.data.get("access"))
    assert access == DEFAULT_ACCESS
    assert grant_for(access, ["viewer"]).permissions == ["connectors:read", "config:read", "deliveries:read",
                                                         "learnings:read", "audit:read"]
    assert grant_for(access, ["admin"]).permissions == list(PERMISSIONS)  # every one
    assert len(PERMISSIONS) == 10
    assert grant_for(access, ["admin"]).allows("analyses:write", "anyone")
    assert not grant_for(access, ["viewer"]).holds("analyses:write")


@pytest.mark.parametrize(("text", "where", "code"), [
    ("access:\n  roles:\n    dev: {allow: [\"repos:read\"]}\n", (3, 19, "/access/roles/dev/allow/0"), "enum"),
    ("access:\n  roles:\n    dev: {allow: [\"*\"], deny: [\"x\"]}\n", (3, 25, "/access/roles/dev/deny"),
     "unknown-property"),
    ("access:\n  roles:\n    dev: {accounts: [\"a*\"]}\n", (3, 10, "/access/roles/dev"), "required"),
    ("access:\n  roles:\n    dev: {allow: [\"*\"], accounts: [\"acme[\"]}\n", (3, 36, "/access/roles/dev/accounts/0"),
     "glob-syntax"),
    ("access:\n  mfa:\n    required: [\"everything\"]\n", (3, 16, "/access/mfa/required/0"), "enum"),
    ("access:\n  groups: {}\n", (2, 3, "/access/groups"), "unknown-property"),
])
def test_access_errors_name_the_place_and_the_rule(text, where, code):
    admin, problems = load_admin_config(text, "admin.yaml")
    assert admin is None
    found = [(p.line, p.column, p.pointer, p.code) for p in problems]
    assert (*where, code) in found, found


def test_the_published_admin_schema_describes_access():
    out = subprocess.run([sys.executable, "-m", "bot", "schema", "admin-config"], capture_output=True, text=True,
                         check=True).stdout
    schema = json.loads(out)
    roles = schema["properties"]["access"]["properties"]["roles"]
    assert roles["additionalProperties"] == {"$ref": "#/$defs/role"}
    role = schema["$defs"]["role"]
    assert role["required"] == ["allow"] and "*" in role["properties"]["allow"]["items"]["enum"]


def mapping(claim, value, *roles):
    return RoleMapping(claim, value, roles)


@pytest.mark.parametrize(("mappings", "claims", "roles"), [
    ([mapping("groups", "admins", "admin")], {"groups": ["users", "admins"]}, ["admin"]),
    ([mapping("groups", "admins", "admin")], {"groups": "admins"}, ["admin"]),
    ([mapping("groups", "admins", "admin")], {"groups": "admins-x"}, []),  # the whole value must match
    ([mapping("groups", "dev-*", "dev")], {"groups": ["dev-blue"]}, ["dev"]),
    ([mapping("groups", "*-admins", "$1-admin")], {"groups": ["ops-admins"]}, ["ops-admin"]),
    ([mapping("groups", "^team-(.*)$", "${1}", "member")], {"groups": ["team-red", "team-blue"]},
     ["red", "member", "blue"]),
    ([mapping("groups", "^team-(?P<name>[a-z]+)$", "t-${name}")], {"groups": ["team-red"]}, ["t-red"]),
    ([mapping("groups", "^team-.*", "x")], {"groups": ["team-red"]}, []),  # `^…` without `$` is a glob literal
    ([mapping("groups", "^team-.*", "x")], {"groups": ["^team-.*"]}, ["x"]),
    ([mapping("groups", "a", "r"), mapping("email", "*@example.com", "r")],
     {"groups": ["a"], "email": "x@example.com"}, ["r"]),  # deduplicated
    ([mapping("groups", "a", "r")], {"groups": [1, {"a": 1}, None]}, []),  # only strings match
    ([mapping("groups", "a.b", "r")], {"groups": ["axb"]}, []),  # a glob's `.` is a dot
    ([mapping("groups", "^(", "r")], {"groups": ["("]}, []),  # a broken regex grants nothing
    ([mapping("groups", "^(a+)+$", "r")], {"groups": ["a" * 5000 + "!"]}, []),  # RE2: no catastrophic backtracking
])
def test_claims_map_to_roles_as_in_teleport(mappings, claims, roles):
    assert map_roles(mappings, claims).roles == roles


# A regular expression matches the whole value, whatever its alternations and anchors say: Go's
# `regexp` reads `^admins|ops$` as "starts with admins, or ends with ops"; we never grant on that.
@pytest.mark.parametrize(("value", "claim", "roles"), [
    ("^admins|ops$", "admins-of-nothing", []),
    ("^admins|ops$", "not-ops", []),
    ("^admins|ops$", "admins", ["admin"]),
    ("^admins|ops$", "ops", ["admin"]),
    ("^admins$", "admins\n", []),  # `$` is the end of the value, not "before a final newline"
    ("^a|b|c$", "a-b-c", []),
    ("^(team)-(red|blue)$", "team-red-x", []),
    ("^$", "", ["admin"]),
    ("^$", "x", []),
    ("^.*@example\\.com$", "ann@example.com.evil.net", []),
    ("^.*@example\\.com$", "ann@example.com", ["admin"]),
    ("*@example.com", "ann@example.com\n", []),
    ("*@example.com", "ann@example.com.evil.net", []),
])
def test_a_regular_expression_must_match_the_whole_claim_value(value, claim, roles):
    assert map_roles([mapping("groups", value, "admin")], {"groups": [claim]}).roles == roles


def test_a_case_only_match_grants_nothing_and_says_why():
    result = map_roles([mapping("groups", "Admins", "admin")], {"groups": ["admins"]})
    assert result.roles == [] and "case" in result.warnings[0]


def test_analyses_write_is_narrowed_to_accounts_like_the_others():
    access = access_from({"roles": {"ci": {"allow": ["analyses:write"], "accounts": ["acme*"]}}})
    ci = grant_for(access, ["ci"])
    assert ci.allows("analyses:write", "acme-corp") and ci.allows("analyses:write", "ACME")
    assert not ci.allows("analyses:write", "other") and not ci.allows("analyses:write", None)
    assert not ci.allows("deliveries:write", "acme-corp")
