"""Markdown helpers shared by the request (repository content shown to the model) and the posted
comments (suggestions, fixes in the summary): content must never close its own fence."""

from __future__ import annotations


def fence(text: str, info: str = "") -> str:
    """A fenced block no content can close early: the fence outgrows any backtick run inside."""
    longest = run = 0
    for char in text:
        run = run + 1 if char == "`" else 0
        longest = max(longest, run)
    ticks = "`" * max(3, longest + 1)
    body = text if text.endswith("\n") else text + "\n"
    return f"{ticks}{info}\n{body}{ticks}"


def suggestion(fix: str) -> str:
    """A GitHub suggestion block: the replacement for the commented lines, applied in one click."""
    return fence(fix, "suggestion")
