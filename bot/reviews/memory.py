"""What the app remembers about each pull request between events, processes and restarts: the
narrow async interface the pipeline uses (`ReviewMemory`). The store layer keeps it, with its SQL
(bot/store/reviews.py: `SQLiteReviewMemory` in the server's SQLite file, `PostgresReviewMemory` in
PostgreSQL for a scaled-out server); its rows (`ReviewedHead`, `PostedFinding`) are
bot/store/model.py's.

Pull requests are named `owner/repo#number`, the queue's serialisation key, so that the jobs of one
pull request — which run one at a time — are the only writers of its rows.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol

from bot.store.model import PostedFinding, ReviewedHead


class ReviewMemory(Protocol):
    async def last_review(self, pull: str) -> ReviewedHead | None: ...

    async def record_review(self, pull: str, reviewed: ReviewedHead) -> None: ...

    async def posted(self, pull: str) -> list[PostedFinding]: ...

    async def add_posted(self, pull: str, findings: Iterable[PostedFinding]) -> None: ...

    async def paused_by(self, pull: str) -> str | None: ...

    async def set_paused(self, pull: str, by: str | None) -> None: ...

    async def claim_comment(self, pull: str, comment_key: str, claimed_by: str = "") -> bool:
        """True the first time a comment (`issue_comment:123`, …) is claimed, and again for the same
        claimer (`claimed_by`, the delivery id): a job that crashed or failed after its claim answers
        when it runs again, while any other delivery of the comment is answered never."""
        ...

    async def answers_since(self, thread: str, since: float) -> dict[str, int]:
        """Answers and notices given in `thread` since `since` (epoch seconds), by kind."""
        ...

    async def record_answer(self, thread: str, kind: str) -> None: ...

    async def journal(self, delivery_id: str) -> dict[str, Any] | None:
        """The journal a job of this delivery wrote (bot.pipeline.journal), None when none did
        since the delivery's job last finished (DeliveryStore.finish deletes it)."""
        ...

    async def write_journal(self, delivery_id: str, body: dict[str, Any]) -> None:
        """Record (or replace) the delivery's journal, committed before this returns."""
        ...
