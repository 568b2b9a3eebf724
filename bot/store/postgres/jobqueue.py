"""The statements the job queue (bot/server/jobs/pg_queue.py, bot/server/jobs/pg_worker.py) runs on
procrastinate's tables besides what procrastinate runs itself: the queue's counts, the waiting keys,
the sweep of stalled jobs and the workers' heartbeat. They run through procrastinate's connector
(its own pool), with its `%(name)s` parameters; they live here so that the server's SQL is all in
the store.
"""

# Both counts in one pass over procrastinate's partial index of live (todo/doing) jobs
COUNT_JOBS = ("SELECT count(*) FILTER (WHERE status = 'todo') AS todo, count(*) FILTER (WHERE status = 'doing') "
              "AS doing FROM procrastinate_jobs WHERE task_name = %(task)s AND status IN ('todo', 'doing')")
# The keys of `keys` whose job waits (procrastinate's unique index of waiting queueing locks)
WAITING_KEYS = ("SELECT queueing_lock FROM procrastinate_jobs WHERE task_name = %(task)s AND status = 'todo' "
                "AND queueing_lock = ANY(%(keys)s)")
# One job, locked, if it is still running under a silent (or pruned) worker: what a sweep may retry
_STILL_STALLED = ("WITH stalled AS (SELECT j.id FROM procrastinate_jobs j LEFT JOIN procrastinate_workers w "
                  "ON w.id = j.worker_id WHERE j.id = %(job)s AND j.status = 'doing' AND (w.id IS NULL "
                  "OR w.last_heartbeat < now() - make_interval(secs => %(after)s)) FOR UPDATE OF j SKIP LOCKED) ")
RETRY_STALLED = _STILL_STALLED + "SELECT procrastinate_retry_job_v2(id, now(), NULL, NULL, NULL) FROM stalled"
FAIL_STALLED = _STILL_STALLED + "SELECT procrastinate_finish_job_v1(id, 'failed', false) FROM stalled"

# The beat: one statement, the worker's row touched. No row: it was pruned while beats failed.
BEAT = "UPDATE procrastinate_workers SET last_heartbeat = now() WHERE id = %(worker)s RETURNING id"
REVIVE = ("INSERT INTO procrastinate_workers (id, last_heartbeat) OVERRIDING SYSTEM VALUE "
          "VALUES (%(worker)s, now()) ON CONFLICT (id) DO UPDATE SET last_heartbeat = now()")
# Pruning a worker's row set its jobs' worker_id to NULL, which makes them stalled to every sweep
RECLAIM = ("UPDATE procrastinate_jobs SET worker_id = %(worker)s WHERE id = ANY(%(jobs)s) "
           "AND status = 'doing' AND worker_id IS NULL")
