"""The registry of secret values every log line and safe message is scrubbed of.

It lives below the server and the engine so that both can use it: the server registers what it
was configured with at start, the engine each model provider key it resolves (keys rotate, so
they are registered as they are read), and the server's log formatter scrubs every line with it.
Besides the known values, anything shaped like a GitHub token, a bearer/token authorisation, a
PEM private key or a JWT is replaced, because a library's exception text can echo a header.
"""

from __future__ import annotations

import re

from bot.secrets.references import REDACTED

_SECRET_SHAPES = re.compile("|".join([
    r"\bgh[pousr]_[A-Za-z0-9_]{20,}",  # GitHub tokens (installation tokens are ghs_)
    r"\bgithub_pat_[A-Za-z0-9_]{20,}",
    r"(?i:\b(?:bearer|token)\s+[A-Za-z0-9._~+/=-]{8,})",
    r"-----BEGIN [A-Z ]*PRIVATE KEY-----(?s:.*?)(?:-----END [A-Z ]*PRIVATE KEY-----|$)",
    r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*",  # JWTs
]))


# Each shape contains one of these (compared lower-cased). Most lines contain none, and looking
# for them costs about a twentieth of running the shapes over the line, which every line pays.
_SHAPE_HINTS = ("gh", "github_pat_", "bearer", "token", "-----begin", "eyj")


class Redactor:
    """Replaces known secret values and secret-shaped strings with `<redacted>`."""

    def __init__(self) -> None:
        self._values: list[str] = []  # longest first, so a secret containing another goes whole

    def add(self, *values: str | None) -> None:
        """Registers values; cheap when they are known already (the engine adds a key per call).

        The list is replaced, never changed in place: a line being scrubbed on another thread
        keeps iterating the old list instead of one that is half sorted."""
        new = [v for v in dict.fromkeys(values) if v and len(v) >= 4 and v not in self._values]  # 1–3 characters would shred every line
        if new:
            self._values = sorted([*self._values, *new], key=len, reverse=True)

    def __call__(self, text: str) -> str:
        for value in self._values:
            if value in text:
                text = text.replace(value, REDACTED)
        lowered = text.lower()
        if any(hint in lowered for hint in _SHAPE_HINTS):
            text = _SECRET_SHAPES.sub(REDACTED, text)
        return text


redact = Redactor()  # the process's one registry


def register_secret(*values: str | None) -> None:
    """Call with every secret the process holds (tokens included) so no log line can carry it."""
    redact.add(*values)
