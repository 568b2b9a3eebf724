"""What a GitHub Actions job tells `reviewer review --post` (pure but for reading the event file):
the repository, the token, the API's address, and the `pull_request` event — its action, number,
base and head commits, and the pull request object (`pr` in CEL expressions is made from it).

Every problem is one line naming the variable or the event's field, and the token is never shown
(not in a repr, a message or an error).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from bot.documents.jsonbody import JsonBodyError, parse_json
from bot.github import DEFAULT_API_URL

PULL_EVENTS = ("pull_request", "pull_request_target")
MAX_EVENT_BYTES = 25 * 1024 * 1024  # GitHub's webhook payload limit
_SHA = re.compile(r"^[0-9a-f]{40}$")
_REPOSITORY = re.compile(r"^[A-Za-z0-9][A-Za-z0-9-]*/[A-Za-z0-9._-]+$")


class EnvironmentProblem(ValueError):
    """The job's environment cannot be used for `--post`: exit 2, with this line."""


@dataclass(frozen=True)
class ActionsEvent:
    owner: str
    repo: str
    number: int
    action: str  # opened, synchronize, reopened, …
    base_sha: str
    head_sha: str
    pull: Mapping[str, Any]
    api_url: str
    token: str = field(repr=False)
    run: str = ""  # `<run id>-<attempt>`: names this job's posts (bot.pipeline.journal's markers)

    @property
    def full_name(self) -> str:
        return f"{self.owner}/{self.repo}"


def _required(environ: Mapping[str, str], name: str, why: str) -> str:
    value = environ.get(name, "")
    if not value:
        raise EnvironmentProblem(f"{name} is not set: --post needs {why} (GitHub Actions sets it)")
    return value


def _sha(pull: Mapping[str, Any], side: str) -> str:
    value = (pull.get(side) or {}).get("sha") if isinstance(pull.get(side), Mapping) else None
    if not isinstance(value, str) or not _SHA.match(value):
        raise EnvironmentProblem(f"the event's pull_request.{side}.sha is not a commit id")
    return value


def read_event(environ: Mapping[str, str]) -> ActionsEvent:
    """Raises EnvironmentProblem."""
    name = environ.get("GITHUB_EVENT_NAME", "pull_request")
    if name not in PULL_EVENTS:
        raise EnvironmentProblem(f"GITHUB_EVENT_NAME is {name!r}: --post reviews the pull request of a "
                                 "pull_request event")
    path = _required(environ, "GITHUB_EVENT_PATH", "the event's file")
    repository = _required(environ, "GITHUB_REPOSITORY", "the repository's owner/name")
    if not _REPOSITORY.match(repository):
        raise EnvironmentProblem(f"GITHUB_REPOSITORY is {repository[:200]!r}, not owner/name")
    token = _required(environ, "GITHUB_TOKEN", "a token to post with (pass secrets.GITHUB_TOKEN in env)")
    try:
        with open(path, "rb") as handle:
            raw = handle.read(MAX_EVENT_BYTES + 1)
    except OSError as error:
        raise EnvironmentProblem(f"GITHUB_EVENT_PATH {path}: {error.strerror or error}") from None
    if len(raw) > MAX_EVENT_BYTES:
        raise EnvironmentProblem(f"GITHUB_EVENT_PATH {path}: larger than {MAX_EVENT_BYTES} bytes")
    try:
        event = parse_json(raw)
    except JsonBodyError as error:
        raise EnvironmentProblem(f"GITHUB_EVENT_PATH {path}: not JSON ({error.message})") from None
    pull = event.get("pull_request") if isinstance(event, dict) else None
    if not isinstance(pull, dict):
        raise EnvironmentProblem(f"GITHUB_EVENT_PATH {path}: not a pull_request event (no pull_request object)")
    number = pull.get("number", event.get("number"))
    if not isinstance(number, int) or isinstance(number, bool) or number < 1:
        raise EnvironmentProblem("the event's pull_request.number is not a pull request number")
    action = event.get("action") if isinstance(event.get("action"), str) else "manual"
    owner, repo = repository.split("/")
    run = "-".join(v for v in (environ.get("GITHUB_RUN_ID", ""), environ.get("GITHUB_RUN_ATTEMPT", "")) if v)
    return ActionsEvent(owner, repo, number, action, _sha(pull, "base"), _sha(pull, "head"), pull,
                        (environ.get("GITHUB_API_URL") or DEFAULT_API_URL).rstrip("/"), token, run)
