"""What the server's long-running loops share (the queue's dispatch and sweep, heartbeats,
retention, the admin file's and the connectors' watches)."""
