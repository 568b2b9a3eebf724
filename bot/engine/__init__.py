"""The review engine: what talks to model providers. Plan → model request (with lookups in the
index) → the answer, which bot/reviews shapes into findings, comments and decisions; the comment
templates, rendered in an isolated child; a follow-up's answer; token usage and API keys.

Kept free of imports: the template worker runs as `python -m bot.engine.template_worker` and must
start without loading aiohttp. Import `bot.engine.engine.run_review` for the whole review.
"""
