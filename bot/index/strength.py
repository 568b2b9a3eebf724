"""How sure a resolution is that a use means a definition: the answers of bot/index/resolve.py and
of its per-language parts, kept apart so that those parts need not import the whole."""

from __future__ import annotations

NO, MAYBE, YES = 0, 1, 2  # the file says it is something else; nothing says; the file says so
