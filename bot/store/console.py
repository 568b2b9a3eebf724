"""What the admin console asks of the delivery store, as SQL that both backends run (pure).

The statements are the same on SQLite and PostgreSQL but for the parameter mark (`?` or `%s`),
so they are written once here and each backend passes its mark. No body is ever read: the
console's lists show a delivery's summary, and its page reads the one record it shows.

A delivery is shown as the job's state, except that a `done` job whose review failed (an invalid
configuration, no model answering) is shown, counted, filtered and redelivered as `failed`: its
job ran to its end, but the pull request got no review. `shown_state` and `redeliverable` say the
same for one row in Python.
"""

from __future__ import annotations

from typing import Any

# A delivery's summary, as the console's lists show it (every column but headers and body).
SUMMARY = ("seq, delivery_id, event, action, state, repo, pr_number, head_sha, installation_id, attempts, "
           "received_count, error, received_at, queued_at, started_at, finished_at, review_outcome, review_reason")


def failed_condition(table: str = "") -> str:
    """SQL true for a row shown as failed: its job failed, or its job is done and its review failed.
    `table` qualifies the columns (`deliveries.`), as an upsert's conflict clause needs."""
    return f"({table}state = 'failed' OR ({table}state = 'done' AND {table}review_outcome = 'failed'))"


# The columns a redelivery resets, whoever redelivers (GitHub through the intake, or the console).
RESET = ("state = 'received', action = NULL, installation_id = NULL, repo = NULL, pr_number = NULL, "
         "head_sha = NULL, job_key = NULL, error = NULL, queued_at = NULL, started_at = NULL, finished_at = NULL, "
         "review_outcome = NULL, review_reason = NULL")

# Redelivery from the console: what GitHub's redelivery of a failed delivery resets (bot.store's
# upserts on intake), on the stored body and headers; a row shown otherwise is left alone.
_REDELIVER = ("UPDATE deliveries SET received_count = received_count + 1, " + RESET
              + " WHERE delivery_id = {mark} AND " + failed_condition())
_SHOWN = "CASE WHEN state = 'done' AND review_outcome = 'failed' THEN 'failed' ELSE state END"
_SHOWN_STATES = f"SELECT {_SHOWN} AS shown, count(*) FROM deliveries WHERE received_at >= {{mark}} GROUP BY shown"


def owner_of(row: dict[str, Any]) -> str | None:
    """The account a delivery belongs to (its repository's owner), or None (an installation event)."""
    repo = row.get("repo") or ""
    return repo.split("/", 1)[0] if "/" in repo else None


def shown_state(row: dict[str, Any]) -> str:
    """The state the console shows for a row (`failed` for a done job whose review failed)."""
    if row.get("state") == "done" and row.get("review_outcome") == "failed":
        return "failed"
    return str(row.get("state"))


def redeliverable(row: dict[str, Any]) -> bool:
    """Whether a redelivery runs the row again: it is shown as failed."""
    return shown_state(row) == "failed"


def _state_filter(mark: str) -> str:
    return f"{_SHOWN} = {mark}"


def recent_query(mark: str, *, before_seq: int | None, limit: int, repo: str | None, event: str | None,
                 state: str | None, since: float | None, pr_number: int | None = None) -> tuple[str, list[Any]]:
    """(SQL, parameters) for one page of deliveries, newest first: `before_seq` is the cursor; an
    empty or None filter is no filter; repository, event and pull request number match exactly, and the state as shown
    (`failed` takes in done jobs whose review failed, `done` leaves them out)."""
    where: list[str] = ["1 = 1"]
    args: list[Any] = []
    for column, value in (("repo", repo), ("event", event), ("pr_number", pr_number)):
        if value:
            where.append(f"{column} = {mark}")
            args.append(value)
    if state:
        where.append(_state_filter(mark))
        args.append(state)
    if before_seq is not None:
        where.append(f"seq < {mark}")
        args.append(before_seq)
    if since is not None:
        where.append(f"received_at >= {mark}")
        args.append(since)
    args.append(limit)
    return f"SELECT {SUMMARY} FROM deliveries WHERE {' AND '.join(where)} ORDER BY seq DESC LIMIT {mark}", args


def redeliver_statement(mark: str) -> str:
    return _REDELIVER.format(mark=mark)


def shown_states_statement(mark: str) -> str:
    return _SHOWN_STATES.format(mark=mark)


# The last review of each repository: the newest row whose job recorded a review's outcome.
LAST_REVIEWS = (f"SELECT {SUMMARY} FROM deliveries WHERE seq IN (SELECT max(seq) FROM deliveries "
                "WHERE review_outcome IS NOT NULL AND repo IS NOT NULL GROUP BY repo)")
