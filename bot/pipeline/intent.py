"""The issues a pull request closes, read for the review as the change's intent (I/O).

The references come from the pull request's title and body (bot/reviews/references.py, pure),
then from GitHub's own closing references (the Development sidebar's links: GraphQL's
`closingIssuesReferences`) for those the body does not name; each issue is read with the installation's token: the issue, then one page of its first comments.
An issue in another repository the installation reaches is read too, unless that repository is
private and the pull request's is public (the review of a public pull request is public: it must
not carry a private issue's words). Reading an issue never stops a review: one GitHub does not
give (404, 403, 410, moved, down) is named as not read, with why; a number that is a pull
request, not an issue, is not intent. At most `MAX_LINKED` references are read, one after the
other: at most three calls each.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from bot.github import GitHubClient, GitHubError, repository
from bot.github.issues import closing_issues, first_comments, get_issue
from bot.pipeline.targets import Target
from bot.reviews.intent import MAX_COMMENTS, MAX_TEXT, MAX_TITLE, Intent, IssueComment, LinkedIssue, Unread
from bot.reviews.references import MAX_LINKED, IssueRef, closing_references

log = logging.getLogger("reviewer.pipeline.intent")

PRIVATE_FROM_PUBLIC = ("its repository is private and this pull request's is public: a public review does not "
                       "carry a private issue's words")


async def read_intent(gh: GitHubClient, target: Target, pull: Mapping[str, Any]) -> Intent:
    """What the issues `pull` closes say, and which could not be read."""
    found = closing_references(pull.get("title"), pull.get("body"), owner=target.owner, repo=target.repo,
                               html_url=pull.get("html_url"))
    refs, more = await _with_linked(gh, target, list(found.refs), found.more)
    public = not _private(pull.get("base", {}).get("repo"))
    private_repos: dict[tuple[str, str], bool | str] = {}  # another repository → private, or why unreadable
    read: list[LinkedIssue] = []
    unread: list[Unread] = []
    for ref in refs:
        outcome = await _one(gh, target, ref, public, private_repos)
        (read if isinstance(outcome, LinkedIssue) else unread).append(outcome)  # type: ignore[arg-type]
    intent = Intent(target.full_name, tuple(read), tuple(unread), more, found.cut)
    if refs:
        log.info("linked issues of %s: %d read, %d not read", target.pull_key, len(read), len(unread))
    return intent


async def _with_linked(gh: GitHubClient, target: Target, refs: list[IssueRef], more: int) -> tuple[list[IssueRef], int]:
    """The body's references, then those GitHub says the pull request closes (its sidebar's
    links, GraphQL's `closingIssuesReferences`) that the body does not name, at most MAX_LINKED in
    all; and how many more there are. Asked only while there is room; a GitHub that does not
    answer (or an Enterprise Server without the field) leaves the body's references alone."""
    if len(refs) >= MAX_LINKED:
        return refs, more
    try:
        linked = await closing_issues(gh, target.owner, target.repo, target.number, MAX_LINKED)
    except GitHubError as exc:
        log.warning("the issues %s closes were not asked of GitHub: %s", target.pull_key, exc.describe())
        return refs, more
    seen = {ref.key() for ref in refs}
    for full_name, number in linked:
        owner, _, name = full_name.partition("/")
        ref = IssueRef(owner, name, number)
        if ref.key() in seen:
            continue
        seen.add(ref.key())
        if len(refs) < MAX_LINKED:
            refs.append(ref)
        else:
            more += 1
    return refs, more


async def _one(gh: GitHubClient, target: Target, ref: IssueRef, public: bool,
               private_repos: dict[tuple[str, str], bool | str]) -> LinkedIssue | Unread:
    if ref.key() == (target.owner.lower(), target.repo.lower(), target.number):
        return Unread(ref, "that is this pull request")
    if ref.full_name.lower() != target.full_name.lower():
        visibility = await _visibility(gh, ref, private_repos)
        if isinstance(visibility, str):
            return Unread(ref, visibility)
        if public and visibility:
            return Unread(ref, PRIVATE_FROM_PUBLIC)
    try:
        data = await get_issue(gh, ref.owner, ref.repo, ref.number)
    except GitHubError as exc:
        return Unread(ref, _unreadable(exc))
    if not isinstance(data, dict):
        return Unread(ref, "GitHub's answer is not an issue")
    if data.get("pull_request") is not None:
        return Unread(ref, "a pull request, not an issue")
    return LinkedIssue(ref, str(data.get("title") or "")[:MAX_TITLE], str(data.get("body") or "")[:MAX_TEXT],
                       _login(data.get("user")), str(data.get("state") or "open"),
                       await _comments(gh, ref, data))


async def _visibility(gh: GitHubClient, ref: IssueRef, known: dict[tuple[str, str], bool | str]) -> bool | str:
    """Whether another repository is private, or why it cannot be read; asked once a repository."""
    key = (ref.owner.lower(), ref.repo.lower())
    if key not in known:
        try:
            known[key] = _private(await repository(gh, ref.owner, ref.repo))
        except GitHubError as exc:
            known[key] = _unreadable(exc)
    return known[key]


async def _comments(gh: GitHubClient, ref: IssueRef, issue: dict) -> tuple[IssueComment, ...]:
    """The issue's first comments by people (bots' are left out), each bounded; none when GitHub
    does not give them (the issue is still read)."""
    count = issue.get("comments")
    if not isinstance(count, int) or count <= 0:
        return ()
    try:
        page = await first_comments(gh, ref.owner, ref.repo, ref.number, MAX_COMMENTS * 2)
    except GitHubError as exc:
        log.warning("the comments of %s/%s#%d were not read: %s", ref.owner, ref.repo, ref.number, exc.describe())
        return ()
    people = [c for c in page if isinstance(c, dict) and (c.get("user") or {}).get("type") != "Bot"]
    return tuple(IssueComment(_login(c.get("user")), str(c.get("body") or "")[:MAX_TEXT])
                 for c in people[:MAX_COMMENTS])


def _private(repo: object) -> bool:
    """A repository that does not say it is public counts as private (the stricter reading)."""
    return not (isinstance(repo, dict) and repo.get("private") is False)


def _login(user: object) -> str:
    login = user.get("login") if isinstance(user, dict) else None
    return login if isinstance(login, str) and login else "ghost"


def _unreadable(exc: GitHubError) -> str:
    if exc.status in (301, 302, 307, 308):
        return f"it was moved (GitHub answered {exc.status})"
    if exc.status == 410:
        return "GitHub answered 410: the repository's issues are turned off, or the issue was deleted"
    if exc.status in (401, 403, 404):
        return f"the app cannot read it (GitHub answered {exc.status})"
    return exc.describe()
