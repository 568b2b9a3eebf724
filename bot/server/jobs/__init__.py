"""The job machinery: deliveries classified into jobs (`dispatch`), queued and run on one process
(`queue`, SQLite) or on any worker (`pg_queue` and `pg_worker`'s heartbeat, PostgreSQL, paced by
`queue_timings`), each attempt recorded for the console (`timeline`) and finished deliveries pruned
(`retention`). What a job does is bot/pipeline/; the HTTP side is the rest of bot/server/."""
