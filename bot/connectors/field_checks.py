"""Reconcile checks both connector kinds share: pure functions from a field to its problems.

Each takes the value found at a pointer (None when absent) and returns Problems whose messages
name the field, the rule broken and what to write instead.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from bot.connectors.problem import SECRET_LOOKUP_FAILED, Problem, problem
from bot.connectors.safe_parse import compile_regex
from bot.connectors.urls import URLError, parse_url
from bot.connectors.values import DURATION_HINT, NANOS_PER_SECOND, parse_duration
from bot.documents.pointers import get_at, join_pointer
from bot.secrets.references import SERVER_SECRET_NAMES, SecretError, SecretStore, is_reference, parse_reference, resolve

# docs/connectors.md: the global Microsoft Graph service and the national-cloud deployments.
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


def check_url(value: Any, pointer: str) -> list[Problem]:
    """An absolute https URL, parsed as Go's net/url parses it (Teleport reads it so); http is
    accepted on a loopback host only, as Teleport accepts it (a provider on the same host)."""
    if not isinstance(value, str) or not value:
        return []
    try:
        url = parse_url(value)
    except URLError as error:
        return [problem(pointer, "format", f"is not a valid URL: it {error}")]
    if url.scheme not in ("http", "https") or not url.hostname:
        return [problem(pointer, "format", "must be an absolute URL such as `https://idp.example.com/path`")]
    if url.scheme != "https" and not is_loopback(url.hostname):
        return [problem(pointer, "not-https", "must be an https:// URL (http is accepted only on a loopback host "
                                              "such as `localhost` or `127.0.0.1`)")]
    return []


def is_loopback(hostname: str) -> bool:
    """`localhost`, 127.0.0.0/8 or ::1 (docs/connectors.md: where http is accepted)."""
    if hostname.lower().rstrip(".") == "localhost":
        return True
    try:
        return ipaddress.ip_address(hostname).is_loopback
    except ValueError:
        return False


def check_duration(value: Any, pointer: str) -> list[Problem]:
    """Durations are stored in nanoseconds but mean whole seconds, never negative (docs/connectors.md)."""
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
    """A value written `^…$` is a regular expression; it must compile as Go's `regexp` would."""
    if not (isinstance(value, str) and len(value) >= 2 and value.startswith("^") and value.endswith("$")):
        return []
    compiled = compile_regex(value)
    if isinstance(compiled, str):
        return [problem(pointer, "invalid-regex",
                        f"is a regular expression (`^…$`) that does not compile: {compiled[:200]}")]
    return []


def check_user_matchers(doc: dict) -> list[Problem]:
    """`user_matchers` are globs, or `^…$` regular expressions that must compile."""
    matchers = get_at(doc, "/spec/user_matchers")
    found: list[Problem] = []
    for index, matcher in enumerate(matchers if isinstance(matchers, list) else []):
        found += check_regex(matcher, f"/spec/user_matchers/{index}")
    return found


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


def connector_name(doc: dict) -> str:
    """The connector's `metadata.name`, or "" when it has none (then no reference is its own)."""
    name = get_at(doc, "/metadata/name")
    return name if isinstance(name, str) else ""


@dataclass(frozen=True)
class ConnectorSecrets:
    """The secret store as connectors see it.

    `store` None checks references for their form and owner only (offline validation).
    `admin_secrets()` gives the secret NAMEs the admin file references (model keys and anything
    else it names, at instance or account level), read at every use: the admin file reloads, and a
    secret it starts to reference is off limits to every connector from then on.
    """

    store: SecretStore | None = None
    admin_secrets: Callable[[], frozenset[str]] = field(default=lambda: frozenset())

    @property
    def root(self) -> str | None:
        return self.store.root if self.store is not None else None


def resolve_secret(doc: dict, pointer: str, secrets: ConnectorSecrets) -> tuple[str | None, list[Problem]]:
    """The secret's value (a literal, or what a reference points to) and any lookup problem.

    The value is None when the field is absent, malformed, forbidden, or not looked up (offline:
    a reference's form and owner are checked only). Messages name the reference, never a value.

    One secret store holds every connector's secrets and the model API keys, and anyone may start
    a sign-in, which sends the client secret to the connector's token endpoint. So a connector may
    read only the secret named after itself (`secret://<metadata.name>/KEY`, one Kubernetes Secret
    per connector), and never the server's own (`github-app`) or a secret the admin file references,
    whatever the connector is called (a connector *named* `openai` must not read
    `secret://openai/api-key`). These rules hold at every use, not only when the connector is written.
    """
    value = get_at(doc, pointer)
    if not isinstance(value, str):
        return None, []
    if not is_reference(value):
        if value[:7].lower() == "file://":
            return None, [problem(pointer, "secret-reference",
                                  "looks like a `file://` URL, which is never read: a literal here is the secret "
                                  "itself. Put the file's content in the secret store and write "
                                  "`secret://NAME/KEY`")]
        return value, []
    ref = parse_reference(value)
    if isinstance(ref, str):
        return None, [problem(pointer, "secret-reference", f"is not a valid secret reference: {ref}")]
    owner = connector_name(doc)
    if ref.name in SERVER_SECRET_NAMES:
        return None, [problem(pointer, "secret-reference",
                              f"refers to secret `{ref.name}`, which holds the server's own GitHub App credentials: "
                              "no connector may read it, whatever the connector is called; give the connector a "
                              "secret of its own name")]
    if ref.name != owner:
        return None, [problem(pointer, "secret-reference",
                              f"refers to secret `{ref.name}`, but a connector may only read its own secret: "
                              f"write `secret://{owner or 'NAME'}/{ref.key}` (secret NAME = the connector's "
                              "metadata.name)")]
    if ref.name in secrets.admin_secrets():
        return None, [problem(pointer, "secret-reference",
                              f"refers to secret `{ref.name}`, which the admin file (REVIEWER_ADMIN_CONFIG) "
                              "references (a model key, say): a connector may never read such a secret, whatever "
                              "it is called, since anyone may start a sign-in and the connector sends its secret "
                              "to its provider. Give the connector another name and keep its own secret under "
                              "that name")]
    if secrets.store is None:
        return None, []
    try:
        return resolve(value, secrets.store), []
    except SecretError as error:
        if error.malformed:
            return None, [problem(pointer, "secret-reference", f"is not a valid secret reference: {error}")]
        return None, [problem(pointer, "secret-reference", f"refers to `{value}`, but {error}",
                              SECRET_LOOKUP_FAILED)]


def check_file_uri(value: Any, pointer: str) -> list[Problem]:
    """A file path or a `file://` URI: Teleport reads no other scheme (`cloud_service_account_uri`)."""
    if not isinstance(value, str) or not value:
        return []
    try:
        url = parse_url(value)
    except URLError as error:
        return [problem(pointer, "format", f"is not a valid path or URI: it {error}")]
    if url.scheme not in ("", "file"):
        return [problem(pointer, "format", f"must be a file path or a `file://` URI; `{url.scheme}:` URIs are "
                                           "not read (only files are)")]
    if not url.path:
        return [problem(pointer, "format", "names no file: write a path such as `/etc/reviewer/sa.json` or "
                                           "`file:///etc/reviewer/sa.json`")]
    return []


def common(doc: dict) -> list[Problem]:
    """The checks of fields both kinds have."""
    return check_client_redirect_settings(doc) + check_groups_provider(doc) + check_user_matchers(doc)
