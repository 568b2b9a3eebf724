"""The review engine: plan → model request → findings → comments, check-run parts and decisions.

Kept free of imports: the template worker runs as `python -m bot.engine.template_worker` and must
start without loading aiohttp. Import `bot.engine.engine.run_review` for the whole review.
"""
