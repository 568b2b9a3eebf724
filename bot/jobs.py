"""What a delivery means: parsing, classification (event/action → job, installation record or
ignored), the serialisation key and the head sha. Pure: bytes and dicts in, data out.

The `Job` is the seam between the queue and the pipeline: the queue calls an injected
`async def handle(job: Job) -> None` with one, and a raised exception marks the job failed.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

# event → actions that make a review job (None: every action). `edited` counts only when the base
# branch changed, which `wants_job` checks.
JOB_EVENTS: dict[str, frozenset[str]] = {
    "pull_request": frozenset({"opened", "reopened", "synchronize", "ready_for_review", "edited",
                               "labeled", "unlabeled"}),
    "check_run": frozenset({"rerequested"}),
    "check_suite": frozenset({"requested", "rerequested"}),
}
INSTALLATION_EVENTS = frozenset({"installation", "installation_repositories"})

Kind = Literal["job", "installation", "ignored"]


class InvalidPayload(ValueError):
    """A signed body that cannot be a webhook payload; the job is failed, never retried."""


@dataclass(frozen=True)
class Classification:
    kind: Kind
    action: str | None = None
    installation_id: int | None = None
    repo: str | None = None  # full name, owner/name
    pr_number: int | None = None
    head_sha: str | None = None
    reason: str = ""  # why it is ignored

    @property
    def key(self) -> str | None:
        """Work with the same key runs one at a time: the pull request, else the head commit (a
        job always has one: `classify` requires its repository and head)."""
        if self.repo and self.pr_number is not None:
            return f"{self.repo}#{self.pr_number}"
        if self.repo and self.head_sha:
            return f"{self.repo}@{self.head_sha}"
        return None


@dataclass(frozen=True)
class Job:
    """One unit of work handed to the pipeline."""

    delivery_id: str
    event: str
    action: str | None
    payload: dict[str, Any] = field(repr=False)
    installation_id: int | None
    repo: str | None
    pr_number: int | None
    head_sha: str | None
    attempt: int = 1  # 2+ when a failed delivery was redelivered, or a job interrupted by a restart


Handler = Callable[[Job], Awaitable[None]]


def parse_payload(body: bytes) -> dict[str, Any]:
    try:
        payload = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InvalidPayload(f"the body is not valid JSON ({exc})") from None
    except RecursionError:
        raise InvalidPayload("the body is nested too deeply to be a webhook payload") from None
    if not isinstance(payload, dict):
        raise InvalidPayload(f"the body is a JSON {type(payload).__name__}, not an object")
    return payload


def _get(data: Any, *path: str | int) -> Any:
    for step in path:
        if isinstance(step, int):
            data = data[step] if isinstance(data, list) and len(data) > step else None
        else:
            data = data.get(step) if isinstance(data, dict) else None
    return data


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _require(value: Any, what: str) -> Any:
    if value is None:
        raise InvalidPayload(f"the payload has no {what}")
    return value


def _pr_and_head(event: str, payload: dict[str, Any]) -> tuple[int | None, str | None]:
    if event == "pull_request":
        return (_require(_int(_get(payload, "pull_request", "number")), "pull_request.number"),
                _require(_str(_get(payload, "pull_request", "head", "sha")), "pull_request.head.sha"))
    # check_run / check_suite: fork pull requests come with an empty `pull_requests` list
    holder = _get(payload, event)
    return (_int(_get(holder, "pull_requests", 0, "number")),
            _require(_str(_get(holder, "head_sha")), f"{event}.head_sha"))


def classify(event: str, payload: dict[str, Any]) -> Classification:
    """Decide what a parsed delivery asks for. Raises InvalidPayload when a handled event lacks
    the fields its job needs (a payload GitHub would not send)."""
    action = _str(payload.get("action"))
    installation_id = _int(_get(payload, "installation", "id"))
    if event in INSTALLATION_EVENTS:
        return Classification("installation", action, _require(installation_id, "installation.id"))
    actions = JOB_EVENTS.get(event)
    if actions is None:
        return Classification("ignored", action, installation_id, reason=f"event {event} is not handled")
    if action not in actions:
        return Classification("ignored", action, installation_id, reason=f"{event}.{action} is not handled")
    if event == "pull_request" and action == "edited" and _get(payload, "changes", "base") is None:
        return Classification("ignored", action, installation_id, reason="pull_request.edited without a base change")
    repo = _require(_str(_get(payload, "repository", "full_name")), "repository.full_name")
    pr_number, head_sha = _pr_and_head(event, payload)
    return Classification("job", action, installation_id, repo, pr_number, head_sha)
