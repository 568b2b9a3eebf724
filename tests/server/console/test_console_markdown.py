"""The check run's Markdown as the console renders it: CommonMark, no raw HTML, links only to
http(s) (others shown as text), no images, hidden comments hidden, the notes' collapsed section
kept; and the check run's summary says the index line (any note) once."""

from __future__ import annotations

from bot.reviews.checkrun import report_for_plan, with_review
from bot.server.console.markdown import render_markdown

INDEX_NOTE = "Repository index: 2 definition(s), 1 caller(s), 0 related piece(s) (1,024 of 40,000 bytes)"


def test_markdown_is_rendered_not_shown_as_source():
    out = render_markdown("### Files to review (1)\n\n- `src/a.py`\n\n**bold** and a [link](https://example.com/x)")
    assert "<h3>Files to review (1)</h3>" in out and "<li><code>src/a.py</code></li>" in out
    assert "<strong>bold</strong>" in out
    assert '<a href="https://example.com/x" rel="noopener noreferrer nofollow">link</a>' in out


def test_raw_html_is_text():
    out = render_markdown('<script>alert(1)</script>\n\n<img src=x onerror="alert(1)">\n\nhi <b onclick=x>b</b>')
    assert "<script" not in out and "<img" not in out and "<b " not in out
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in out and "&lt;img src=x" in out


def test_only_http_links_are_links():
    for target in ("javascript:alert(1)", "JaVaScRiPt:alert(1)", " javascript:alert(1)", "data:text/html,x",
                   "vbscript:x", "file:///etc/passwd", "/console/logout", "//evil.example/x", "mailto:a@b.c"):
        out = render_markdown(f"[click]({target}) and <{target}>")
        assert "<a " not in out, (target, out)
        assert "click" in out, target
    assert '<a href="http://example.com"' in render_markdown("<http://example.com>")


def test_images_are_not_loaded():
    out = render_markdown("![a tracker](https://evil.example/pixel.png)")
    assert "<img" not in out
    assert '<a href="https://evil.example/pixel.png" rel="noopener noreferrer nofollow">a tracker</a>' in out


def test_hidden_comments_are_hidden_and_the_notes_section_kept():
    out = render_markdown("<!-- reviewer:review delivery=d-1 -->\nBody\n\n<details><summary>Notes</summary>\n\n"
                          "- one\n\n</details>\n\n</details>\n\n<details><summary><script>x</summary>\n")
    assert "reviewer:review" not in out and "<p>Body</p>" in out
    assert "<details><summary>Notes</summary>\n<ul>\n<li>one</li>\n</ul>\n</details>" in out
    assert "&lt;/details&gt;" in out  # a close with nothing open stays text
    assert "<script>" not in out and out.count("<details>") == out.count("</details>")


def _plan() -> dict:
    return {"decision": "review", "skipReason": None, "errors": [], "notes": [], "files": ["a.py"], "ignored": [],
            "rules": [], "context": [], "agentFiles": [], "models": {"review": "m", "fallback": None},
            "comments": {"inline": True}, "feedback": "concise", "requireSuggestedFix": False, "approve": False}


def test_the_summary_says_a_note_once():
    summary = f"Found nothing.\n\n<details><summary>Notes</summary>\n\n- {INDEX_NOTE}\n\n</details>"
    outcome = {"conclusion": "success", "title": "No findings", "decisions": [], "annotations": [],
               "status": "completed", "attempts": []}
    report = with_review(report_for_plan(_plan()), outcome, summary, [INDEX_NOTE, "another note"])
    assert report.summary.count(INDEX_NOTE) == 1
    assert report.summary.count("another note") == 1  # a note the review's summary did not say is kept
