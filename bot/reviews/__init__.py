"""Reviews over a pull request's life (docs/reviews.md): what the app remembers per pull request, and
the pure decisions built on it — review once, review what changed, never post a finding twice."""
