"""Who may do what: the admin file's `access` section (docs/configuration.md "`access`: who may do what").

Roles grant permissions (`allow`), optionally narrowed to GitHub accounts (`accounts`, globs over
logins, case-insensitive as logins are). A narrowed grant allows only objects of its accounts:
what belongs to no account — the connectors, the sign-in log, the admin file, a delivery that
names no repository — needs the permission un-narrowed. `mfa.required` names permissions that
need an MFA check in the last five minutes. Without an `access` section, `admin` has `*` and `viewer` every `:read`.
A role that no entry defines grants nothing. Decisions here are pure: data in, data out.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from bot.config.admin_schema import PERMISSIONS

ALL = "*"
MFA_WINDOW = 300  # seconds an MFA check stays fresh


@dataclass(frozen=True)
class Role:
    name: str
    allow: frozenset[str]
    accounts: tuple[str, ...] | None = None  # None: every account

    def grants(self, permission: str) -> bool:
        return ALL in self.allow or permission in self.allow


@dataclass(frozen=True)
class Access:
    roles: Mapping[str, Role]
    mfa_required: frozenset[str] = frozenset()


DEFAULT_ACCESS = Access({
    "admin": Role("admin", frozenset({ALL})),
    "viewer": Role("viewer", frozenset(p for p in PERMISSIONS if p.endswith(":read"))),
})


def access_of(admin_config: Any) -> Access:
    """The access of an AdminConfig (None: no admin file, the defaults)."""
    data = getattr(admin_config, "data", None) or {}
    return access_from(data.get("access"))


def access_from(section: Any) -> Access:
    """The `access` section of a valid admin file (None or absent: the defaults)."""
    if not isinstance(section, Mapping):
        return DEFAULT_ACCESS
    roles = {}
    for name, spec in (section.get("roles") or {}).items():
        accounts = spec.get("accounts")
        roles[name] = Role(name, frozenset(spec.get("allow") or ()),
                           tuple(accounts) if accounts is not None else None)
    required = (section.get("mfa") or {}).get("required") or ()
    return Access(roles, frozenset(required))


@dataclass(frozen=True)
class Grant:
    """What a set of roles may do: per permission, the account globs (None: every account)."""

    scopes: Mapping[str, tuple[str, ...] | None] = field(default_factory=dict)

    @property
    def permissions(self) -> list[str]:
        return [p for p in PERMISSIONS if p in self.scopes]

    def holds(self, permission: str) -> bool:
        """Whether the permission is granted on some account: enough to open a page that lists
        objects and shows each only where `allows` says so, never to act on one."""
        return permission in self.scopes

    def allows(self, permission: str, account: str | None = None) -> bool:
        """Whether the permission is granted on an object of `account`; None is an object of no
        account (instance-wide), which only an un-narrowed grant allows."""
        if permission not in self.scopes:
            return False
        globs = self.scopes[permission]
        if globs is None:
            return True
        if account is None:
            return False
        login = account.lower()
        return any(fnmatch.fnmatchcase(login, glob.lower()) for glob in globs)


EVERYTHING = Grant({p: None for p in PERMISSIONS})


def grant_for(access: Access, role_names: Iterable[str]) -> Grant:
    """The union of the roles' permissions; a permission from a role without `accounts` covers all."""
    scopes: dict[str, tuple[str, ...] | None] = {}
    for name in role_names:
        role = access.roles.get(name)
        if role is None:
            continue
        for permission in PERMISSIONS:
            if not role.grants(permission):
                continue
            if role.accounts is None or scopes.get(permission, ()) is None:
                scopes[permission] = None
            else:
                scopes[permission] = tuple(dict.fromkeys((scopes.get(permission) or ()) + role.accounts))
    return Grant(scopes)


def needs_mfa(access: Access, permission: str, mfa_verified_at: float | None, now: float) -> bool:
    """True when `permission` needs a fresh MFA check that the session does not have."""
    if permission not in access.mfa_required and ALL not in access.mfa_required:
        return False
    return mfa_verified_at is None or now - mfa_verified_at > MFA_WINDOW
