"""Issues, and issue comments: a pull request's conversation (the app's summary comment lives
here) and the comments of the issues a pull request links."""

from __future__ import annotations

from .api import BODY_LIMIT, ApiError, Context, Reply, handles, not_found, validation_failed
from .model import Issue, IssueComment, PullRequest, now_iso

NOT_ACCESSIBLE = "Resource not accessible by integration"  # GitHub's 403 to an app without the permission


def _check_body(body: str) -> None:
    if len(body) > BODY_LIMIT:
        raise validation_failed("IssueComment", "body", f"Body is too long (maximum is {BODY_LIMIT} characters)")


def _issue(ctx: Context) -> PullRequest | Issue:
    """The pull request or issue of `issue_number`. Issues need the app's `issues` permission and
    a repository whose issues are on; a pull request is also an issue, readable without either."""
    number = int(ctx.params["issue_number"])
    pr = ctx.repo.pull(number)
    if pr is not None:
        return pr
    if ctx.app is not None and "issues" not in ctx.app.permissions:
        raise ApiError(403, NOT_ACCESSIBLE)
    if not ctx.repo.has_issues:
        raise ApiError(410, "Issues are disabled for this repo")
    issue = ctx.repo.issues.get(number)
    if issue is None:
        raise not_found()
    return issue


@handles("issues/get")
async def get_issue(ctx: Context) -> Reply:
    found = _issue(ctx)
    return Reply(ctx.render.issue(found) if isinstance(found, PullRequest) else ctx.render.plain_issue(found))


@handles("issues/list-comments")
async def list_comments(ctx: Context) -> Reply:
    found = _issue(ctx)
    comments = [c for c in found.comments if c.updated_at >= ctx.params.get("since", "")]
    page = ctx.paginate(comments)
    return Reply([ctx.render.issue_comment(found, c) for c in page.data], headers=page.headers)


@handles("issues/create-comment")
async def create_comment(ctx: Context) -> Reply:
    pr = ctx.pull()
    _check_body(ctx.body["body"])
    stamp = now_iso()
    comment = IssueComment(id=ctx.double.next_id(), body=ctx.body["body"], user=ctx.app.bot, created_at=stamp, updated_at=stamp)
    pr.comments.append(comment)
    return Reply(ctx.render.issue_comment(pr, comment), status=201)


def _find(ctx: Context, comment_id: int) -> tuple[PullRequest, IssueComment]:
    for pr in ctx.repo.pulls.values():
        for comment in pr.comments:
            if comment.id == comment_id:
                return pr, comment
    raise not_found()


@handles("issues/update-comment")
async def update_comment(ctx: Context) -> Reply:
    pr, comment = _find(ctx, ctx.params["comment_id"])
    _check_body(ctx.body["body"])
    comment.body = ctx.body["body"]
    comment.updated_at = now_iso()
    return Reply(ctx.render.issue_comment(pr, comment))
