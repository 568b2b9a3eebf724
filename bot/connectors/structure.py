"""The structural phase for either kind: the shapes' issues, with secrets kept out of messages."""

from __future__ import annotations

from typing import Any

from bot.connectors.kinds import OIDC, SAML, ConnectorKind
from bot.connectors.schema_oidc import OIDC_CONNECTOR
from bot.connectors.schema_saml import SAML_CONNECTOR
from bot.documents.pointers import human_pointer
from bot.shapes import Issue, Shape, validate

SHAPES: dict[str, Shape] = {OIDC.kind: OIDC_CONNECTOR, SAML.kind: SAML_CONNECTOR}


def shape_of(kind: ConnectorKind) -> Shape:
    return SHAPES[kind.kind]


def structural_issues(kind: ConnectorKind, doc: Any) -> list[Issue]:
    """Every schema issue of `doc` as `kind`.

    The shape language shows a wrong value back (`got integer 12345`), which is right for every
    field but a secret: an unquoted numeric client secret must not reappear in an answer or log.
    """
    issues = validate(shape_of(kind), doc)
    return [_hide_secret(issue) if _is_secret(kind, issue.pointer) else issue for issue in issues]


def _is_secret(kind: ConnectorKind, pointer: str) -> bool:
    return any(pointer == p or pointer.startswith(p + "/") for p in kind.secret_pointers)


def _hide_secret(issue: Issue) -> Issue:
    message = (f"{human_pointer(issue.pointer)}: must be a string (the value is not shown: the field holds "
               "a secret; quote it, or write a `secret://NAME/KEY` reference)")
    return Issue(issue.pointer, issue.code, message, issue.at_key)
