"""Reactions on pull request review comments (GitHub sends no webhook for them: the app lists them).

A test gives a reaction with `ReviewComment.react(user, content)`; the double lists them as GitHub
does, filtered by `content` when asked, and answers 404 for a comment it does not hold.
"""

from __future__ import annotations

from .api import Context, Reply, handles, not_found, unprocessable
from .render import node_id

CONTENTS = ("+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes")


@handles("reactions/list-for-pull-request-review-comment")
async def list_reactions(ctx: Context) -> Reply:
    wanted = ctx.params.get("content")
    if wanted is not None and wanted not in CONTENTS:
        raise unprocessable(f"content must be one of {', '.join(CONTENTS)}")
    comment = next((c for pr in ctx.repo.pulls.values() for c in pr.review_comments
                    if c.id == ctx.params["comment_id"]), None)
    if comment is None:
        raise not_found()
    found = [r for r in comment.reactions if wanted is None or r.content == wanted]
    page = ctx.paginate(found)
    return Reply([{"id": r.id, "node_id": node_id("Reaction", r.id), "user": ctx.render.user(r.user),
                   "content": r.content, "created_at": r.created_at} for r in page.data], headers=page.headers)
