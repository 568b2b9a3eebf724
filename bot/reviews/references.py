"""The issues a pull request says it closes, read from its title and body (pure).

A reference is a closing keyword (`close`, `closes`, `closed`, `fix`, `fixes`, `fixed`, `resolve`,
`resolves`, `resolved`, any case, an optional colon) followed by `#N`, `owner/repo#N` or the URL
of an issue on the pull request's own GitHub host (`https://github.com/owner/repo/issues/N`, or a
GitHub Enterprise Server's), as GitHub reads them to link and close issues. What a reader does not
see as prose is no reference: fenced and indented code blocks, code spans and HTML comments (a
pull request template's hints) are blanked before the search, and another host's URL is never
read as one. The text is untrusted and bounded: at most `MAX_SCANNED` characters of the body and
`MAX_TITLE` of the title are read, and at most `limit` distinct references kept (in the order they
first appear), the others counted.
"""

from __future__ import annotations

import bisect
import functools
import re
from dataclasses import dataclass
from urllib.parse import urlsplit

MAX_SCANNED = 65_536  # characters of the body read: GitHub's own limit on a body
MAX_TITLE = 1_024  # characters of the title read (GitHub's limit is 256)
MAX_LINKED = 5  # distinct references kept; the rest are counted
MAX_NUMBER = 2**31 - 1  # GitHub's issue numbers are 32-bit integers

_KEYWORD = r"(?<![\w])(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)(?::[ \t]*|[ \t]+)"
_OWNER = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})"
_REPO = r"[A-Za-z0-9._-]{1,100}"
_NUMBER = r"[1-9][0-9]{0,9}"
_END = r"(?![\w-])"


@dataclass(frozen=True, slots=True, order=True)
class IssueRef:
    """One issue, by repository and number."""

    owner: str
    repo: str
    number: int

    @property
    def full_name(self) -> str:
        return f"{self.owner}/{self.repo}"

    def key(self) -> tuple[str, str, int]:
        """GitHub's names ignore case: `Octo/App#1` and `octo/app#1` are one issue."""
        return self.owner.lower(), self.repo.lower(), self.number

    def name(self, here: str) -> str:
        """`#12` in the pull request's own repository `here` (`owner/repo`), else `owner/repo#12`."""
        return f"#{self.number}" if self.full_name.lower() == here.lower() else f"{self.full_name}#{self.number}"


@dataclass(frozen=True, slots=True)
class References:
    refs: tuple[IssueRef, ...] = ()  # distinct, in the order they first appear, at most `limit`
    more: int = 0  # further distinct references, past the limit: not kept
    cut: bool = False  # the body was longer than MAX_SCANNED: only its start was read


def closing_references(title: str | None, body: str | None, *, owner: str, repo: str,
                       html_url: str | None = None, limit: int = MAX_LINKED) -> References:
    """The issues the pull request `owner/repo` says it closes. `html_url`: any URL of the pull
    request on its GitHub host (its `html_url`), whose host is the only one an issue URL may
    name; without it, `github.com`."""
    body = body or ""
    cut = len(body) > MAX_SCANNED
    text = "\n".join((prose((title or "")[:MAX_TITLE]), prose(body[:MAX_SCANNED])))
    pattern = _pattern(_host(html_url))
    seen: set[tuple[str, str, int]] = set()
    kept: list[IssueRef] = []
    more = 0
    for match in pattern.finditer(text):
        ref = _ref(match, owner, repo)
        if ref is None or ref.key() in seen:
            continue
        seen.add(ref.key())
        if len(kept) < limit:
            kept.append(ref)
        else:
            more += 1
    return References(tuple(kept), more, cut)


def _host(html_url: str | None) -> str:
    host = urlsplit(html_url or "").hostname if html_url else None
    return (host or "github.com").lower()


@functools.lru_cache(maxsize=8)
def _pattern(host: str) -> re.Pattern[str]:
    www = r"(?:www\.)?" if host == "github.com" else ""
    url = (rf"https?://{www}{re.escape(host)}(?::[0-9]{{1,5}})?/(?P<url_owner>{_OWNER})/(?P<url_repo>{_REPO})"
           rf"/issues/(?P<url_number>{_NUMBER}){_END}(?!/\S)(?!\.\w)")
    named = rf"(?P<owner>{_OWNER})/(?P<repo>{_REPO})#(?P<number>{_NUMBER}){_END}"
    bare = rf"#(?P<bare>{_NUMBER}){_END}"
    return re.compile(rf"{_KEYWORD}(?:{url}|{named}|{bare})", re.IGNORECASE)


def _ref(match: re.Match[str], owner: str, repo: str) -> IssueRef | None:
    if match.group("bare"):
        found = IssueRef(owner, repo, int(match.group("bare")))
    elif match.group("number"):
        found = IssueRef(match.group("owner"), match.group("repo"), int(match.group("number")))
    else:
        found = IssueRef(match.group("url_owner"), match.group("url_repo"), int(match.group("url_number")))
    if found.number > MAX_NUMBER or found.repo in (".", ".."):
        return None
    return found


# --- what a reader sees as prose ----------------------------------------------------------------

_FENCE_OPEN = re.compile(r" {0,3}(`{3,}|~{3,})")
_HTML_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.S)
_BACKTICKS = re.compile(r"`+")


def prose(text: str) -> str:
    """`text` with what Markdown does not show as prose blanked: HTML comments, fenced and
    indented code blocks, code spans. Linear in the text's length, whatever it holds."""
    text = _HTML_COMMENT.sub(" ", text.replace("\r\n", "\n").replace("\r", "\n"))
    paragraphs: list[str] = []
    current: list[str] = []
    for line in _without_blocks(text.split("\n")):
        if line.strip():
            current.append(line)
            continue
        paragraphs.append(_without_spans("\n".join(current)))
        current = []
    paragraphs.append(_without_spans("\n".join(current)))
    return "\n\n".join(p for p in paragraphs if p)


def _without_blocks(lines: list[str]) -> list[str]:
    """The lines, with fenced code blocks (an unclosed fence runs to the end, as in CommonMark)
    and indented code blocks (four spaces or a tab, after a blank line) blanked."""
    out: list[str] = []
    fence: str | None = None  # the opening fence's run while inside a block
    after_blank = True
    for line in lines:
        if fence is not None:
            stripped = line.lstrip(" ")
            if len(line) - len(stripped) <= 3 and stripped.startswith(fence) and \
                    not stripped.lstrip(fence[0]).strip():
                fence = None
            out.append("")
            continue
        opened = _FENCE_OPEN.match(line)
        if opened and not (opened.group(1)[0] == "`" and "`" in line[opened.end():]):
            fence = opened.group(1)
            out.append("")
            continue
        indented = line.startswith(("    ", "\t")) and line.strip()
        if indented and after_blank:
            out.append("")  # a code block goes on while lines stay indented; blank keeps after_blank
            continue
        after_blank = not line.strip()
        out.append(line)
    return out


def _without_spans(text: str) -> str:
    """`text` with its code spans blanked: a run of backticks up to the next run of the same
    length (CommonMark); a run with no such closer is literal. One pass over the runs, with a
    binary search for each closer, so many unmatched runs cost no more than a few."""
    runs = [(m.start(), m.end()) for m in _BACKTICKS.finditer(text)]
    if len(runs) < 2:
        return text
    by_length: dict[int, list[int]] = {}
    for index, (start, end) in enumerate(runs):
        by_length.setdefault(end - start, []).append(index)
    parts: list[str] = []
    position = 0
    index = 0
    while index < len(runs):
        start, end = runs[index]
        same = by_length[end - start]
        later = bisect.bisect_right(same, index)
        if later == len(same):
            index += 1
            continue
        closer = same[later]
        parts += [text[position:start], " "]
        position = runs[closer][1]
        index = closer + 1
    parts.append(text[position:])
    return "".join(parts)
