"""A job's journal: what it decided to post, recorded before any of it is posted (I/O at the edge,
the shapes and their JSON pure).

A job runs again, as its next attempt of the same delivery, when something cut it off: a worker
killed or stopped past its grace period, PostgreSQL away (bot.server.jobs.queue.run_job waits for it
and starts the attempt again). Whatever the first attempt posted must then be taken up, not posted
a second time, and what it had not posted yet must be what it had decided. So posting goes:

1. decide: the plan, the model review, the check run's report; nothing written to GitHub but the
   check run started in progress;
2. record the decision here, under the delivery id (a store that is away stops the job before
   anything is posted; it runs again once the store is back);
3. post, each write carrying the delivery: the check run its external id, a review, an approval
   or an answer a hidden marker (`marker`). An attempt after the first looks on GitHub before each
   write and takes up what is already there (bot.pipeline.post);
4. complete the check run, last.

An attempt that finds a journal carries out the decision recorded there (no second model call, no
second opinion). One that finds its check run completed and a journal knows that an earlier attempt
did everything; a completed run and no journal is an earlier job of a redelivered delivery, which
keeps its run as it ended. The journal lives while the delivery's job is open: the store deletes
it with the job's end (DeliveryStore.finish), so a redelivery starts afresh.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Any

from bot.events.jobs import ReviewResult
from bot.reviews.checkrun import CheckRunReport
from bot.reviews.ledger import from_json as ledger_from_json
from bot.reviews.memory import ReviewMemory
from bot.reviews.output import Annotation, ApprovalAction, Attempt, InlineComment, LeftOut, ModelCost, ReviewOutput
from bot.reviews.shaping import Counts
from bot.reviews.verdict import Verification

REVIEW, ANSWER = "review", "answer"


class RecordedFailure(Exception):
    """The job failed in an earlier attempt, which completed the check run with that failure: the
    attempt that finds it ends the job as failed too, with the reason recorded then."""


@dataclass(frozen=True)
class Remembered:
    """What the review memory records the review under (bot.pipeline.life.remember)."""

    digest: str
    merge_base: str


@dataclass(frozen=True)
class Planned:
    """A review job's decision. `output` None: `report` is the check run's final report;
    else it is the plan's, to be joined with the review once the review is posted."""

    report: CheckRunReport
    output: ReviewOutput | None = None
    notes: tuple[str, ...] = ()  # check-run lines that come before the review's own notes
    remember: Remembered | None = None
    error: str | None = None  # the job failed with this reason; `report` is the failure's
    result: ReviewResult | None = None  # what the review came to when `output` is None
    uploads: tuple[str, ...] = ()  # the SARIF uploads the job applies: `complete` once posted


def marker(delivery_id: str, what: str) -> str:
    """The hidden HTML comment that names the delivery a write belongs to. A delivery id is
    GitHub's GUID; anything else in it is dropped, so that it can never close the comment."""
    return f"<!-- reviewer:{what} delivery={re.sub(r'[^A-Za-z0-9._-]', '', delivery_id)} -->"


def to_record(planned: Planned) -> dict[str, Any]:
    return {"kind": REVIEW, "report": dataclasses.asdict(planned.report),
            "output": None if planned.output is None else dataclasses.asdict(planned.output),
            "uploads": list(planned.uploads),
            "notes": list(planned.notes),
            "remember": None if planned.remember is None else dataclasses.asdict(planned.remember),
            "error": planned.error,
            "result": None if planned.result is None else dataclasses.asdict(planned.result)}


def from_record(record: dict[str, Any]) -> Planned | None:
    """The decision of a review job's journal; None for another kind of journal."""
    if record.get("kind") != REVIEW:
        return None
    if record.get("outcome") is not None and "output" not in record:
        return None  # a review a release before the ledger wrote: decided again, its posts found by their markers
    output = record.get("output")  # (a release before the ledger wrote "outcome": None when there was none)
    remember = record.get("remember")
    result = record.get("result")
    return Planned(CheckRunReport(**record["report"]), None if output is None else _output(output),
                   tuple(record.get("notes") or ()), None if remember is None else Remembered(**remember),
                   record.get("error"), None if result is None else ReviewResult(**result),
                   tuple(record.get("uploads") or ()))


def _output(data: dict[str, Any]) -> ReviewOutput:
    cost, verification = data.get("cost"), data.get("verification")
    return ReviewOutput(**{
        **data,
        "attempts": tuple(Attempt(**a) for a in data["attempts"]),
        "inline": tuple(InlineComment(**c) for c in data["inline"]),
        "counts": Counts(**data["counts"]),
        "annotations": tuple(Annotation(**a) for a in data["annotations"]),
        "decisions": tuple(ApprovalAction(**d) for d in data["decisions"]),
        "notes": tuple(data["notes"]),
        "gaps": tuple(data.get("gaps", ())),
        "ledger": ledger_from_json(data["ledger"]),
        "cost": None if cost is None else ModelCost(**{**cost, "unpriced": tuple(cost["unpriced"])}),
        "left_out": tuple(LeftOut(**item) for item in data["left_out"]),
        "resolve": tuple(data["resolve"]),
        "verification": None if verification is None else Verification.from_dict(verification),
    })


async def recorded(memory: ReviewMemory | None, delivery_id: str, attempt: int) -> dict[str, Any] | None:
    """The delivery's journal, asked only of an attempt after the first (a first attempt has
    none: nothing of its delivery ran before it, or what ran finished and its journal went)."""
    if memory is None or not delivery_id or attempt <= 1:
        return None
    return await memory.journal(delivery_id)


async def record(memory: ReviewMemory | None, delivery_id: str, body: dict[str, Any]) -> None:
    if memory is not None and delivery_id:
        await memory.write_journal(delivery_id, body)
