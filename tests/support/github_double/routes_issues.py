"""Issue comments on pull requests (the app's summary comment lives here)."""

from __future__ import annotations

from .api import BODY_LIMIT, Context, Reply, handles, not_found, validation_failed
from .model import IssueComment, PullRequest, now_iso


def _check_body(body: str) -> None:
    if len(body) > BODY_LIMIT:
        raise validation_failed("IssueComment", "body", f"Body is too long (maximum is {BODY_LIMIT} characters)")


@handles("issues/list-comments")
async def list_comments(ctx: Context) -> Reply:
    pr = ctx.pull()
    comments = [c for c in pr.comments if c.updated_at >= ctx.params.get("since", "")]
    page = ctx.paginate(comments)
    return Reply([ctx.render.issue_comment(pr, c) for c in page.data], headers=page.headers)


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
