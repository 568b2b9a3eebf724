"""The check run's and the review's Markdown, rendered for the console as GitHub would show it.

The text comes from a model and from repository files (templates), so it is untrusted. It goes
through markdown-it-py in its CommonMark mode with raw HTML off (a `<script>` or `<img onerror>` is
shown as text), images off (an image would load from a third party; its `[alt](url)` stays a link),
and a link check that keeps only `http:` and `https:` targets: any other (`javascript:`, `data:`,
`mailto:`, a relative path that would resolve inside the console) is not made a link, and its
source is shown as text. Links open without a referrer or an opener. The Content-Security-Policy
(bot/server/console/render.py) is the second wall behind this one.

One piece of HTML is kept, as GitHub keeps it: a collapsed section written on lines of their own,
`<details><summary>Notes</summary>` … `</details>` (the built-in summary template's notes,
bot/engine/templates.py). Those lines alone become the elements, the summary's words escaped;
an unbalanced `</details>` stays text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict
from markupsafe import Markup

# The hidden comments a post carries (the delivery it belongs to, the summary's marker): GitHub
# does not show them, so neither does the console; with raw HTML off they would show as text.
_HIDDEN = re.compile(r"<!--.*?-->\n?", re.S)
_SCHEMES = ("http://", "https://")
_DETAILS = re.compile(r"^[ \t]*(?:<details>[ \t]*<summary>([^<>\n]{0,200})</summary>|(</details>))[ \t]*$", re.M)


def _http_only(url: str) -> bool:
    """Whether `url` may be a link: http(s) only, compared without case or leading space."""
    return url.strip().lower().startswith(_SCHEMES)


def _link_open(renderer: RendererHTML, tokens: Sequence[Token], idx: int, options: OptionsDict,
               env: EnvType) -> str:
    tokens[idx].attrSet("rel", "noopener noreferrer nofollow")
    return renderer.renderToken(tokens, idx, options, env)


def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.disable("image")
    md.validateLink = _http_only  # type: ignore[method-assign]
    md.add_render_rule("link_open", _link_open)
    return md


_MD = _parser()


def render_markdown(text: Any) -> Markup:
    """`text` (Markdown from a check run or a review) as safe HTML for a page."""
    if not text:
        return Markup("")
    source = _HIDDEN.sub("", str(text))
    out, depth, start = Markup(""), 0, 0
    for found in _DETAILS.finditer(source):
        if found.group(2) and depth == 0:
            continue  # a close with nothing open: left in the text
        out += _markdown(source[start:found.start()])
        if found.group(2):
            out, depth = out + Markup("</details>\n"), depth - 1
        else:
            out, depth = out + Markup("<details><summary>{}</summary>\n").format(found.group(1).strip()), depth + 1
        start = found.end()
    return out + _markdown(source[start:]) + Markup("</details>\n") * depth


def _markdown(source: str) -> Markup:
    return Markup(_MD.render(source)) if source.strip() else Markup("")  # noqa: S704 (escaped; raw HTML off)
