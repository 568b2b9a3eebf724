"""The pipeline's half of the routing table (bot/pipeline/router.py): every kind of work the events
route to has its step, and a job runs the step its event and action route to."""

from __future__ import annotations

import asyncio
from typing import get_args

from bot.events.jobs import Job
from bot.events.routes import ROUTES, Work
from bot.pipeline import router


def _job(event: str, action: str | None, **fields) -> Job:
    values = {"delivery_id": "d", "event": event, "action": action, "payload": {}, "installation_id": 1,
              "repo": "o/r", "pr_number": 1, "head_sha": None} | fields
    return Job(**values)


def test_every_kind_of_work_is_bound():
    assert set(router.STEPS) == set(get_args(Work))


def test_only_the_installation_record_runs_no_step():
    assert {work for work, step in router.STEPS.items() if step is None} == {"record_installation"}
    queued = {r.work for r in ROUTES} - {"record_installation"}
    assert all(router.STEPS[work] is not None for work in queued)


def test_a_review_job_without_a_pull_request_needs_no_services():
    def ready():
        raise AssertionError("services made for a job that needs none")

    fork_suite = _job("check_suite", "requested", pr_number=None, head_sha="abc")
    assert asyncio.run(router.run(ready, fork_suite)) is None
    assert asyncio.run(router.run(ready, _job("pull_request", "assigned"))) is None


def test_a_job_runs_the_step_of_its_route(monkeypatch):
    ran: list[tuple[str, str]] = []

    async def step(ready, job):
        ran.append((job.event, str(job.action)))

    for work in ("outcome", "followup", "upload", "review"):
        monkeypatch.setitem(router.STEPS, work, step)
    for event, action in (("pull_request", "closed"), ("issue_comment", "created"),
                          ("reviewer_sarif_upload", "uploaded"), ("check_run", "rerequested")):
        asyncio.run(router.run(lambda: None, _job(event, action)))
    assert ran == [("pull_request", "closed"), ("issue_comment", "created"),
                   ("reviewer_sarif_upload", "uploaded"), ("check_run", "rerequested")]
