"""The `Reviewer` check run: started in progress on the head commit, completed with annotations.

`completion_requests` (pure) turns a conclusion and an output into the PATCH bodies GitHub accepts:
at most 50 annotations per request (further requests append), summary and text cut to 65,535
characters with a note, annotation fields within GitHub's limits. The batches go first and the
conclusion last, so the run is never shown completed with part of its annotations.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from bot import telemetry

from .client import GitHubClient
from .errors import GitHubUnavailable
from .limits import ANNOTATION_TEXT_CHARS, ANNOTATION_TITLE_CHARS, ANNOTATIONS_PER_REQUEST, CHECK_OUTPUT_CHARS, fit

CHECK_NAME = "Reviewer"
CONCLUSIONS = ("success", "failure", "neutral", "cancelled", "skipped", "timed_out", "action_required")
LEVELS = ("notice", "warning", "failure")


@dataclass(frozen=True)
class Annotation:
    path: str
    start_line: int
    end_line: int
    level: str  # notice | warning | failure
    message: str
    title: str | None = None
    start_column: int | None = None
    end_column: int | None = None
    raw_details: str | None = None

    def to_github(self) -> dict:
        if self.level not in LEVELS:
            raise ValueError(f"annotation level {self.level!r} is not one of {LEVELS}")
        start = max(1, self.start_line)
        out: dict = {"path": self.path, "start_line": start, "end_line": max(start, self.end_line),
                     "annotation_level": self.level, "message": fit(self.message, ANNOTATION_TEXT_CHARS, what="message")}
        if self.title:
            out["title"] = fit(self.title, ANNOTATION_TITLE_CHARS, what="title")
        if self.raw_details:
            out["raw_details"] = fit(self.raw_details, ANNOTATION_TEXT_CHARS, what="details")
        if out["start_line"] == out["end_line"] and self.start_column is not None:  # GitHub: columns on one line only
            out["start_column"] = max(1, self.start_column)
            out["end_column"] = max(out["start_column"], self.end_column or self.start_column)
        return out


@dataclass(frozen=True)
class CheckOutput:
    title: str
    summary: str
    text: str | None = None
    annotations: tuple[Annotation, ...] = ()


def _output(output: CheckOutput, batch: list[dict]) -> dict:
    out: dict[str, Any] = {"title": output.title,
                           "summary": fit(output.summary, CHECK_OUTPUT_CHARS, what="summary")}
    if output.text is not None:
        out["text"] = fit(output.text, CHECK_OUTPUT_CHARS, what="text")
    if batch:
        out["annotations"] = batch
    return out


def completion_requests(conclusion: str, output: CheckOutput) -> list[dict]:
    """The PATCH bodies that complete a check run with `output`, the conclusion in the last one."""
    if conclusion not in CONCLUSIONS:
        raise ValueError(f"conclusion {conclusion!r} is not one of {CONCLUSIONS}")
    annotations = [a.to_github() for a in output.annotations]
    step = ANNOTATIONS_PER_REQUEST
    batches = [annotations[i:i + step] for i in range(0, len(annotations), step)] or [[]]
    bodies: list[dict[str, Any]] = [{"output": _output(output, batch)} for batch in batches]
    bodies[-1].update(status="completed", conclusion=conclusion)
    return bodies


async def start_check_run(gh: GitHubClient, owner: str, repo: str, head_sha: str, *,
                          title: str = "Reviewing", summary: str = "The review is in progress.",
                          external_id: str | None = None, details_url: str | None = None) -> int:
    """Create the `Reviewer` check run, in progress, on `head_sha`; returns its id.

    Never two runs for one call: a create that GitHub answered with a 5xx, or not at all, may still
    have been carried out, and a second one would stay in progress for ever beside the first. So
    it is not sent again blindly: the run is looked for by its `external_id` (the caller's, else
    one made here), and created again only when it is not there.
    """
    body: dict = {"name": CHECK_NAME, "head_sha": head_sha, "status": "in_progress",
                  "external_id": external_id or uuid.uuid4().hex,
                  "output": {"title": title, "summary": fit(summary, CHECK_OUTPUT_CHARS, what="summary")}}
    if details_url is not None:
        body["details_url"] = details_url
    where = {"owner": owner, "repo": repo}
    try:
        data = await gh.post("/repos/{owner}/{repo}/check-runs", where, data=body, resend_unanswered=False)
    except GitHubUnavailable as exc:
        if 0 < exc.status < 500:  # a rate limit that lasted too long: nothing was created
            raise
        for run in await list_check_runs(gh, owner, repo, head_sha):
            if run.get("external_id") == body["external_id"]:
                return int(run["id"])
        data = await gh.post("/repos/{owner}/{repo}/check-runs", where, data=body)
    return int(data["id"])


async def list_check_runs(gh: GitHubClient, owner: str, repo: str, ref: str) -> list[dict]:
    """The `Reviewer` runs on `ref`, every one (`filter=all`: GitHub's default, `latest`, hides an
    older run behind a newer one of the same name, such as another delivery's on the same commit);
    one page: a commit has a few of ours at most."""
    answer = await gh.get("/repos/{owner}/{repo}/commits/{ref}/check-runs", {"owner": owner, "repo": repo, "ref": ref},
                          params={"check_name": CHECK_NAME, "filter": "all"})
    return list(answer.get("check_runs") or [])


async def complete_check_run(gh: GitHubClient, owner: str, repo: str, check_run_id: int, conclusion: str,
                             output: CheckOutput) -> None:
    """Send the annotations (50 per request) and the conclusion, in order."""
    for body in completion_requests(conclusion, output):
        await gh.patch("/repos/{owner}/{repo}/check-runs/{check_run_id}",
                       {"owner": owner, "repo": repo, "check_run_id": check_run_id}, data=body)
    telemetry.check_run(conclusion)  # counted by the job's metrics (bot.server.metrics)
