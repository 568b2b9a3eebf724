"""`reviewer validate` for connector files: both phases, offline, with positions.

A file may hold several documents (as `kubectl apply -f` takes them); pointers are per document,
lines per file, and every diagnostic carries its `document` index. Both phases run: the
structural one, then the reconcile the server would run, each problem reported at the offending
field. Secret references are checked for their form only, unless a
secrets directory is given.
"""

from __future__ import annotations

from typing import Any

from bot.connectors.field_checks import ConnectorSecrets
from bot.connectors.kinds import KINDS, ConnectorKind, by_cli_name, by_kind
from bot.connectors.reconcile import reconcile
from bot.connectors.structure import structural_issues
from bot.documents.diagnostics import Diagnostic, sort_key
from bot.documents.yamldoc import YamlDocument, load_yaml_stream
from bot.secrets.references import SecretStore
from bot.shapes import to_diagnostics

_KIND_NAMES = " or ".join(k.kind for k in KINDS)


def validate_connector_text(text: str | bytes, *, secrets_dir: str | None = None, check_secrets: bool = False,
                            expected_kind: str | None = None,
                            admin_secrets: frozenset[str] = frozenset()) -> tuple[str | None, list[Diagnostic]]:
    """(the file's kind as `oidc-connector`/`saml-connector`, or None; every diagnostic).

    `expected_kind` (`--kind`) supplies a missing `kind` and makes another one an error.
    `check_secrets` looks references up in `secrets_dir` (with none, no reference resolves).
    `admin_secrets` are the secrets an admin file references (`--admin-config`): no connector's.
    """
    expected = by_cli_name(expected_kind) if expected_kind else None
    secrets = ConnectorSecrets(SecretStore(secrets_dir) if check_secrets else None, lambda: admin_secrets)
    docs, diagnostics = load_yaml_stream(text)
    broken = {d.document for d in diagnostics}
    file_kind: str | None = None
    seen_any = False
    for index, doc in enumerate(docs):
        if doc.value is None and index > 0:
            continue  # an empty document, such as after a trailing `---`
        seen_any = True
        if index in broken:
            continue  # the loader already said why (and the value may be partial)
        kind, found = _document(doc, expected, secrets)
        if file_kind is None and index == 0 and kind is not None:
            file_kind = kind.cli_name
        diagnostics.extend(d.in_document(index) for d in found)
    if not seen_any and not diagnostics:
        diagnostics.append(Diagnostic(1, 1, "", "not-a-mapping", "the file holds no connector resource"))
    return file_kind or (expected.cli_name if expected else None), sorted(diagnostics, key=sort_key)


def _document(doc: YamlDocument, expected: ConnectorKind | None,
              secrets: ConnectorSecrets) -> tuple[ConnectorKind | None, list[Diagnostic]]:
    value = doc.value
    if not isinstance(value, dict):
        line, column = doc.start
        return None, [Diagnostic(line, column, "", "not-a-mapping",
                                 "a connector resource is a mapping with apiVersion, kind, metadata and spec")]
    kind, problem = _kind_of(value, expected)
    if kind is None:
        line, column = doc.locate("/kind")
        return None, [Diagnostic(line, column, "/kind" if "kind" in value else "", *problem)]
    shaped = value if "kind" in value else {**value, "kind": kind.kind}
    issues = structural_issues(kind, shaped)
    found = to_diagnostics(issues, doc)
    if not isinstance(shaped.get("spec"), dict):
        return kind, found  # nothing to reconcile: the structural error says why
    # Unlike the API, which stops at a 422, a file gets both phases at once, so that one run
    # lists everything to fix; a field already reported as malformed is not reported again.
    covered = [i.pointer for i in issues if i.pointer]
    for p in reconcile(kind, shaped, secrets):
        if any(p.pointer == c or p.pointer.startswith(c + "/") for c in covered):
            continue
        line, column = doc.locate(p.pointer)
        found.append(Diagnostic(line, column, p.pointer, p.code, p.message))
    return kind, found


def _kind_of(value: dict, expected: ConnectorKind | None) -> tuple[ConnectorKind | None, tuple[str, str]]:
    written: Any = value.get("kind")
    if written is None:
        if expected is not None:
            return expected, ("", "")
        return None, ("required", f"missing required property `kind` ({_KIND_NAMES})")
    kind = by_kind(written)
    if kind is None:
        return None, ("kind-mismatch", f"`kind`: {written!r} is not a connector kind; expected {_KIND_NAMES}")
    if expected is not None and kind is not expected:
        return None, ("kind-mismatch", f"`kind`: this file was given as {expected.cli_name} "
                                       f"({expected.kind}); the document is a {kind.kind}")
    return kind, ("", "")
