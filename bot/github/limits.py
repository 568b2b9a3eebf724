"""GitHub's size limits on what the app writes, and the one way the app fits text into them."""

from __future__ import annotations

CHECK_OUTPUT_CHARS = 65_535  # output.summary and output.text of a check run, each
ANNOTATIONS_PER_REQUEST = 50  # a check run create/update carries at most 50; further updates append
ANNOTATION_TITLE_CHARS = 255
ANNOTATION_TEXT_CHARS = 16_000  # message/raw_details may be 64 KB: 16,000 characters fit even at 4 bytes each
COMMENT_BODY_CHARS = 65_536  # issue comments, reviews and review comments


def fit(text: str, limit: int, *, what: str = "text") -> str:
    """`text` if it fits in `limit` characters; else its head and a note saying how much was cut.

    The cut falls at a line break when one is near, so that Markdown tables and lists stay whole.
    """
    if len(text) <= limit:
        return text

    def note(cut: int) -> str:
        return f"\n\n… ({what} cut to fit GitHub's limit: {cut:,} of {len(text):,} characters not shown)"

    room = limit - len(note(len(text)))  # the longest note this text can need
    if room <= 0:
        return text[:limit]
    line_break = text.rfind("\n", 0, room)
    keep = line_break if line_break >= max(room - 2_000, room // 2, 1) else room
    return text[:keep] + note(len(text) - keep)
