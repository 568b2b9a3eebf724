"""What a GitHub delivery means (`jobs`): parsing and classification into jobs, pure, below the
store and the queue that both carry jobs."""
