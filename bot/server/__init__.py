"""The GitHub App server: webhook intake, durable store, queue and workers, metrics (I/O; wires the rest)."""
