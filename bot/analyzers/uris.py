"""From a SARIF artifact location to a path inside the repository, or a refusal (pure).

A SARIF file comes from a CI job we do not control, and its paths end up in comments and in
lookups of the pull request's files, so a location that leaves the repository is refused rather
than cleaned up: a relative reference that climbs out with `..`, an absolute path or a `file://`
URI that is not under the checkout (the upload's `checkout_uri`, else the run's `SRCROOT` base), a
URI of another host, any other scheme. Percent-escapes are decoded before the checks, so `%2e%2e`
is `..`; a backslash is read as a separator, so `..\\..` is caught too.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote, urlsplit

MAX_URI_CHARS = 4096
ROOT_BASES = ("SRCROOT", "%SRCROOT%", "PROJECTROOT", "%PROJECTROOT%", "REPOROOT", "WORKSPACE")  # in this order
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_DRIVE = re.compile(r"^[A-Za-z]:[\\/]")
MAX_BASE_CHAIN = 8


class UriError(ValueError):
    """A location outside the repository; `code` is `uri-outside-repository` or `type`."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True)
class UriContext:
    """What a run's locations are resolved against."""

    checkout: str | None = None  # the checkout's absolute path ("/home/runner/work/r/r"), no trailing "/"
    bases: Mapping[str, Any] = field(default_factory=dict)  # the run's originalUriBaseIds
    repository_url: str | None = None  # "https://github.com/o/r": its /blob/REF/ URIs are paths


def context_for(run: Mapping[str, Any], checkout_uri: str | None, repository_url: str | None = None) -> UriContext:
    """The upload's checkout_uri wins; else an absolute file URI given for SRCROOT in the run."""
    bases = run.get("originalUriBaseIds")
    bases = bases if isinstance(bases, dict) else {}
    checkout = _absolute_dir(checkout_uri) if checkout_uri else None
    if checkout is None:
        for name in ROOT_BASES:
            base = bases.get(name)
            if isinstance(base, dict) and isinstance(base.get("uri"), str) and "uriBaseId" not in base:
                checkout = _absolute_dir(base["uri"])
                if checkout is not None:
                    break
    return UriContext(checkout, bases, repository_url.rstrip("/") if repository_url else None)


def _absolute_dir(uri: str) -> str | None:
    """`file:///a/b/` or `/a/b` → `/a/b`; anything else (relative, another host) → None."""
    parts = urlsplit(uri)
    if parts.scheme == "file" and parts.netloc in ("", "localhost"):
        path = unquote(parts.path)
    elif not parts.scheme and uri.startswith("/"):
        path = unquote(uri)
    else:
        return None
    path = posixpath.normpath(path.replace("\\", "/"))
    return path.rstrip("/") or "/"


def resolve(uri: Any, base_id: Any, context: UriContext) -> str:
    """The repository-relative path a location names; raises UriError."""
    if not isinstance(uri, str):
        raise UriError("type", "must be a string")
    if len(uri) > MAX_URI_CHARS:
        raise UriError("too-large", f"the URI has {len(uri)} characters; the limit is {MAX_URI_CHARS}")
    prefix = _base_prefix(base_id, context, 0) if base_id is not None else ""
    return _join(prefix, _relative(uri, context))


def _base_prefix(base_id: Any, context: UriContext, depth: int) -> str:
    """The repository-relative directory a uriBaseId stands for ("" for the root)."""
    if not isinstance(base_id, str):
        raise UriError("type", "uriBaseId must be a string")
    if depth > MAX_BASE_CHAIN:
        raise UriError("uri-outside-repository", f"uriBaseId `{base_id[:80]}` refers to bases more than "
                                                 f"{MAX_BASE_CHAIN} deep (or to itself)")
    base = context.bases.get(base_id)
    if not isinstance(base, dict) or not isinstance(base.get("uri"), str):
        return ""  # an undeclared base (`%SRCROOT%` most often) is the root the tool ran in
    if "uriBaseId" in base:
        return _join(_base_prefix(base["uriBaseId"], context, depth + 1), _relative(base["uri"], context), empty=True)
    absolute = _absolute_dir(base["uri"])
    if absolute is None:
        return _join("", _relative(base["uri"], context), empty=True)
    if context.checkout is None or context.checkout == absolute:
        return ""  # the base is where the tool ran: the root
    return _under_checkout(absolute, context.checkout, f"uriBaseId `{base_id[:80]}`")


def _relative(uri: str, context: UriContext) -> str:
    if _CONTROL.search(uri):
        raise UriError("uri-outside-repository", "the URI holds a control character")
    if _DRIVE.match(uri):
        raise UriError("uri-outside-repository", f"`{uri[:200]}` is an absolute Windows path; only paths "
                                                 "inside the repository are accepted")
    parts = urlsplit(uri)
    scheme = parts.scheme.lower()
    if scheme == "file":
        if parts.netloc not in ("", "localhost"):
            raise UriError("uri-outside-repository", f"`{uri[:200]}` names a file on another host")
        return _absolute_path(unquote(parts.path), uri, context)
    if scheme in ("http", "https"):
        return _repository_url(uri, context)
    if scheme:
        raise UriError("uri-outside-repository", f"`{uri[:200]}`: the scheme `{scheme[:20]}` does not name a "
                                                 "file of the repository")
    path = unquote(parts.path).replace("\\", "/")
    if path.startswith("/"):
        return _absolute_path(path, uri, context)
    return path


def _absolute_path(path: str, uri: str, context: UriContext) -> str:
    if context.checkout is None:
        raise UriError("uri-outside-repository", f"`{uri[:200]}` is an absolute path, and neither `checkout_uri` "
                                                 "nor the run's SRCROOT base says where the repository was")
    return _under_checkout(posixpath.normpath(path.replace("\\", "/")), context.checkout, f"`{uri[:200]}`")


def _under_checkout(path: str, checkout: str, what: str) -> str:
    if checkout == "/":
        return path.lstrip("/")
    if path == checkout:
        return ""
    if not path.startswith(checkout + "/"):
        raise UriError("uri-outside-repository", f"{what} is outside the checkout `{checkout[:200]}`")
    return path[len(checkout) + 1:]


def _repository_url(uri: str, context: UriContext) -> str:
    base = context.repository_url
    if base is None or not uri.startswith(base + "/blob/"):
        raise UriError("uri-outside-repository", f"`{uri[:200]}` is a web address, not a file of this repository")
    rest = uri[len(base) + len("/blob/"):].split("#", 1)[0].split("?", 1)[0]
    _, _, path = rest.partition("/")  # skip the commit or branch
    return unquote(path)


def _join(prefix: str, path: str, *, empty: bool = False) -> str:
    """Normalised `prefix/path`; refused where `..` climbs out of the repository or nothing is named."""
    out: list[str] = []
    for segment in f"{prefix}/{path}".split("/"):
        if segment in ("", "."):
            continue
        if segment == "..":
            if not out:
                raise UriError("uri-outside-repository", f"`{path[:200]}` climbs out of the repository with `..`")
            out.pop()
        else:
            out.append(segment)
    if not out and not empty:
        raise UriError("uri-outside-repository", f"`{path[:200]}` names the repository itself, not a file in it")
    return "/".join(out)
