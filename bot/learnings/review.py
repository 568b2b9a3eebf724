"""The learnings a review applies (pure): what the engine gets, and the one call that leaves
findings out — of the model or of an analyzer alike (docs/reviews.md "Learnings").

`ForReview` carries the learnings of the repository under review (read from the store by the
pipeline). `guidance` is the prompt's section of `guide` learnings for the changed paths, within
its own budget, newest first; `leave_out` filters any list of items that carry a finding (a
finding, or a placed finding, or an analyzer's result) and says in one note how many learnings left
out: "2 findings left out by learnings (see /console/learnings)".
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TypeVar, cast

from bot.learnings.apply import FindingLike, Guidance, Suppressed, guidance, suppress
from bot.learnings.model import Learning

T = TypeVar("T")


@dataclass(frozen=True)
class _Carried:
    """An item seen as its finding, so that `suppress` (which reads findings) keeps the item."""

    item: object
    finding: FindingLike

    @property
    def path(self) -> str:
        return self.finding.path

    @property
    def message(self) -> str:
        return self.finding.message

    @property
    def category(self) -> str:
        return self.finding.category

    @property
    def rules(self) -> Sequence[str]:
        return self.finding.rules


@dataclass(frozen=True)
class ForReview:
    account: str
    repository: str  # the name within the account
    learnings: tuple[Learning, ...] = ()

    def guidance(self, changed_paths: Iterable[str]) -> Guidance:
        return guidance(self.learnings, account=self.account, repository=self.repository,
                        changed_paths=changed_paths)

    def leave_out(self, items: Sequence[T], finding_of: Callable[[T], FindingLike],
                  fingerprint_of: Callable[[T], str | None] | None = None) -> tuple[list[T], Suppressed]:
        """The items kept (in order), and what was left out with the learning that did it."""
        carried = [_Carried(item, finding_of(item)) for item in items]

        def by_fingerprint(c: _Carried) -> str | None:
            return fingerprint_of(c.item) if fingerprint_of is not None else None  # type: ignore[arg-type]
        result = suppress(carried, self.learnings, account=self.account, repository=self.repository,
                          fingerprint_of=by_fingerprint if fingerprint_of is not None else None)
        return [cast(T, c.item) for c in result.kept], result


def leave_out_findings(findings: Sequence[T], learnings: Iterable[Learning], *, account: str, repository: str,
                       finding_of: Callable[[T], FindingLike] = lambda item: item,  # type: ignore[assignment,return-value]
                       fingerprint_of: Callable[[T], str | None] | None = None) -> tuple[list[T], str | None]:
    """For callers outside a model review (the analyzers' findings, by rule id): the findings kept
    and the check run's note (None when nothing was left out)."""
    kept, result = ForReview(account, repository, tuple(learnings)).leave_out(findings, finding_of, fingerprint_of)
    return kept, result.note
