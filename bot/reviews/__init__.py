"""The review feature, pure (docs/architecture.md "Layers"): findings and how they are shaped into
comments and decisions, their fingerprints, the scope of a review and a pull request's life (review
once, review what changed, never post a finding twice), follow-ups (what a comment asks of the
app), the walkthrough, and the check-run report's text; and the interface of what the app
remembers per pull request (`memory`, kept by bot/store/reviews.py). Data in, data out: the model
calls are bot/engine's, the GitHub and store calls bot/pipeline's."""
