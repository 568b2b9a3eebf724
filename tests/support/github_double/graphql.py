"""GitHub's GraphQL API, for what the app asks of it: a pull request's review threads,
`resolveReviewThread`, and the issues it closes (`closingIssuesReferences`: those a test links in
its sidebar, `PullRequest.linked_issues`).

Every request is parsed and validated against the cut of GitHub's published schema
(tests/data/github-graphql.graphql, scripts/cut_graphql.py): a query GitHub would refuse is
answered as GitHub answers it (200, `errors`) and recorded as a violation. The threads are the
review comments the double stores: each comment that replies to none starts a thread, its
replies follow it; whether a thread is resolved, and by whom, is `PullRequest.resolved_threads`.
A bot's login is its slug here (`reviewer`), as on GitHub, where REST says `reviewer[bot]`.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graphql import GraphQLError, build_schema, execute, parse, validate
from graphql.error import GraphQLSyntaxError

from .model import Installation, Issue, PullRequest, ReviewComment, User
from .render import node_id

if TYPE_CHECKING:
    from .server import GitHubDouble

SCHEMA_FILE = Path(__file__).resolve().parent.parent.parent / "data" / "github-graphql.graphql"
SCHEMA = build_schema(SCHEMA_FILE.read_text())
MAX_PAGE = 100  # GitHub: `first`/`last` between 1 and 100


def _actor_type(value: Any, *_: Any) -> str:
    return "Bot" if isinstance(value, _Actor) and value.user.type == "Bot" else "User"


SCHEMA.get_type("Actor").resolve_type = _actor_type  # type: ignore[union-attr]


@dataclass
class GraphQLCall:
    operation: str  # "query" | "mutation"
    fields: tuple[str, ...]  # the root fields asked for
    errors: int


def graphql_path(api_prefix: str) -> str:
    """`/graphql` on api.github.com; `/api/graphql` on GitHub Enterprise Server (API at `/api/v3`)."""
    return api_prefix[: -len("/v3")] + "/graphql" if api_prefix.endswith("/v3") else api_prefix + "/graphql"


def _cursor(index: int) -> str:
    return base64.b64encode(f"cursor:v2:{index}".encode()).decode()


def _page(items: list, first: int | None, after: str | None, last: int | None = None) -> dict:
    """A connection's `nodes`, `pageInfo` and `totalCount` for GitHub's forward pagination."""
    if first is None and last is None:
        raise GraphQLError("You must provide a `first` or `last` value to properly paginate the connection.")
    for value, name in ((first, "first"), (last, "last")):
        if value is not None and not 1 <= value <= MAX_PAGE:
            raise GraphQLError(f"Requesting {value} records on the connection exceeds the `{name}` limit of "
                               f"{MAX_PAGE} records.")
    start = 0
    if after:
        try:
            start = int(base64.b64decode(after).decode().rsplit(":", 1)[1]) + 1
        except (ValueError, IndexError):
            raise GraphQLError(f"`{after}` does not appear to be a valid cursor.") from None
    window = items[start:start + first] if first is not None else items[max(0, len(items) - (last or 0)):]
    end = start + len(window) - 1
    return {"nodes": window, "totalCount": len(items),
            "pageInfo": {"hasNextPage": end + 1 < len(items), "hasPreviousPage": start > 0,
                         "startCursor": _cursor(start) if window else None,
                         "endCursor": _cursor(end) if window else None}}


class _Actor:
    def __init__(self, user: User) -> None:
        self.user = user
        self.id = node_id(user.type, user.id)
        self.login = user.login.removesuffix("[bot]") if user.type == "Bot" else user.login


class _Comment:
    def __init__(self, comment: ReviewComment) -> None:
        self.id = node_id("PullRequestReviewComment", comment.id)
        self.databaseId = comment.id
        self.author = _Actor(comment.user)
        self.body = comment.body
        self.path = comment.path


class _Thread:
    def __init__(self, pr: PullRequest, root: ReviewComment) -> None:
        self.pr, self.root = pr, root
        self.id = thread_id(root)
        self.path = root.path
        self.line = root.line
        self.startLine = root.start_line
        self.isOutdated = False
        self.viewerCanResolve = True

    @property
    def isResolved(self) -> bool:
        return self.root.id in self.pr.resolved_threads

    def resolvedBy(self, info: Any) -> None:
        return None  # a `User`: an app that resolved it is none

    def comments(self, info: Any, first: int | None = None, after: str | None = None, last: int | None = None,
                 before: str | None = None, skip: int | None = None) -> dict:
        return _page([_Comment(c) for c in self.pr.thread(self.root)], first, after, last)


def thread_id(root: ReviewComment) -> str:
    return node_id("PullRequestReviewThread", root.id)


def threads_of(pr: PullRequest) -> list[ReviewComment]:
    """The comments that start a thread, oldest first."""
    return [c for c in pr.review_comments if c.in_reply_to_id is None]


class _PullRequest:
    def __init__(self, pr: PullRequest, installation: Installation) -> None:
        self.pr, self.installation = pr, installation
        self.id = node_id("PullRequest", pr.id)
        self.number = pr.number

    def reviewThreads(self, info: Any, first: int | None = None, after: str | None = None, last: int | None = None,
                      before: str | None = None) -> dict:
        return _page([_Thread(self.pr, root) for root in threads_of(self.pr)], first, after, last)

    def closingIssuesReferences(self, info: Any, first: int | None = None, after: str | None = None,
                                last: int | None = None, before: str | None = None, orderBy: Any = None,
                                userLinkedOnly: bool = False) -> dict:
        """The issues linked in the sidebar that the installation can see (GitHub leaves out the others)."""
        seen = [_Issue(i, self.installation) for i in self.pr.linked_issues
                if i.repo.full_name in self.installation.repositories]
        return _page(seen, first, after, last)


class _Issue:
    def __init__(self, issue: Issue, installation: Installation) -> None:
        self.id = node_id("Issue", issue.id)
        self.number = issue.number
        self.repository = _Repository(issue.repo, installation)


class _Repository:
    def __init__(self, repo: Any, installation: Installation) -> None:
        self.repo, self.installation = repo, installation
        self.id = node_id("Repository", repo.id)
        self.name = repo.name
        self.nameWithOwner = repo.full_name

    def pullRequest(self, info: Any, number: int) -> _PullRequest:
        pr = self.repo.pull(number)
        if pr is None:
            raise GraphQLError(f"Could not resolve to a PullRequest with the number of {number}.")
        return _PullRequest(pr, self.installation)


class _Root:
    def __init__(self, double: GitHubDouble, installation: Installation) -> None:
        self.double, self.installation = double, installation

    def repository(self, info: Any, owner: str, name: str, followRenames: bool = True) -> _Repository:
        wanted = f"{owner}/{name}".lower()
        repo = next((r for full, r in self.double.repos.items() if full.lower() == wanted), None)
        if repo is None or repo.full_name not in self.installation.repositories:
            raise GraphQLError(f"Could not resolve to a Repository with the name '{owner}/{name}'.")
        return _Repository(repo, self.installation)

    def resolveReviewThread(self, info: Any, input: dict) -> dict:  # noqa: A002 - GitHub's argument name
        for full_name in sorted(self.installation.repositories):
            repo = self.double.repos.get(full_name)
            for pr in (repo.pulls.values() if repo is not None else ()):
                for root in threads_of(pr):
                    if thread_id(root) == input["threadId"]:
                        pr.resolved_threads[root.id] = self.installation.app.bot.login
                        return {"clientMutationId": input.get("clientMutationId"), "thread": _Thread(pr, root)}
        raise GraphQLError(f"Could not resolve to a node with the global id of '{input['threadId']}'")


def answer(double: GitHubDouble, installation: Installation, raw: bytes) -> tuple[int, dict]:
    """(status, body) of one GraphQL request: GitHub answers 200 with `errors` for a query it
    refuses, and 400 for a body that is not a JSON request with a `query`."""
    try:
        request = json.loads(raw)
        query, variables = request["query"], request.get("variables") or {}
    except (ValueError, KeyError, TypeError):
        double.violations.append("POST graphql: the body is not a JSON object with a `query`")
        return 400, {"message": "Problems parsing JSON", "documentation_url": "https://docs.github.com/graphql"}
    try:
        document = parse(query)
    except GraphQLSyntaxError as exc:
        double.violations.append(f"POST graphql: {exc.message}")
        return 200, {"errors": [{"message": exc.message}]}
    problems = validate(SCHEMA, document)
    operation = document.definitions[0]
    kind = getattr(getattr(operation, "operation", None), "value", "query")
    fields = tuple(s.name.value for s in getattr(getattr(operation, "selection_set", None), "selections", ()))
    if problems:
        double.violations += [f"POST graphql: {p.message}" for p in problems]
        double.graphql_calls.append(GraphQLCall(kind, fields, len(problems)))
        return 200, {"errors": [p.formatted for p in problems]}
    result = execute(SCHEMA, document, root_value=_Root(double, installation), variable_values=variables)
    errors = [e.formatted for e in result.errors or ()]
    double.graphql_calls.append(GraphQLCall(kind, fields, len(errors)))
    return 200, {"data": result.data, **({"errors": errors} if errors else {})}
