"""An uploader's words posted as the app's Markdown (bot/analyzers/neutral.py, through the ledger's
comments): rendered by a CommonMark renderer, a hostile SARIF message shows as its text, with no
image, link, fence, HTML or mention that would notify, and a help link stays one https link."""

from __future__ import annotations

import re

import pytest
from markdown_it import MarkdownIt

from bot.analyzers.feed import comment_body, entry_of
from bot.analyzers.filter import place
from bot.analyzers.model import AnalyzerResult
from bot.analyzers.neutral import https_link, plain_text
from bot.reviews.diff import read_patches

PATCHES = read_patches([{"filename": "src/a.py", "status": "added", "patch": "@@ -0,0 +1,2 @@\n+import os\n+x = 1"}])
HOSTILE = ("Hey @octocat and @octo-org/security-team, look: ![pixel](https://evil.example/p.png)\n"
           "```suggestion\nimport evil\n```\n<img src=x onerror=alert(1)> [click](javascript:alert(1)) "
           "https://evil.example/phish **bold** <!-- reviewer:summary --> mail me at a@b.example")


def _render(markdown: str) -> str:
    return MarkdownIt("commonmark").render(markdown)


def _body(message: str, help_uri: str | None = None) -> str:
    result = AnalyzerResult("tool", "R1", "error", None, message, "src/a.py", 2, 2, help_uri=help_uri)
    return comment_body(place([result], PATCHES).inline[0])


def test_a_hostile_message_renders_as_its_text():
    html = _render(_body(HOSTILE))
    assert "<img" not in html and "<pre" not in html and "<strong>bold" not in html and "<!--" not in html
    assert "<a " not in html  # no link at all: no help link was given
    # each mention and address is code, which GitHub neither notifies nor links
    assert "<code>@octocat</code>" in html and "<code>@octo-org/security-team</code>" in html
    assert "<code>https://evil.example/phish</code>" in html
    text = re.sub(r"<[^>]+>", "", html)
    for piece in ("![pixel](", "```suggestion", "[click](javascript:alert(1))", "**bold**", "a@b.example"):
        assert piece in text.replace("&quot;", '"').replace("&lt;", "<").replace("&gt;", ">"), piece
    listed = entry_of(place([AnalyzerResult("t", "R", "error", None, HOSTILE, "src/a.py", 2, 2)], PATCHES).inline[0],
                      PATCHES).finding.message  # what the review's body and the summary list
    assert "```" not in listed and "<img" not in _render(listed) and "<code>@octocat</code>" in _render(listed)


@pytest.mark.parametrize("uri", ["javascript:alert(1)", "http://docs.example/rule", "https://", "https://u:p@host/x",
                                 "https://host/a b", "data:text/html,x", "https://host/\x00"])
def test_a_help_link_that_is_not_a_plain_https_url_is_left_out(uri):
    assert https_link(uri) is None
    assert "<a " not in _render(_body("m", uri))


def test_a_help_link_cannot_break_out_of_its_link():
    uri = "https://docs.example/rule) ![x](https://evil.example/x.png) [y](https://evil.example"
    assert https_link(uri) is None  # a space: no URL
    sneaky = "https://docs.example/r)![x](https://evil.example/x.png)<b>[y](javascript:1)\\"
    html = _render(_body("m", sneaky))
    links = re.findall(r'<a href="([^"]*)">([^<]*)</a>', html)
    assert len(links) == 1 and links[0][1] == "About this rule" and links[0][0].startswith("https://docs.example/r")
    assert "<img" not in html and "<b>" not in html


def test_plain_text_keeps_ordinary_words_readable():
    assert plain_text("Unused import os") == "Unused import os"
    assert _render(plain_text("a_b (c) [d] 1. #2 > q")).strip() == "<p>a_b (c) [d] 1. #2 &gt; q</p>"
