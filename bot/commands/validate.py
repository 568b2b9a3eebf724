"""`reviewer validate PATH...`: repository configs, admin configs and connector resources, offline.

The kind of each file comes from `--kind`, else its name (`.reviewer.yaml`, `.reviewer.yml`), else
its content (`apiVersion`/`kind`: a connector; `providers`/`defaults`/`accounts`: an admin file; `cases`: a
`reviewer eval` corpus; anything else is read as a repository file, so its mistakes are reported as such). A directory
stands for the repository configuration file(s) it holds.

Exit 0 when every file is valid, 1 when one is not, 2 on usage errors or an unreadable path. An
unreadable path (the --admin-config file included) is still a file of the output, invalid, with
one error of code `unreadable`, so that `--format json` never reports a run it could not do as
valid.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field

from bot.config.admin import AdminConfig, load_admin_config
from bot.config.model import REPO_CONFIG_NAMES
from bot.config.repo import load_repo_config
from bot.documents.diagnostics import Diagnostic, dumps, format_github, format_text, sort_key
from bot.documents.yamldoc import load_yaml_stream
from bot.eval.corpus import MAX_CORPUS_BYTES, load_corpus

ADMIN_KEYS = {"providers", "defaults", "accounts", "access"}
CONNECTOR_KINDS = ("oidc-connector", "saml-connector")


@dataclass
class FileResult:
    path: str
    kind: str
    errors: list[Diagnostic] = field(default_factory=list)

    @property
    def valid(self) -> bool:
        return not self.errors

    def to_json(self) -> dict:
        return {"path": self.path, "kind": self.kind, "valid": self.valid,
                "errors": [error.to_json() for error in self.errors]}


class Unusable(Exception):
    """An option that cannot be used, or a path that cannot be read: exit 2."""


UNREADABLE = "unreadable"


def run(args: argparse.Namespace) -> int:
    try:
        _check_full_name(args.full_name)
    except Unusable as problem:
        print(f"reviewer validate: {problem}", file=sys.stderr)
        return 2
    admin, admin_result = _admin(args.admin_config)
    results: list[FileResult] = []
    admin_listed = False
    for path in _expand(args.paths):
        if admin_result is not None and _same_file(path, admin_result.path):
            # The --admin-config file is an admin file, whatever --kind says, and is read once.
            results.append(FileResult(path, admin_result.kind, admin_result.errors))
            admin_listed = True
            continue
        try:
            results.append(validate_path(path, args, admin))
        except Unusable as problem:
            results.append(_unreadable(path, args.kind or "repo-config", problem))  # unknown: as unrecognised
    if admin_result is not None and not admin_result.valid and not admin_listed:
        results.append(admin_result)
    _print(results, args.format)
    if any(error.code == UNREADABLE for result in results for error in result.errors):
        return 2
    return 0 if all(result.valid for result in results) else 1


def _check_full_name(full_name: str | None) -> None:
    if full_name is not None and (full_name.count("/") != 1 or "" in full_name.split("/")):
        raise Unusable(f"--full-name must be OWNER/NAME; got {full_name!r}")


def _admin(path: str | None) -> tuple[AdminConfig | None, FileResult | None]:
    """The admin file given with --admin-config, and its result as a file of its own (listed
    when it is invalid, or when it is also one of the paths).

    An invalid or unreadable one yields no AdminConfig: repository files are then checked as
    without --admin-config, and the admin file's entry carries why (so the run is never valid).
    """
    if path is None:
        return None, None
    try:
        raw = _read(path)
    except Unusable as problem:
        return None, _unreadable(path, "admin-config", problem)
    admin, errors = load_admin_config(raw, path)
    return admin, FileResult(path, "admin-config", errors)


def _unreadable(path: str, kind: str, problem: Unusable) -> FileResult:
    """A path that cannot be read, as a file whose one error says so (and the run exits 2)."""
    print(f"reviewer validate: {problem}", file=sys.stderr)
    return FileResult(path, kind, [Diagnostic(1, 1, "", UNREADABLE, str(problem))])


def _same_file(a: str, b: str) -> bool:
    return os.path.realpath(a) == os.path.realpath(b)


def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError as error:
        raise Unusable(f"cannot read {path}: {error.strerror or error}") from None


def _expand(paths: list[str]) -> list[str]:
    """A directory stands for its repository configuration file(s)."""
    out: list[str] = []
    for path in paths:
        if os.path.isdir(path):
            found = [os.path.join(path, name) for name in REPO_CONFIG_NAMES
                     if os.path.isfile(os.path.join(path, name))]
            out.extend(found or [os.path.join(path, REPO_CONFIG_NAMES[0])])  # the read then fails: exit 2
        else:
            out.append(path)
    return list(dict.fromkeys(out))


def validate_path(path: str, args: argparse.Namespace, admin: AdminConfig | None) -> FileResult:
    raw = _read(path)
    kind = args.kind or detect_kind(path, raw)
    if kind in CONNECTOR_KINDS:
        return _connector(path, raw, kind, args.secrets_dir, args.kind, admin.secret_names if admin else frozenset())
    if kind == "admin-config":
        return FileResult(path, kind, load_admin_config(raw, path)[1])
    if kind == "eval-corpus":
        return FileResult(path, kind, load_corpus(raw, path)[1])
    errors = load_repo_config(raw, path, admin, args.full_name)[1]
    return FileResult(path, kind, _both_files(path) + errors)


def detect_kind(path: str, raw: bytes) -> str:
    if os.path.basename(path) in REPO_CONFIG_NAMES:
        return "repo-config"
    docs, _ = load_yaml_stream(raw, MAX_CORPUS_BYTES)  # the largest file it may be; each kind then keeps its own
    first = docs[0].value if docs else None
    if isinstance(first, dict):
        if "apiVersion" in first or "kind" in first:
            return "saml-connector" if "saml" in str(first.get("kind", "")).lower() else "oidc-connector"
        if ADMIN_KEYS & set(first):
            return "admin-config"
        if "cases" in first:
            return "eval-corpus"
    return "repo-config"


def _both_files(path: str) -> list[Diagnostic]:
    name = os.path.basename(path)
    if name not in REPO_CONFIG_NAMES:
        return []
    other = REPO_CONFIG_NAMES[1 - REPO_CONFIG_NAMES.index(name)]
    if not os.path.exists(os.path.join(os.path.dirname(path), other)):
        return []
    return [Diagnostic(1, 1, "", "both-config-files",
                       f"both {REPO_CONFIG_NAMES[0]} and {REPO_CONFIG_NAMES[1]} are in this directory; "
                       f"the app reads neither while both exist — keep one")]


def _connector(path: str, raw: bytes, kind: str, secrets_dir: str | None, forced: str | None,
               admin_secrets: frozenset[str]) -> FileResult:
    try:
        from bot.connectors.validate import validate_connector_text
    except ImportError:
        raise Unusable(f"{path}: connector validation is not available in this build") from None
    found_kind, errors = validate_connector_text(raw, secrets_dir=secrets_dir, check_secrets=secrets_dir is not None,
                                                 expected_kind=forced, admin_secrets=admin_secrets)
    return FileResult(path, found_kind or kind, list(errors))


FORMATTERS: dict[str, Callable[[str, list[Diagnostic]], list[str]]] = {"text": format_text, "github": format_github}


def _print(results: list[FileResult], fmt: str) -> None:
    for result in results:
        result.errors.sort(key=sort_key)
    if fmt == "json":
        print(dumps({"valid": all(r.valid for r in results), "files": [r.to_json() for r in results]}))
        return
    for result in results:
        for line in FORMATTERS[fmt](result.path, result.errors):
            print(line)
    invalid = [r for r in results if not r.valid]
    errors = sum(len(r.errors) for r in invalid)
    summary = (f"{len(results)} file(s) checked, all valid" if not invalid else
               f"{len(results)} file(s) checked, {len(invalid)} invalid, {errors} error(s)")
    print(f"reviewer validate: {summary}", file=sys.stderr)
