"""Reading what people say to the app on a pull request, and what it may say back (pure).

A comment that mentions the app (`@<slug>`) is a command when the words after the mention are
one of `COMMANDS`; one or two other words are an unknown command, which gets the help; anything
longer is a question, answered by the review model. In a thread the app started, every reply is
a question, mention or not. Quoted lines (`> …`) and code never count: quoting the app's own
words must not call it again.

Answers are bounded per thread (`MAX_ANSWERS` an hour, then one notice) and never carry a raw
`@` mention (`neutralise_mentions`): two bots that answer each other's mentions would loop.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

COMMANDS = ("full review", "review", "pause", "resume", "plan", "help")
MAX_ANSWERS = 5  # a thread, an hour
WINDOW = 3600.0  # seconds
_MENTION = re.compile(r"(?<![\w`])@([A-Za-z0-9](?:[A-Za-z0-9-]{0,38})(?:\[bot\])?)(?![A-Za-z0-9-])")
_FENCE = re.compile(r"^ {0,3}(```|~~~)")


@dataclass(frozen=True)
class Asked:
    """What a comment asks of the app: nothing, a command (`help` for an unknown one), or a question."""

    kind: Literal["nothing", "command", "question"]
    command: str = ""
    text: str = ""


def _spoken_lines(body: str) -> list[str]:
    """The comment's own lines: no quoted lines, no fenced code."""
    lines, fenced = [], False
    for line in body.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced and not line.lstrip().startswith(">"):
            lines.append(line)
    return lines


def _mentions_of(slug: str, text: str) -> list[re.Match[str]]:
    wanted = {slug.lower(), f"{slug.lower()}[bot]"}
    return [m for m in _MENTION.finditer(text) if m.group(1).lower() in wanted]


@dataclass(frozen=True)
class Addressed:
    """A comment's own words (no quotes, no fenced code), and what follows its first mention of
    the app: the one reading of a mention that commands, questions and learnings share."""

    text: str
    after: str | None  # None: the comment does not mention the app

    def first_words(self) -> list[str]:
        """The words on the mention's own line after it, lowercased, punctuation but `-` dropped."""
        line = self.after.splitlines()[0] if self.after and self.after.strip() else ""
        return re.sub(r"[^\w\s-]", " ", line).lower().split()


def addressed(body: str, slug: str) -> Addressed:
    text = "\n".join(_spoken_lines(body or "")).strip()
    found = _mentions_of(slug, text)
    return Addressed(text, text[found[0].end():] if found else None)


def read_comment(body: str, slug: str, *, in_app_thread: bool = False) -> Asked:
    said = addressed(body, slug)
    text = said.text
    if said.after is None:
        return Asked("question", text=text) if in_app_thread and text else Asked("nothing")
    spoken = " ".join(said.first_words())
    if spoken in COMMANDS:
        return Asked("command", spoken)
    rest = _MENTION.sub(lambda m: m.group(0) if m.group(1).lower() not in (slug.lower(), slug.lower() + "[bot]")
                        else "", text).strip()
    if len(rest.split()) <= 2:
        return Asked("command", "help")
    return Asked("question", text=text)


def _login(comment: Mapping) -> str:
    return str((comment.get("user") or {}).get("login", ""))


def conversation(thread: Sequence[Mapping], comment: Mapping, app_login: str) -> tuple[list[Mapping], int]:
    """The review thread as the model reads it to answer `comment` (whose author's access was
    checked), and how many replies were left out. It ends at that comment: a reply posted after it
    is not what was asked, whoever wrote it. In a thread the app started (a finding, where the
    answer may become a learning in the author's name) only the app's comments and the author's own
    are kept: nobody else's words steer how the author's reply is read. `comment` is added at the
    end when the thread read from GitHub does not hold it yet."""
    author = _login(comment).lower()
    ending = next((i for i, c in enumerate(thread) if c.get("id") == comment.get("id")), None)
    before = list(thread[:ending]) if ending is not None else list(thread)
    kept = before
    if before and _login(before[0]).lower() == app_login.lower():
        kept = [c for c in before if _login(c).lower() in (author, app_login.lower())]
    return [*kept, thread[ending] if ending is not None else comment], len(before) - len(kept)


def neutralise_mentions(text: str) -> str:
    """Every `@name` as code (`` `@name` ``), which GitHub shows but never notifies."""
    return _MENTION.sub(lambda m: f"`{m.group(0)}`", text)


def rate(given: Mapping[str, int]) -> Literal["answer", "notice", "silent"]:
    """Answer while the thread had fewer than MAX_ANSWERS answers this hour; then one notice."""
    if given.get("answer", 0) < MAX_ANSWERS:
        return "answer"
    return "silent" if given.get("notice", 0) else "notice"


def help_text(slug: str) -> str:
    return "\n".join([
        f"I am Reviewer. Mention me with one of these commands (`@{slug} review`):",
        "",
        "- `review` — review this pull request now: what changed since the last review.",
        "- `full review` — review the whole pull request again (findings already posted are not posted again).",
        "- `pause` — stop automatic reviews of this pull request; `resume` starts them again.",
        "- `plan` — post the review plan: files, rules, context, settings.",
        "- `help` — this message.",
        "",
        "Reply in a thread I started, or mention me with a question, and I answer it.",
    ])


RATE_NOTICE = (f"I have answered {MAX_ANSWERS} times in this thread within the hour, so I will stay quiet here "
               "for a while. Reply again later, or ask a maintainer.")
