"""What a delivery means: parsing, classification (a job, an installation record or ignored, as the
routing table of bot/events/routes.py says), the serialisation key and the head sha. Pure: bytes
and dicts in, data out.

The `Job` is the seam between the queue and the pipeline: the queue calls an injected
`async def handle(job: Job) -> ReviewResult | None` with one, and a raised exception marks the job
failed. A job that reviewed a pull request returns what the review came to, which the queue
records beside the job's own end: a job can finish (`done`) with a review that failed.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from bot.documents.jsonbody import JsonBodyError, parse_json
from bot.events.routes import INSTALLATION_WORK, route, routed_events

# The shapes the store keeps of a job (bot/store/model.py holds them, so that the store imports
# nothing above it); named here too, where the classification and the queue read them.
from bot.store.model import REVIEW_RESULTS as REVIEW_RESULTS
from bot.store.model import Classification as Classification
from bot.store.model import Kind as Kind
from bot.store.model import ReviewResult as ReviewResult


class InvalidPayload(ValueError):
    """A signed body that cannot be a webhook payload; the job is failed, never retried."""


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


Handler = Callable[[Job], Awaitable[ReviewResult | None]]


def parse_payload(body: bytes) -> dict[str, Any]:
    """The delivery's JSON object, within bot.documents.jsonbody's bounds (nesting, integer size)."""
    try:
        payload = parse_json(body)
    except JsonBodyError as exc:
        raise InvalidPayload(exc.message) from None
    if not isinstance(payload, dict):
        raise InvalidPayload(f"the body is a JSON {type(payload).__name__}, not an object")
    return payload


def stored_payload(body: bytes) -> dict[str, Any]:
    """The payload of a queued delivery, for its job: the dispatcher classified it only after
    `parse_payload` took the same stored bytes within its bounds (a redelivery is classified
    again), so it is read here without walking it for those bounds a second time."""
    payload = json.loads(body)
    if not isinstance(payload, dict):  # the dispatcher never queues one; a row edited by hand
        raise InvalidPayload(f"the body is a JSON {type(payload).__name__}, not an object")
    return payload


def _get(data: Any, *path: str | int) -> Any:
    for step in path:
        if isinstance(step, int):
            data = data[step] if isinstance(data, list) and len(data) > step else None
        else:
            data = data.get(step) if isinstance(data, dict) else None
    return data


# Bounds of the columns a classification is recorded in (pr_number is a 32-bit INTEGER, ids are
# BIGINT): a signed body outside them fails alone, as invalid, instead of failing its batch's write.
PR_BOUND = 2**31 - 1
ID_BOUND = 2**63 - 1


def _int(value: Any, what: str, bound: int = ID_BOUND) -> int | None:
    """An integer to be recorded; one outside its column's range is refused."""
    if not isinstance(value, int) or isinstance(value, bool):
        return None
    if not -bound - 1 <= value <= bound:
        raise InvalidPayload(f"the payload's {what} is out of range: {value} is not within ±{bound}")
    return value


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _text(value: Any, what: str) -> str | None:
    """A non-empty string to be recorded; a NUL in it is refused (no PostgreSQL text can hold one)."""
    text = _str(value)
    if text is not None and "\x00" in text:
        raise InvalidPayload(f"the payload's {what} contains a NUL character (\\u0000)")
    return text


def _require(value: Any, what: str) -> Any:
    if value is None:
        raise InvalidPayload(f"the payload has no {what}")
    return value


def _required_text(value: Any, what: str) -> str:
    return _require(_text(value, what), what)


def _pr_and_head(event: str, payload: dict[str, Any]) -> tuple[int | None, str | None]:
    if event == "pull_request":
        number = _int(_get(payload, "pull_request", "number"), "pull_request.number", PR_BOUND)
        return (_require(number, "pull_request.number"),
                _required_text(_get(payload, "pull_request", "head", "sha"), "pull_request.head.sha"))
    # check_run / check_suite: fork pull requests come with an empty `pull_requests` list
    holder = _get(payload, event)
    return (_int(_get(holder, "pull_requests", 0, "number"), f"{event}.pull_requests[0].number", PR_BOUND),
            _required_text(_get(holder, "head_sha"), f"{event}.head_sha"))


def _push(payload: dict[str, Any], installation_id: int | None) -> Classification:
    """A push to the default branch updates the repository index; other pushes are ignored."""
    default = _str(_get(payload, "repository", "default_branch"))
    if payload.get("deleted") or default is None or _get(payload, "ref") != f"refs/heads/{default}":
        return Classification("ignored", None, installation_id, reason="push to a branch other than the default")
    repo = _required_text(_get(payload, "repository", "full_name"), "repository.full_name")
    after = _required_text(payload.get("after"), "after")
    return Classification("job", None, installation_id, repo, None, after)


def _installation_account(payload: dict[str, Any]) -> None:
    """What recording an installation reads besides its id: an account object, if any, with a
    string login. Checked here, so that a signed but malformed body fails alone, as invalid,
    instead of failing the store write of the whole batch it came in."""
    account = _get(payload, "installation", "account")
    if account is None:
        return
    login = account.get("login") if isinstance(account, dict) else None
    if not isinstance(account, dict) or not (login is None or isinstance(login, str)):
        raise InvalidPayload("the payload's installation.account is not an object with a string login")


def classify(event: str, payload: dict[str, Any]) -> Classification:
    """Decide what a parsed delivery asks for, as the routing table (bot/events/routes.py) says.
    Raises InvalidPayload when a handled event lacks the fields its job needs (a payload GitHub
    would not send)."""
    action = _text(payload.get("action"), "action")
    installation_id = _int(_get(payload, "installation", "id"), "installation.id")
    work = route(event, action)
    if work is None:
        what = f"{event}.{action}" if event in routed_events() else f"event {event}"
        return Classification("ignored", action, installation_id, reason=f"{what} is not handled")
    if work in INSTALLATION_WORK:
        _installation_account(payload)
        return Classification("installation", action, _require(installation_id, "installation.id"),
                              indexes=work == "index_installation")
    if work == "index_push":
        return _push(payload, installation_id)
    if work == "followup":
        return _classify_followup(event, action, installation_id, payload)
    if work == "outcome":
        repo = _required_text(_get(payload, "repository", "full_name"), "repository.full_name")
        number = _require(_int(_get(payload, "pull_request", "number"), "pull_request.number", PR_BOUND),
                          "pull_request.number")
        return Classification("job", action, installation_id, repo, number, None)
    if work == "upload":
        repo = _required_text(_get(payload, "repository", "full_name"), "repository.full_name")
        number = _require(_int(_get(payload, "upload", "pull_number"), "upload.pull_number", PR_BOUND),
                          "upload.pull_number")
        return Classification("job", action, _require(installation_id, "installation.id"), repo, number, None)
    if event == "pull_request" and action == "edited" and _get(payload, "changes", "base") is None:
        return Classification("ignored", action, installation_id, reason="pull_request.edited without a base change")
    repo = _required_text(_get(payload, "repository", "full_name"), "repository.full_name")
    pr_number, head_sha = _pr_and_head(event, payload)
    return Classification("job", action, installation_id, repo, pr_number, head_sha)


def _classify_followup(event: str, action: str | None, installation_id: int | None,
                       payload: dict[str, Any]) -> Classification:
    """A comment or review that may ask the app something. Bots are never answered (no loops
    between bots, the app's own comments included), so their deliveries make no job at all."""
    def ignored(reason: str) -> Classification:
        return Classification("ignored", action, installation_id, reason=reason)

    if _get(payload, "sender", "type") == "Bot":
        return ignored(f"{event}.{action} sent by a bot")
    if event == "issue_comment" and not isinstance(_get(payload, "issue", "pull_request"), dict):
        return ignored("issue_comment on an issue, not a pull request")
    if event == "pull_request_review" and not _str(_get(payload, "review", "body")):
        return ignored("pull_request_review without a body")
    holder = "issue" if event == "issue_comment" else "pull_request"
    repo = _required_text(_get(payload, "repository", "full_name"), "repository.full_name")
    number = _require(_int(_get(payload, holder, "number"), f"{holder}.number", PR_BOUND), f"{holder}.number")
    return Classification("job", action, installation_id, repo, number, None)


def supersedes(old_head: str | None, new_head: str | None) -> bool:
    """A job for `new_head` makes a waiting job for `old_head` pointless: both name a head and the
    heads differ. A job with no head (a comment or review) neither supersedes nor is superseded."""
    return bool(old_head and new_head and old_head != new_head)


def newest_head(heads: Iterable[str | None]) -> str | None:
    """The head of the latest job that has one (jobs in delivery order); None when none has."""
    return next((head for head in reversed(list(heads)) if head), None)
