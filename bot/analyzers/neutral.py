"""An analyzer's words made safe to post as the app's own Markdown (pure).

A SARIF file's messages, rule names and help links are written by whoever produced the file (any
CI job holding a token, any tool), and the app posts them under its name. SARIF's `message.text`
is plain text, so it is shown as plain text: every Markdown punctuation character is escaped with a
backslash (no fence, suggestion block, image, link, HTML or emphasis can be written), `@name` and
`@org/team` mentions and bare web addresses are shown as code (GitHub neither notifies nor links
inside code), and nothing can open or close an HTML comment (the app's markers). A help link is
kept only as a checked https URL, every character that could end a Markdown link or its
destination percent-encoded.
"""

from __future__ import annotations

import re
from urllib.parse import quote, urlsplit

MAX_URL_CHARS = 2000
# CommonMark's backslash-escapable characters: all of ASCII punctuation.
_PUNCTUATION = re.compile(r"""([!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~])""")
# What is shown as code: a mention (a user, or an organisation's team), or a web address GitHub
# would link by itself.
_AS_CODE = re.compile(r"(?<![A-Za-z0-9_])@[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})(?:/[A-Za-z0-9][A-Za-z0-9_.-]*)?"
                      r"|(?:https?://|www\.)[^\s<>`]+", re.IGNORECASE)
# What a code span's text may not hold: a backtick ends it; a line break would end the line.
_UNSAFE_IN_CODE = re.compile(r"[`\s]")
# Kept as they are in a help link; everything else is percent-encoded (`(`, `)`, `<`, `>`, `[`,
# `]`, `\`, `"`, spaces and controls among them: none can end the link or its destination).
_URL_SAFE = ":/?#@!$&*+,;=%-._~"


def _escaped(text: str) -> str:
    return _PUNCTUATION.sub(r"\\\1", text)


def _code(text: str) -> str:
    return f"`{_UNSAFE_IN_CODE.sub('', text)}`"


def plain_text(text: str) -> str:
    """`text` as Markdown that renders as that text: no markup of its own, no mention that
    notifies, no link (mentions and addresses shown as code)."""
    out: list[str] = []
    last = 0
    for match in _AS_CODE.finditer(text):
        out += [_escaped(text[last:match.start()]), _code(match.group())]
        last = match.end()
    out.append(_escaped(text[last:]))
    return "".join(out)


def https_link(url: str | None) -> str | None:
    """A link destination for `url` when it is an https URL with a host (percent-encoded so that
    no character of it can end the link), else None."""
    if not url or len(url) > MAX_URL_CHARS or any(ord(c) < 0x21 or ord(c) == 0x7F for c in url):
        return None
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:
        return None
    if parts.scheme.lower() != "https" or not host or parts.username is not None or parts.password is not None:
        return None
    return quote(url, safe=_URL_SAFE)
