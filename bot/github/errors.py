"""The errors of the GitHub edge: what the rest of the app catches when a GitHub call fails.

Nothing in these messages carries a token: they name the method, the route template and what
GitHub answered.
"""

from __future__ import annotations


class GitHubError(Exception):
    """GitHub refused a call (4xx), or could not be reached: `status` is 0 when there was no answer."""

    def __init__(self, method: str, route: str, status: int, message: str) -> None:
        super().__init__(f"{method} {route}: {status or 'no answer'}: {message}")
        self.method = method
        self.route = route
        self.status = status
        self.message = message

    def describe(self) -> str:
        """For people (a check run, an API answer): what GitHub did with which call."""
        answered = f"answered {self.status}" if self.status else "did not answer"
        return f"GitHub {answered} to {self.method} {self.route}: {self.message}"


class GitHubUnavailable(GitHubError):
    """Retries did not help within their bound: 5xx answers, timeouts, or a rate limit lasting too long.

    `retry_at` (epoch seconds), when known, says when GitHub will take calls again, so that a job
    can be rescheduled rather than fail outright.
    """

    def __init__(self, method: str, route: str, status: int, message: str, *, retry_at: float | None = None) -> None:
        super().__init__(method, route, status, message)
        self.retry_at = retry_at
