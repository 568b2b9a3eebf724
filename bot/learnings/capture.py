"""Making a learning from what people say to the app (pure).

A comment that mentions the app is read as commands and questions are
(`bot.reviews.followup.addressed`: quoted lines and fenced code never count), and is a learning
command when the mention is followed, on its line, by:
- `learn <text>` — a `guide` learning: the text goes into later reviews' prompts, for the
  repository, or for the finding's file when the comment is a reply to one of our findings;
- `ignore` or `not-an-issue` (`not an issue`), optionally followed by why — in reply to one of our
  findings, a `suppress` learning: later findings of its rule (else its category) in its file's
  directory (`dir/**`) of the repository, whose message is the one this finding had, are left out.
A 👎 on one of our finding comments makes the same learning as `ignore`.

Whether the author may teach is the caller's to ask GitHub (write access); it comes in as
`may_write`, and a refusal says why. The answer the app posts says what was learned, its id and
how to undo it.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from bot.learnings.body import MAX_TEXT
from bot.learnings.model import Learning, Scope, Source
from bot.reviews.followup import addressed, neutralise_mentions

Command = Literal["learn", "ignore", "not-an-issue"]
COMMANDS: tuple[Command, ...] = ("learn", "ignore", "not-an-issue")
_LEARN = re.compile(r"^\s*learn\b[\s:,.-]*", re.I)
_IGNORE = re.compile(r"^\s*(?:ignore|not[\s-]+an[\s-]+issue)\b[\s:,.!-]*", re.I)
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_GLOB_SPECIAL = re.compile(r"([\\*?\[\]{}])")
_FINGERPRINT = re.compile(r"^[A-Za-z0-9:._/+=-]{1,128}$")


@dataclass(frozen=True)
class Heard:
    """A learning command: `learn` with what to remember, or `ignore` / `not-an-issue` with the
    reason given (possibly none)."""

    command: Command
    text: str = ""


@dataclass(frozen=True)
class FindingRef:
    """The finding of ours a reply or a reaction is about (a model's or an analyzer's)."""

    path: str
    message: str
    rules: tuple[str, ...] = ()
    category: str = "other"
    fingerprint: str | None = None


@dataclass(frozen=True)
class Said:
    """Who said it, where, and what GitHub says of them: what a decision needs besides the words."""

    account: str
    repository: str
    author: str
    may_write: bool  # write access to the repository, asked of GitHub by the caller
    slug: str  # the app's, for the hints of a refusal
    url: str | None = None  # the comment's (a reaction's: its finding comment's)
    finding: FindingRef | None = None  # the finding of ours the comment replies to, if any


@dataclass(frozen=True)
class Learned:
    learning: Learning


@dataclass(frozen=True)
class Refused:
    reason: str  # a sentence for the answer, saying why and what to do instead


def read_learning(body: str, slug: str) -> Heard | None:
    """The learning command a comment gives the app, or None (another command, a question, nothing)."""
    said = addressed(body, slug)
    if said.after is None:
        return None
    words = said.first_words()
    after = said.after.lstrip(" \t")
    if words[:1] == ["learn"]:
        return Heard("learn", _LEARN.sub("", after, count=1).strip())
    if words[:1] in (["ignore"], ["not-an-issue"]) or words[:3] == ["not", "an", "issue"]:
        command: Command = "ignore" if words[0] == "ignore" else "not-an-issue"
        return Heard(command, _IGNORE.sub("", after, count=1).strip())
    return None


def decide(heard: Heard, said: Said, *, id: str, now: datetime) -> Learned | Refused:
    """The learning a command makes, or why it makes none."""
    if not said.may_write:
        return Refused(f"I did not learn this: `{said.author}` has no write access to "
                       f"{said.account}/{said.repository}, and only people who may push to it can teach me.")
    if heard.command == "learn":
        return _guide(heard, said, id, now)
    if said.finding is None:
        return Refused(f"`{heard.command}` works in a reply to one of my findings, and this comment is not one. "
                       f"To tell me something for this repository, write `@{said.slug} learn <what to remember>`.")
    return Learned(suppress_from(said.finding, said, id=id, now=now, reason=heard.text))


def from_reaction(said: Said, *, id: str, now: datetime) -> Learned | Refused:
    """A 👎 on one of our finding comments: the learning `ignore` would make (`said.author` reacted)."""
    if said.finding is None:
        return Refused("a reaction makes a learning only on one of my finding comments")
    return decide(Heard("ignore"), said, id=id, now=now)


def suppress_from(finding: FindingRef, said: Said, *, id: str, now: datetime, reason: str = "") -> Learning:
    """Leave out, in the finding's directory of this repository, later findings of its rule (else
    its category) that say what it said. The text is its message (and the reason, when given), so
    that `bot.learnings.apply.names` matches the same message in another file or pull request."""
    text = _clean(finding.message)
    if reason:
        text = f"{text}\n\nWhy: {_clean(reason)}"
    fingerprint = finding.fingerprint if finding.fingerprint and _FINGERPRINT.match(finding.fingerprint) else None
    return Learning(id, Scope(said.account, said.repository, (directory_glob(finding.path),)), "suppress",
                    _bounded(text), now, rule=finding.rules[0] if finding.rules else None,
                    category=None if finding.rules else (finding.category or "other"), fingerprint=fingerprint,
                    source=Source(said.url, said.author))


def _guide(heard: Heard, said: Said, id: str, now: datetime) -> Learned | Refused:
    text = _clean(heard.text)
    if not text:
        return Refused(f"Tell me what to learn: `@{said.slug} learn <what to remember>`.")
    if len(text) > MAX_TEXT:
        return Refused(f"I did not learn this: it is {len(text)} characters long, and I keep at most {MAX_TEXT}. "
                       "Say it shorter.")
    paths = (escape_glob(said.finding.path),) if said.finding else ()
    return Learned(Learning(id, Scope(said.account, said.repository, paths), "guide", text, now,
                            source=Source(said.url, said.author)))


def directory_glob(path: str) -> str:
    """`src/cli/main.py` → `src/cli/**`; a file at the root → `**` (its directory is the root)."""
    directory = posixpath.dirname(path.strip("/"))
    return f"{escape_glob(directory)}/**" if directory else "**"


def escape_glob(path: str) -> str:
    """A path as a glob matching only itself: `*?[]{}` and `\\` escaped."""
    return _GLOB_SPECIAL.sub(r"\\\1", path)


def _clean(text: str) -> str:
    """Without control characters and bidirectional overrides (the API refuses them too)."""
    return _CONTROL.sub("", text).strip()


def _bounded(text: str) -> str:
    """At most MAX_TEXT characters, cut at a word so the words kept still name the message."""
    if len(text) <= MAX_TEXT:
        return text
    cut = text[:MAX_TEXT]
    return cut[: cut.rfind(" ")].rstrip() if " " in cut else cut


def duplicate_of(new: Learning, existing: list[Learning] | tuple[Learning, ...]) -> Learning | None:
    """An existing learning that says the same (a second 👎, `ignore` after a 👎): the caller
    answers with it instead of adding another. Learnings made from one finding are the same
    whatever reasons were given; others are the same when their texts are, but for case and spacing."""
    wanted = _identity(new)
    return next((learning for learning in existing if _identity(learning) == wanted), None)


def _identity(learning: Learning) -> tuple:
    scope = learning.scope
    said = learning.fingerprint if learning.kind == "suppress" and learning.fingerprint else \
        " ".join(learning.text.split()).lower()
    return (learning.kind, scope.account.lower(), (scope.repository or "").lower(), scope.paths,
            learning.rule, learning.category, said)


def answer(learning: Learning, *, console_url: str | None = None, again: bool = False) -> str:
    """What the app posts when it learned something (`again`: it knew it already)."""
    scope = learning.scope
    where = ", ".join(f"`{p}`" for p in scope.paths) if scope.paths else "every file"
    repository = f"`{scope.full_name}`" if scope.repository else f"every repository of `{scope.account}`"
    if learning.kind == "suppress":
        head = (f"From now on I leave out findings of {learning.about} in {where} of {repository} that say what "
                "this one said:")
    else:
        head = f"Later reviews of {where} in {repository} are told:"
    quoted = "\n".join(f"> {line}" if line else ">" for line in learning.text.splitlines())
    undo = f"`reviewer learnings rm {learning.id}`"
    if console_url:
        undo += f", or delete it in the console: {console_url.rstrip('/')}/console/learnings#{learning.id}"
    opening = "I knew this already." if again else "Learned."
    return neutralise_mentions(f"{opening} {head}\n\n{quoted}\n\nLearning `{learning.id}`. To undo it: {undo}.")


DOES_NOT_APPLY = "[does-not-apply]"


def classified(answer_text: str) -> tuple[bool, str]:
    """Whether the model's follow-up answer classifies the reply as "intended / does not apply here"
    (its first line is DOES_NOT_APPLY), and the answer without that line."""
    first, _, rest = answer_text.lstrip().partition("\n")
    if first.strip().lower() == DOES_NOT_APPLY:
        return True, rest.strip()
    return False, answer_text
