"""Pull requests, their files, reviews and review comments, with GitHub's refusals.

GitHub refuses an inline comment on a line outside the diff, an approval (or a change request) by
the pull request's own author, and a dismissal of a review that is not an approval or a change
request; the double does the same, so the app's handling of those refusals is tested.
"""

from __future__ import annotations

from .api import BODY_LIMIT, ApiError, Context, Reply, handles, not_found, unprocessable, validation_failed
from .git import FileDiff
from .model import PullRequest, Review, ReviewComment, now_iso

MAX_PULL_FILES = 3000  # "Responses include a maximum of 3000 files."
STATES = {"APPROVE": "APPROVED", "REQUEST_CHANGES": "CHANGES_REQUESTED", "COMMENT": "COMMENTED", None: "PENDING"}


@handles("pulls/get")
async def get_pull(ctx: Context) -> Reply:
    return Reply(ctx.render.pull(ctx.pull()))


@handles("pulls/list-files")
async def list_files(ctx: Context) -> Reply:
    pr = ctx.pull()
    page = ctx.paginate(pr.files(), cap=MAX_PULL_FILES)
    return Reply([ctx.render.diff_entry(pr.repo, d, pr.head_sha) for d in page.data], headers=page.headers)


@handles("pulls/list-reviews")
async def list_reviews(ctx: Context) -> Reply:
    pr = ctx.pull()
    page = ctx.paginate([r for r in pr.reviews if r.state != "PENDING" or r.user == ctx.app.bot])
    return Reply([ctx.render.review(pr, r) for r in page.data], headers=page.headers)


@handles("pulls/list-review-comments")
async def list_review_comments(ctx: Context) -> Reply:
    pr = ctx.pull()
    comments = sorted(pr.review_comments, key=lambda c: c.id, reverse=ctx.params.get("direction") == "desc")
    page = ctx.paginate(comments)
    return Reply([ctx.render.review_comment(pr, c) for c in page.data], headers=page.headers)


def _place_comment(c: dict, files: dict[str, FileDiff]) -> tuple[FileDiff, int | None, str]:
    """Where an inline comment lands, or GitHub's 422 when it is not on the diff."""
    diff = files.get(c["path"])
    if diff is None:
        raise unprocessable("Path could not be resolved")
    side = c.get("side", "RIGHT")
    if side not in ("LEFT", "RIGHT"):
        raise unprocessable(f"side must be LEFT or RIGHT, not {side!r}")
    if "line" in c:
        lines = diff.right_lines if side == "RIGHT" else diff.left_lines
        start = c.get("start_line")
        if c["line"] not in lines or (start is not None and (start not in lines or start >= c["line"])):
            raise unprocessable("Pull request review thread line must be part of the diff")
        return diff, c["line"], side
    if "position" in c:
        if not 1 <= c["position"] < diff.patch_lines:
            raise unprocessable("Pull request review thread position is invalid")
        return diff, None, side
    raise unprocessable("Pull request review thread line or position must be given")


@handles("pulls/create-review")
async def create_review(ctx: Context) -> Reply:
    pr, body = ctx.pull(), ctx.body or {}
    event = body.get("event")
    text = body.get("body", "")
    comments = body.get("comments") or []
    commit_id = body.get("commit_id") or pr.head_sha
    if commit_id not in pr.repo.commits:
        raise unprocessable("commit_id is not part of the pull request")
    if event in ("APPROVE", "REQUEST_CHANGES") and pr.user.login == ctx.app.bot.login:
        verb = "approve" if event == "APPROVE" else "request changes on"
        raise unprocessable(f"Can not {verb} your own pull request")
    if event == "REQUEST_CHANGES" and not text:
        raise unprocessable("Body is required when requesting changes")
    if event == "COMMENT" and not text and not comments:
        raise unprocessable("Body or comments are required when commenting")
    if len(text) > BODY_LIMIT or any(len(c["body"]) > BODY_LIMIT for c in comments):
        raise validation_failed("PullRequestReview", "body", f"Body is too long (maximum is {BODY_LIMIT} characters)")
    files = {d.path: d for d in pr.repo.diff(pr.merge_base, commit_id)}
    review = Review(id=ctx.double.next_id(), user=ctx.app.bot, body=text, state=STATES[event], commit_id=commit_id,
                    submitted_at=now_iso() if event else None)
    for c in comments:
        diff, line, side = _place_comment(c, files)
        review.comments.append(ReviewComment(
            id=ctx.double.next_id(), review_id=review.id, path=c["path"], line=line, side=side,
            start_line=c.get("start_line"), start_side=c.get("start_side") if c.get("start_line") else None,
            body=c["body"], commit_id=commit_id, user=ctx.app.bot, created_at=now_iso(),
            diff_hunk="\n".join(diff.patch.splitlines()[:20])))
    pr.reviews.append(review)
    return Reply(ctx.render.review(pr, review))


@handles("pulls/create-reply-for-review-comment")
async def create_reply(ctx: Context) -> Reply:
    """A reply in a thread; GitHub refuses a reply to a reply (it must name the thread's first comment)."""
    pr = ctx.pull()
    target = next((c for c in pr.review_comments if c.id == ctx.params["comment_id"]), None)
    if target is None:
        raise not_found()
    if target.in_reply_to_id is not None:
        raise unprocessable("Replies to replies are not supported: reply to the thread's first comment")
    text = ctx.body["body"]
    if len(text) > BODY_LIMIT:
        raise validation_failed("PullRequestReviewComment", "body", f"Body is too long (maximum is {BODY_LIMIT} characters)")
    review = Review(ctx.double.next_id(), ctx.app.bot, "", "COMMENTED", pr.head_sha, now_iso())
    reply = ReviewComment(ctx.double.next_id(), review.id, target.path, target.line, target.side, None, None, text,
                          pr.head_sha, ctx.app.bot, now_iso(), target.diff_hunk, in_reply_to_id=target.id)
    review.comments.append(reply)
    pr.reviews.append(review)
    return Reply(ctx.render.review_comment(pr, reply), status=201)


def _review(pr: PullRequest, review_id: int) -> Review:
    for review in pr.reviews:
        if review.id == review_id:
            return review
    raise not_found()


@handles("pulls/dismiss-review")
async def dismiss_review(ctx: Context) -> Reply:
    pr = ctx.pull()
    review = _review(pr, ctx.params["review_id"])
    if pr.repo.dismissals_restricted:
        raise ApiError(403, "You are not authorized to dismiss reviews on this protected branch")
    if review.state not in ("APPROVED", "CHANGES_REQUESTED"):
        raise unprocessable(f"Can not dismiss a {review.state.lower()} pull request review")
    review.state = "DISMISSED"
    review.dismissal_message = ctx.body["message"]
    return Reply(ctx.render.review(pr, review))
