"""Which event and action mean which kind of work: the one routing table of the app (pure).

Each `Route` is declared once and read twice: by `bot.events.jobs.classify`, which decides what the
dispatcher does with a delivery (a job, an installation record, or ignored), and by the pipeline
(`bot/pipeline/router.py`), which binds each kind of work to the step that does it. A route names
an event and the actions it takes (`ANY`: every action, or none at all); the first route that
matches wins, so a narrower route comes before a wider one of the same event.

The events are those the GitHub App manifest subscribes to (`bot/github/app.yml`), the two
installation events every app receives, and `UPLOAD_EVENT`, which the server queues itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

# What a delivery asks for:
# - review: review the pull request's head (bot/pipeline/review.py)
# - outcome: what became of posted findings, a thread resolved or a pull request closed (its 👎 are
#   read one last time; docs/reviews.md "Learnings")
# - followup: a comment or review that may talk to the app, a question or a command (issue #15)
# - upload: a SARIF upload for a known pull request (bot/server/api/uploads.py)
# - index_push: a push, which keeps the default branch's repository index current
# - index_installation: repositories came or went, their indexes are built or deleted
# - record_installation: the installation is recorded by the dispatcher, and no job is queued
Work = Literal["review", "outcome", "followup", "upload", "index_push", "index_installation", "record_installation"]

# A SARIF upload for a known pull request (bot/server/api/uploads.py queues it as a delivery of its own,
# never sent by GitHub): a job under the pull request's key, with no head, so that it neither
# supersedes a review nor is superseded by one.
UPLOAD_EVENT = "reviewer_sarif_upload"

ANY: frozenset[str] | None = None  # a route that takes every action, and deliveries without one


@dataclass(frozen=True)
class Route:
    event: str
    actions: frozenset[str] | None  # None (ANY): every action
    work: Work

    def matches(self, event: str, action: str | None) -> bool:
        return event == self.event and (self.actions is None or action in self.actions)


def _on(event: str, actions: str | frozenset[str] | None, work: Work) -> Route:
    return Route(event, frozenset({actions}) if isinstance(actions, str) else actions, work)


ROUTES: tuple[Route, ...] = (
    # `edited` counts only when the base branch changed, which bot.events.jobs checks.
    _on("pull_request", frozenset({"opened", "reopened", "synchronize", "ready_for_review", "edited", "labeled",
                                   "unlabeled"}), "review"),
    _on("pull_request", "closed", "outcome"),
    _on("check_run", "rerequested", "review"),
    _on("check_suite", frozenset({"requested", "rerequested"}), "review"),
    _on("push", ANY, "index_push"),
    # Follow-ups and commands: their jobs name the pull request and no head; they run in turn with
    # its reviews, and a push never supersedes them.
    _on("issue_comment", "created", "followup"),
    _on("pull_request_review_comment", "created", "followup"),
    _on("pull_request_review", "submitted", "followup"),
    _on("pull_request_review_thread", frozenset({"resolved", "unresolved"}), "outcome"),
    # Installations: every action is recorded; those that add or remove repositories also queue a
    # job that builds or deletes their indexes, one repository at a time per installation.
    _on("installation", frozenset({"created", "deleted"}), "index_installation"),
    _on("installation_repositories", frozenset({"added", "removed"}), "index_installation"),
    _on("installation", ANY, "record_installation"),
    _on("installation_repositories", ANY, "record_installation"),
    _on(UPLOAD_EVENT, ANY, "upload"),
)

INSTALLATION_WORK: frozenset[Work] = frozenset({"index_installation", "record_installation"})


def route(event: str, action: str | None) -> Work | None:
    """The work a delivery of `event` with `action` asks for; None: none (it is ignored)."""
    return next((r.work for r in ROUTES if r.matches(event, action)), None)


def routed_events() -> frozenset[str]:
    """Every event some route takes (with some action)."""
    return frozenset(r.event for r in ROUTES)
