"""Which pull request a job is about, read from the payload alone (pure).

A `pull_request` payload carries the whole pull request, so nothing needs fetching; check-run
and check-suite payloads carry only its number and shas, so the pipeline fetches it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from bot.events.jobs import Job


@dataclass(frozen=True)
class Target:
    owner: str
    repo: str
    number: int
    head_sha: str
    event: str  # the `pr.event` of docs/reviews.md
    pull: dict[str, Any] | None  # the full pull request object when the payload has it
    only_if_new: bool = False  # check_suite.requested: skip when this head already has our check run
    attempt: int = 1  # 2+: a restart or a redelivery; a run it left in progress is taken up again
    delivery_id: str = ""  # sent as the check run's external_id: which delivery made the run
    force: Literal["", "review", "full"] = ""  # a command asked for a review of this head again

    @property
    def full_name(self) -> str:
        return f"{self.owner}/{self.repo}"

    @property
    def pull_key(self) -> str:
        """The name of the pull request in the review memory (and the queue's key)."""
        return f"{self.owner}/{self.repo}#{self.number}"


def target_for(job: Job) -> Target | None:
    """None when the job names no pull request (a fork's check suite, whose payload lists none)."""
    if job.repo is None or job.pr_number is None or job.head_sha is None:
        return None
    owner, _, repo = job.repo.partition("/")
    if job.event == "pull_request":
        return Target(owner, repo, job.pr_number, job.head_sha, job.action or "manual", job.payload["pull_request"],
                      attempt=job.attempt, delivery_id=job.delivery_id)
    event = "rerequested" if job.action == "rerequested" else "synchronize"
    return Target(owner, repo, job.pr_number, job.head_sha, event, None,
                  only_if_new=(job.event == "check_suite" and job.action == "requested"), attempt=job.attempt,
                  delivery_id=job.delivery_id)
