"""Reconcile checks both connector kinds share: pure functions from a field to its problems.

Each takes the value found at a pointer (None when absent) and returns Problems whose messages
name the field, the rule broken and what to write instead.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

from bot.connectors.problem import SECRET_LOOKUP_FAILED, Problem, problem
from bot.connectors.values import DURATION_HINT, NANOS_PER_SECOND, parse_duration
from bot.pointers import get_at, join_pointer
from bot.secrets import SecretStore, is_reference, parse_reference

# design.md: the global Microsoft Graph service and the national-cloud deployments.
GRAPH_ENDPOINTS = (
    "https://graph.microsoft.com",
    "https://graph.microsoft.us",
    "https://dod-graph.microsoft.us",
    "https://microsoftgraph.chinacloudapi.cn",
)

PLACEHOLDER = re.compile(r"^<[A-Z][A-Z0-9_]*>$")
_HOST_LABEL = r"[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_HOSTNAME = re.compile(rf"^{_HOST_LABEL}(\.{_HOST_LABEL})*\.?$")


def present(value: Any) -> bool:
    """A field counts as set when it is not absent, null, empty text or an empty list."""
    return value not in (None, "", [], {})


def _walk_strings(value: Any, pointer: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, str):
        yield pointer, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _walk_strings(item, join_pointer(pointer, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _walk_strings(item, join_pointer(pointer, index))


def placeholders(doc: dict) -> list[Problem]:
    """Template values such as `<CLIENT_SECRET>` left in place of real ones."""
    return [problem(pointer, "placeholder",
                    f"still holds the placeholder {value}: put the real value, or a `secret://NAME/KEY` "
                    "reference for a secret")
            for pointer, value in _walk_strings(doc.get("spec"), "/spec") if PLACEHOLDER.match(value)]


def require(doc: dict, pointer: str, what: str) -> list[Problem]:
    """A field the connector cannot work without; reported on the field, or its parent when absent."""
    value = get_at(doc, pointer)
    if present(value):
        return []
    if value is None:
        parent, _, name = pointer.rpartition("/")
        return [problem(parent, "required", f"needs `{name}`: {what}")]
    return [problem(pointer, "required", f"is empty: {what}")]


def check_url(value: Any, pointer: str, *, https: bool) -> list[Problem]:
    """An absolute http(s) URL; `https` demands TLS (an identity provider's endpoints)."""
    if not isinstance(value, str) or not value:
        return []
    try:
        parts = urlsplit(value)
        valid = parts.scheme in ("http", "https") and bool(parts.hostname)
    except ValueError:
        valid = False
    if not valid:
        return [problem(pointer, "format", "must be an absolute URL such as `https://idp.example.com/path`")]
    if https and parts.scheme != "https" and not _loopback(parts.hostname or ""):
        return [problem(pointer, "not-https", "must be an https:// URL; the identity provider is reached over TLS "
                                              "(http only on a loopback host)")]
    return []


def _loopback(host: str) -> bool:
    """design.md: http is accepted on `localhost`, 127.0.0.0/8 and [::1] (a provider on this host)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_duration(value: Any, pointer: str) -> list[Problem]:
    """Durations are stored in nanoseconds but mean whole seconds, never negative (design.md)."""
    if value is None or isinstance(value, bool) or not isinstance(value, (str, int)):
        return []
    nanos = parse_duration(value)
    if nanos is None:
        return [problem(pointer, "format", f"must be {DURATION_HINT}")]
    if nanos < 0:
        return [problem(pointer, "minimum", "must not be negative; use `0` (or `never`) for none")]
    if nanos % NANOS_PER_SECOND:
        return [problem(pointer, "format", "must be a whole number of seconds (such as `90s` or `1h`)")]
    return []


def check_role_mappings(doc: dict, pointer: str, key: str, noun: str) -> list[Problem]:
    """`claims_to_roles` / `attributes_to_roles`: without them nobody who signs in gets a role."""
    items = get_at(doc, pointer)
    if not present(items):
        return require(doc, pointer, f"map at least one {noun} to roles, or nobody who signs in gets a role")
    found: list[Problem] = []
    for index, item in enumerate(items if isinstance(items, list) else []):
        if not isinstance(item, dict):
            continue
        here = join_pointer(pointer, index)
        found += require(doc, join_pointer(here, key), f"name the {noun} to match")
        found += require(doc, join_pointer(here, "roles"), "list the roles this mapping grants")
        found += check_regex(item.get("value"), join_pointer(here, "value"))
    return found


def check_regex(value: Any, pointer: str) -> list[Problem]:
    """A value written `^…$` is a regular expression; it must compile."""
    if not (isinstance(value, str) and len(value) >= 2 and value.startswith("^") and value.endswith("$")):
        return []
    try:
        re.compile(value)
    except re.error as exc:
        return [problem(pointer, "invalid-regex", f"is a regular expression (`^…$`) that does not compile: {exc}")]
    return []


def check_client_redirect_settings(doc: dict) -> list[Problem]:
    base = "/spec/client_redirect_settings"
    found: list[Problem] = []
    hosts = get_at(doc, f"{base}/allowed_https_hostnames")
    for index, host in enumerate(hosts if isinstance(hosts, list) else []):
        found += _check_host(host, f"{base}/allowed_https_hostnames/{index}")
    cidrs = get_at(doc, f"{base}/insecure_allowed_cidr_ranges")
    for index, cidr in enumerate(cidrs if isinstance(cidrs, list) else []):
        found += _check_cidr(cidr, f"{base}/insecure_allowed_cidr_ranges/{index}")
    return found


def _check_host(value: Any, pointer: str) -> list[Problem]:
    if not isinstance(value, str):
        return []
    if value.startswith("^") and value.endswith("$") and len(value) >= 2:
        return check_regex(value, pointer)
    if "://" in value or "/" in value or ":" in value:
        return [problem(pointer, "invalid-hostname",
                        "must be a host name alone (`app.example.com`), a `*` glob (`*.example.com`) "
                        "or a `^…$` regular expression; drop the scheme, port and path")]
    if len(value) > 253 or not _HOSTNAME.match(value.replace("*", "x")):
        return [problem(pointer, "invalid-hostname",
                        "is not a host name: use letters, digits, `-` and `.` (with `*` as a glob), "
                        "or a `^…$` regular expression")]
    return []


def _check_cidr(value: Any, pointer: str) -> list[Problem]:
    if not isinstance(value, str):
        return []
    try:
        if "/" not in value:
            raise ValueError
        ipaddress.ip_network(value, strict=False)
    except ValueError:
        return [problem(pointer, "invalid-cidr",
                        "is not a CIDR range: write an address and a prefix length, such as `10.0.0.0/8` "
                        "or `fd00::/8`")]
    return []


def check_groups_provider(doc: dict) -> list[Problem]:
    pointer = "/spec/directory_id_groups_provider/graph_endpoint"
    value = get_at(doc, pointer)
    if not isinstance(value, str) or not value or value.rstrip("/") in GRAPH_ENDPOINTS:
        return []
    return [problem(pointer, "enum", "must be one of the Microsoft Graph endpoints: " + ", ".join(GRAPH_ENDPOINTS)
                    + " (leave it out for the global service)")]


def resolve_secret(doc: dict, pointer: str, secrets: SecretStore | None) -> tuple[str | None, list[Problem]]:
    """The secret's value (a literal, or what a reference points to) and any lookup problem.

    The value is None when the field is absent, malformed, or not looked up (`secrets` None:
    offline validation checks a reference's form only). Messages name the reference, never a value.
    """
    value = get_at(doc, pointer)
    if not isinstance(value, str):
        return None, []
    if not is_reference(value):
        return value, []
    ref = parse_reference(value)
    if isinstance(ref, str):
        return None, [problem(pointer, "secret-reference", f"is not a valid secret reference: {ref}")]
    if secrets is None:
        return None, []
    resolved = secrets.lookup(ref)
    if resolved is None:
        return None, [problem(pointer, "secret-reference",
                              f"refers to `{ref}`, which the secret store does not hold: create key "
                              f"`{ref.key}` in secret `{ref.name}` (a UTF-8 file of at most 1 MiB), "
                              "or fix the reference", SECRET_LOOKUP_FAILED)]
    if not resolved:
        return None, [problem(pointer, "secret-reference",
                              f"refers to `{ref}`, which is empty: put the secret's value there",
                              SECRET_LOOKUP_FAILED)]
    return resolved, []


def common(doc: dict) -> list[Problem]:
    """The checks of fields both kinds have."""
    return check_client_redirect_settings(doc) + check_groups_provider(doc)
