"""What the admin console asks of the delivery store, as SQL that both backends run (pure).

The statements are the same on SQLite and PostgreSQL but for the parameter mark (`?` or `%s`),
so they are written once here and each backend passes its mark. No body is ever read: the
console's lists show a delivery's summary, and its page reads the one record it shows.
"""

from __future__ import annotations

from typing import Any

# A delivery's summary, as the console's lists show it (every column but headers and body).
SUMMARY = ("seq, delivery_id, event, action, state, repo, pr_number, head_sha, installation_id, attempts, "
           "received_count, error, received_at, queued_at, started_at, finished_at")

# Redelivery from the console: what GitHub's redelivery of a failed delivery resets (bot.store's
# upserts on intake), on the stored body and headers; a row in any other state is left alone.
_REDELIVER = ("UPDATE deliveries SET state = 'received', received_count = received_count + 1, action = NULL, "
              "installation_id = NULL, repo = NULL, pr_number = NULL, head_sha = NULL, job_key = NULL, "
              "error = NULL, queued_at = NULL, started_at = NULL, finished_at = NULL "
              "WHERE delivery_id = {mark} AND state = 'failed'")
_OUTCOMES = "SELECT state, count(*) FROM deliveries WHERE received_at >= {mark} GROUP BY state"


def recent_query(mark: str, *, before_seq: int | None, limit: int, repo: str | None, event: str | None,
                 state: str | None, since: float | None) -> tuple[str, list[Any]]:
    """(SQL, parameters) for one page of deliveries, newest first: `before_seq` is the cursor; an
    empty or None filter is no filter; repository, event and state match exactly."""
    where: list[str] = ["1 = 1"]
    args: list[Any] = []
    for column, value in (("repo", repo), ("event", event), ("state", state)):
        if value:
            where.append(f"{column} = {mark}")
            args.append(value)
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


def outcomes_statement(mark: str) -> str:
    return _OUTCOMES.format(mark=mark)
