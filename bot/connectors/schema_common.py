"""Shapes both connector kinds share: envelope, metadata, status and the common spec parts.

Written once in the shape language, so that validation (API 422s, `reviewer validate`), the JSON
Schemas and the CRDs cannot drift apart. Only structure lives here (types, enums, patterns,
limits); what a field means together with the others is the reconcile phase's (`reconcile_*`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime

from bot.connectors.kinds import RESERVED_NAMES, ConnectorKind
from bot.connectors.values import DURATION_HINT, DURATION_PATTERN, FORCE_AUTHN_HINT, FORCE_AUTHN_PATTERN
from bot.shapes import AnyOf, Arr, Bool, Check, Int, Obj, Shape, Str

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
DNS_SUBDOMAIN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
_QUALIFIED_NAME = r"([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?"
GROUP_TYPES = ("security-groups", "directory-roles", "all-groups")


def _int64(value: int) -> tuple[str, str] | None:
    if value > INT64_MAX:
        return ("maximum", f"must fit in 64 bits (at most {INT64_MAX})")
    if value < INT64_MIN:
        return ("minimum", f"must fit in 64 bits (at least {INT64_MIN})")
    return None


INT64 = Check("int64", _int64, schema={"format": "int64", "minimum": INT64_MIN, "maximum": INT64_MAX})


_RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})\Z")


def _date_time(value: str) -> tuple[str, str] | None:
    try:
        if _RFC3339.match(value):
            datetime.fromisoformat(value.upper().replace("Z", "+00:00"))
            return None
    except ValueError:
        pass
    return ("format", f"must be an RFC 3339 date-time such as `2024-05-01T10:00:00Z`; got {value[:40]!r}")


DATE_TIME = Check("date-time", _date_time, schema={"format": "date-time"})


def _not_reserved(name: str) -> tuple[str, str] | None:
    if name in RESERVED_NAMES:
        return ("reserved-name", f"`{name}` is reserved for a built-in login method; choose another name "
                                 f"(reserved: {', '.join(sorted(RESERVED_NAMES))})")
    return None


NOT_RESERVED = Check("reserved-name", _not_reserved, schema={"not": {"enum": sorted(RESERVED_NAMES)}})


def int64(description: str, minimum: int | None = None) -> Int:
    return Int(minimum=minimum, checks=(INT64,), description=description)


def text(description: str, **kw) -> Str:
    return Str(description=description, **kw)


def strings(description: str) -> Arr:
    return Arr(items=Str(min_length=1), description=description)


METADATA = Obj(
    description="Standard object metadata; the server manages generation, resourceVersion, uid and "
                "creationTimestamp (a client's values are ignored).",
    properties={
        "name": Str(min_length=1, max_length=253, pattern=DNS_SUBDOMAIN, checks=(NOT_RESERVED,),
                    pattern_hint="a lowercase RFC 1123 name: a-z, 0-9, `-` and `.`",
                    description="The connector's name, a lowercase RFC 1123 subdomain; `local`, "
                                "`passwordless`, `headless` and `browser` are reserved."),
        "namespace": Str(max_length=63, pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$",
                         pattern_hint="a lowercase RFC 1123 label",
                         description="Kubernetes namespace (used by Kubernetes only; the service API has none)."),
        "labels": Obj(
            values=Str(max_length=63, pattern=r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$",
                       pattern_hint="at most 63 letters, digits, `-`, `_`, `.`, starting and ending alphanumeric"),
            keys=Str(max_length=316, pattern=f"^{_QUALIFIED_NAME}$",
                     pattern_hint="an optional DNS prefix and `/`, then a name of letters, digits, `-`, `_`, `.`"),
            description="Labels, selectable with `labelSelector`."),
        "annotations": Obj(values=Str(), keys=Str(max_length=316, pattern=f"^{_QUALIFIED_NAME}$",
                                                  pattern_hint="an optional DNS prefix and `/`, then a name"),
                           description="Free-form annotations."),
        "generation": int64("Set by the server: +1 on every spec change.", minimum=0),
        "resourceVersion": text("Set by the server; send it back to update only what you read."),
        "uid": text("Set by the server."),
        "creationTimestamp": Str(checks=(DATE_TIME,), description="Set by the server (RFC 3339)."),
    },
    required=("name",),
)

CONDITION = Obj(
    name="condition",
    description="One observation of the object's state.",
    properties={
        "lastTransitionTime": Str(min_length=1, checks=(DATE_TIME,),
                                  description="Last time the condition moved from one status to another."),
        "message": Str(max_length=32768, description="Human-readable detail of the transition; may be empty."),
        "observedGeneration": int64("The metadata.generation the condition was based on.", minimum=0),
        "reason": Str(min_length=1, max_length=1024, pattern=r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$",
                      pattern_hint="a CamelCase identifier",
                      description="Programmatic identifier of the last transition, CamelCase."),
        "status": Str(enum=("True", "False", "Unknown"), description="True, False or Unknown."),
        "type": Str(max_length=316,
                    pattern=r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
                            r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$",
                    pattern_hint="CamelCase, optionally prefixed by a DNS domain and `/`",
                    description="The condition type: ValidStructure or SuccessfullyReconciled."),
    },
    required=("lastTransitionTime", "message", "reason", "status", "type"),
)

STATUS = Obj(
    description="Observed state, written by the server (a client's status is ignored).",
    properties={
        "conditions": Arr(items=CONDITION, description="Latest observations of the object's state."),
        "serviceResourceID": int64("Identifier of the resource in the service, assigned on create."),
    },
)

CLIENT_REDIRECT_SETTINGS = Obj(
    description="Client redirect URLs allowed for non-browser SSO logins besides the standard localhost ones.",
    properties={
        "allowed_https_hostnames": strings("Hosts allowed for https redirect URLs: host names, `*` globs "
                                           "(`*.example.com`) or `^…$` regular expressions."),
        "insecure_allowed_cidr_ranges": strings("CIDR ranges allowed for http or https redirect URLs, "
                                                "such as `10.0.0.0/8`."),
    },
)


def groups_provider(threshold: str) -> Obj:
    return Obj(
        description=f"Out-of-band user-groups provider for a directory-based provider (Microsoft Entra ID), "
                    f"used when {threshold}.",
        properties={
            "disabled": Bool(description="Disables the provider even when the groups source is present "
                                         "(useful when a SCIM group importer makes role mapping unnecessary)."),
            "graph_endpoint": text("The Microsoft Graph endpoint; default https://graph.microsoft.com. Set it "
                                   "for a national cloud: https://graph.microsoft.us, "
                                   "https://dod-graph.microsoft.us, https://microsoftgraph.chinacloudapi.cn."),
            "group_type": Str(enum=GROUP_TYPES, description="Group type filter; default security-groups."),
        },
    )


def role_mappings(key: str, noun: str) -> Arr:
    item = Obj(
        description=f"Grants `roles` to a user whose {noun} `{key}` has `value`.",
        properties={
            key: text(f"The {noun} name."),
            "value": text(f"The {noun} value to match: literal, `*` glob or `^…$` regular expression."),
            "roles": strings("The roles granted."),
        },
    )
    return Arr(items=item, description=f"Mapping from {noun}s to roles.")


DURATION = AnyOf(
    options=(Str(pattern=DURATION_PATTERN, pattern_hint=DURATION_HINT), Int(checks=(INT64,))),
    description="A Go duration string (`24h`, `1h30m`, `never`) or an integer of nanoseconds; "
                "whole seconds, never negative.",
)

FORCE_AUTHN = AnyOf(
    options=(Int(minimum=0, maximum=2), Bool(), Str(pattern=FORCE_AUTHN_PATTERN, pattern_hint=FORCE_AUTHN_HINT)),
    description="Whether re-authentication is forced: 0 unspecified, 1 yes, 2 no; or a boolean; or a "
                "string yes/no (true/false, on/off, y/n, 1/0, any case; empty = unspecified).",
)


def envelope(kind: ConnectorKind, spec: Obj, description: str) -> Obj:
    """The whole document of one kind: apiVersion, kind, metadata, spec, status."""
    accepted = kind.accepted_api_versions

    def api_version(value: str) -> tuple[str, str] | None:
        if value in accepted:
            return None
        return ("api-version", f"`{value}` is not a recognised version of {kind.kind}; accepted: "
                               + ", ".join(accepted))

    def same_kind(value: str) -> tuple[str, str] | None:
        if value == kind.kind:
            return None
        return ("kind-mismatch", f"must be {kind.kind} here; got `{value}`")

    properties: Mapping[str, Shape] = {
        "apiVersion": Str(checks=(Check("api-version", api_version, schema={"enum": list(accepted)}),),
                          description=f"{', '.join(accepted)} (stored as {kind.api_version})."),
        "kind": Str(checks=(Check("kind-mismatch", same_kind, schema={"const": kind.kind}),),
                    description=f"Always {kind.kind}."),
        "metadata": METADATA,
        "spec": spec,
        "status": STATUS,
    }
    return Obj(properties=properties, required=("apiVersion", "kind", "metadata", "spec"),
               description=description)
