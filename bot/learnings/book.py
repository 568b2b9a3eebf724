"""The learnings and the followed findings as this package's shapes, over the store's rows.

bot/store/learnings.py keeps rows (JSON bodies and the columns SQL filters and counts on) and
imports nothing above the store; this is where those rows become `Learning`, `Followed` and
`Record` again, so that every caller (the API, the console, the pipeline) reads shapes, not rows.
"""

from __future__ import annotations

from collections.abc import Iterable

from bot.learnings.followed import Followed, from_body
from bot.learnings.model import Learning, from_json
from bot.learnings.tally import Record
from bot.store.learnings import FollowedRow, LearningRow, LearningStore


class LearningBook:
    """What a team taught the reviewer and what became of each posted finding."""

    def __init__(self, store: LearningStore) -> None:
        self.store = store

    async def add(self, learning: Learning) -> None:
        await self.store.add(_learning_row(learning))

    async def get(self, learning_id: str) -> Learning | None:
        body = await self.store.get(learning_id)
        return None if body is None else from_json(body)

    async def replace(self, learning: Learning) -> bool:
        """Store a changed learning (same id); False when it is gone."""
        return await self.store.replace(_learning_row(learning))

    async def delete(self, learning_id: str) -> Learning | None:
        """Delete a learning; the one deleted, or None when there was none."""
        body = await self.store.delete(learning_id)
        return None if body is None else from_json(body)

    async def learnings(self, *, account: str | None = None, repository: str | None = None,
                        kind: str | None = None) -> list[Learning]:
        """Newest first. `repository` (with `account`): the learnings that apply to it, those of the
        whole account included."""
        return [from_json(body) for body in
                await self.store.learnings(account=account, repository=repository, kind=kind)]

    async def follow(self, findings: Iterable[Followed]) -> None:
        """Start following posted findings (one already followed is left as it is)."""
        await self.store.follow([_followed_row(f) for f in findings])

    async def update(self, findings: Iterable[Followed]) -> None:
        """Store what happened to followed findings (their lines, marks, state, comment id)."""
        await self.store.update([_followed_row(f) for f in findings])

    async def followed(self, pull: str) -> list[Followed]:
        """The pull request's posted findings, oldest first."""
        return [_followed(row) for row in await self.store.followed(pull)]

    async def by_comment(self, pull: str, comment_id: int) -> Followed | None:
        """The finding posted as this inline comment of the pull request, if any."""
        row = await self.store.by_comment(pull, comment_id)
        return None if row is None else _followed(row)

    async def records(self, *, account: str | None = None, repository: str | None = None,
                      since: float | None = None) -> list[Record]:
        """What became of posted findings, for the console's chart and tables."""
        out = []
        for row in await self.store.outcomes(account=account, repository=repository, since=since):
            followed = _followed(row)
            t = followed.tracked
            out.append(Record(followed.account, followed.repository, t.posted_at, followed.state, t.rules,
                              t.category, followed.decided_at))
        return out

    async def count_states(self) -> dict[str, int]:
        """Posted findings by state, over every repository (what /metrics counts)."""
        return await self.store.count_states()


def _learning_row(learning: Learning) -> LearningRow:
    return LearningRow(learning.id, learning.scope.account, learning.scope.repository or "", learning.kind,
                       learning.created.timestamp(), learning.to_json())


def _followed_row(f: Followed) -> FollowedRow:
    decided = f.decided_at
    return FollowedRow(f.pull, f.tracked.fingerprint, f.account, f.repository, f.comment_id, f.state,
                       f.tracked.posted_at.timestamp(), decided.timestamp() if decided else None, f.body())


def _followed(row: FollowedRow) -> Followed:
    return from_body(row.pull, row.account, row.repository, row.comment_id, row.body)
