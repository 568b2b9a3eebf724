"""A refused sign-in: which check failed and what to do, safe to show and to record.

`check` is a stable kebab-case name (the sign-in log and the docs use it); `message` never carries
a token, a code, a secret or a claim's value — only names. A refusal after the provider answered
may carry the username and the names of the claims received, for the page and the log.
"""

from __future__ import annotations


class SignInError(Exception):
    def __init__(self, check: str, message: str, *, status: int = 403, username: str | None = None,
                 claim_names: list[str] | None = None, hint: str = "") -> None:
        super().__init__(message)
        self.check = check
        self.message = message
        self.status = status
        self.username = username
        self.claim_names = claim_names
        self.hint = hint


class UnknownConnector(SignInError):
    """A sign-in that names no connector there is (none, a name that cannot be one, or no such
    connector): anyone can send as many as they like (bot/auth/signin_log.py)."""
