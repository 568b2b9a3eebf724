"""What every route handler of the double shares: its context, GitHub's error shape, pagination.

A handler is `async def handler(ctx: Context) -> Reply`, registered for an operationId with
`@handles(...)`. It raises `ApiError` for the answers GitHub gives when a request is refused.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from .model import App, Installation, PullRequest, Repo

if TYPE_CHECKING:
    from .server import GitHubDouble

DOCS = "https://docs.github.com/rest"
MAX_PER_PAGE = 100
BODY_LIMIT = 65_536  # comment and review bodies, as GitHub counts them


class ApiError(Exception):
    """An answer GitHub gives to a refused request: `{"message", "errors"?, "documentation_url", "status"}`."""

    def __init__(self, status: int, message: str, errors: list | None = None, headers: dict | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.errors = errors
        self.headers = headers or {}

    def body(self) -> dict:
        out: dict[str, Any] = {"message": self.message}
        if self.errors is not None:
            out["errors"] = self.errors
        out.update(documentation_url=DOCS, status=str(self.status))
        return out


def not_found() -> ApiError:
    return ApiError(404, "Not Found")


def unprocessable(*errors: str | dict) -> ApiError:
    return ApiError(422, "Unprocessable Entity", list(errors))


def validation_failed(resource: str, field_name: str, message: str, code: str = "custom") -> ApiError:
    return ApiError(422, "Validation Failed", [{"resource": resource, "code": code, "field": field_name, "message": message}])


@dataclass
class Reply:
    data: Any
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Context:
    double: GitHubDouble
    params: dict[str, Any]  # path and query parameters, typed by the operation's schema
    body: Any
    path: str
    query: dict[str, str]  # as sent, for the Link header
    app: App | None  # the app behind the JWT or the installation token
    installation: Installation | None
    repo: Repo | None

    @property
    def render(self):
        return self.double.render

    def pull(self) -> PullRequest:
        pr = self.repo.pull(int(self.params.get("pull_number") or self.params.get("issue_number")))
        if pr is None:
            raise not_found()
        return pr

    def paginate(self, items: list, *, cap: int | None = None) -> Reply:
        """One page of `items` with GitHub's `Link` header (per_page ≤ 100, default 30)."""
        if cap is not None:
            items = items[:cap]
        per_page = max(1, min(int(self.params.get("per_page", 30)), MAX_PER_PAGE))
        page = max(1, int(self.params.get("page", 1)))
        last = max(1, -(-len(items) // per_page))
        chunk = items[(page - 1) * per_page: page * per_page]
        links = []
        query = {k: v for k, v in self.query.items() if k != "page"}

        def url(n: int) -> str:
            return f"{self.double.url}{self.path}?{urlencode({**query, 'page': n})}"
        if page < last:
            links += [f'<{url(page + 1)}>; rel="next"', f'<{url(last)}>; rel="last"']
        if page > 1:
            links += [f'<{url(1)}>; rel="first"', f'<{url(min(page - 1, last))}>; rel="prev"']
        return Reply(chunk, headers={"Link": ", ".join(links)} if links else {})


Handler = Callable[[Context], Awaitable[Reply]]
HANDLERS: dict[str, Handler] = {}


def handles(operation_id: str) -> Callable[[Handler], Handler]:
    def register(fn: Handler) -> Handler:
        HANDLERS[operation_id] = fn
        return fn
    return register
