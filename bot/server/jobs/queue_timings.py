"""How the job queue on PostgreSQL paces itself (bot/server/jobs/pg_queue.py, bot/server/jobs/pg_worker.py):
settings, so that an operator can tune them and the process tests can run them scaled down.

- `REVIEWER_QUEUE_HEARTBEAT_SECONDS` (default 5): between a worker's heartbeats;
- `REVIEWER_QUEUE_STALLED_SECONDS` (default 20): a worker silent this long is dead and its jobs are
  retried; at least three heartbeats, so that one late beat never makes a living worker dead;
- `REVIEWER_QUEUE_SWEEP_SECONDS` (default 10): between two sweeps for stalled jobs (and for keys
  left with queued deliveries and no job);
- `REVIEWER_QUEUE_GRACE_SECONDS` (default 45, at most 45): how long SIGTERM lets running jobs
  finish before handing them back; the process exits within STOP_WITHIN (bot/server/process.py),
  which the deployment manifests' grace periods are sized for, so the grace may only be shorter.

A job of a killed worker runs again within STALLED + SWEEP seconds (30 s with the defaults:
docs/operations.md, "A worker is killed").
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

HEARTBEAT_KEY = "REVIEWER_QUEUE_HEARTBEAT_SECONDS"
STALLED_KEY = "REVIEWER_QUEUE_STALLED_SECONDS"
SWEEP_KEY = "REVIEWER_QUEUE_SWEEP_SECONDS"
GRACE_KEY = "REVIEWER_QUEUE_GRACE_SECONDS"
KEYS = (HEARTBEAT_KEY, STALLED_KEY, SWEEP_KEY, GRACE_KEY)
MOST_GRACE = 45.0  # STOP_WITHIN (55 s) less the time a stop takes besides the jobs
BEATS_BEFORE_STALLED = 3  # a worker is dead only after missing this many heartbeats in a row


@dataclass(frozen=True)
class QueueTimings:
    """Seconds; the defaults are production's."""

    heartbeat: float = 5.0  # between a worker's heartbeats
    stalled_after: float = 20.0  # a worker silent this long is dead: its jobs are retried
    sweep_every: float = 10.0  # between two stalled-job sweeps
    grace: float = 45.0  # SIGTERM waits this long for running jobs

    @property
    def retry_beat(self) -> float:
        """Seconds before a failed heartbeat is tried again: a second, or the heartbeat if shorter."""
        return min(1.0, self.heartbeat)


PRODUCTION = QueueTimings()


def queue_timings(values: Mapping[str, str], problems: list[str]) -> QueueTimings:
    """The REVIEWER_QUEUE_* settings, checked; each problem names its key and the rule."""
    default = QueueTimings()
    heartbeat = _seconds(values, HEARTBEAT_KEY, default.heartbeat, 0.1, 600, problems)
    stalled = _seconds(values, STALLED_KEY, default.stalled_after, 0.5, 3600, problems)
    sweep = _seconds(values, SWEEP_KEY, default.sweep_every, 0.1, 3600, problems)
    grace = _seconds(values, GRACE_KEY, default.grace, 0, MOST_GRACE, problems)
    if stalled < BEATS_BEFORE_STALLED * heartbeat:
        problems.append(f"{STALLED_KEY}: {stalled:g} is less than {BEATS_BEFORE_STALLED} heartbeats "
                        f"({HEARTBEAT_KEY} {heartbeat:g}): a living worker would be taken for a dead one")
    return QueueTimings(heartbeat=heartbeat, stalled_after=stalled, sweep_every=sweep, grace=grace)


def _seconds(values: Mapping[str, str], key: str, default: float, least: float, most: float,
             problems: list[str]) -> float:
    text = values.get(key)
    if text is None:
        return default
    try:
        seconds = float(text)
        if not least <= seconds <= most:
            raise ValueError
    except ValueError:
        problems.append(f"{key}: {text!r} is not a number of seconds from {least:g} to {most:g}")
        return default
    return seconds
