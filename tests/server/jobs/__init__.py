"""Tests of bot/server/jobs/: dispatch, both queues, the heartbeat and the stalled-job sweep."""
