"""Pages: Jinja2 templates (autoescaped) answered with the console's security headers.

The Content-Security-Policy allows the console's own script and style files and nothing inline:
an injected `<script>` or `style=` does nothing. `form-action` is the console's own origin, plus,
on the login page only, the identity providers a sign-in form's redirect leads to.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import jinja2
from aiohttp import web
from markupsafe import Markup

from bot.server.console.markdown import render_markdown

HERE = Path(__file__).parent
STATIC = HERE / "static"
_ENV = jinja2.Environment(loader=jinja2.FileSystemLoader(HERE / "templates"), autoescape=True,
                          undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)


def csp(form_origins: Iterable[str] = ()) -> str:
    forms = " ".join(["'self'", *sorted(set(form_origins))])
    return ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
            f"form-action {forms}; frame-ancestors 'none'; base-uri 'none'")


def headers(form_origins: Iterable[str] = ()) -> dict[str, str]:
    return {"Content-Security-Policy": csp(form_origins), "X-Content-Type-Options": "nosniff",
            "Referrer-Policy": "same-origin", "Cache-Control": "no-store", "X-Frame-Options": "DENY"}


def when(seconds: float | None) -> str:
    if seconds is None:
        return ""
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def at(seconds: float | None) -> Markup:
    """A moment as `<time>`: the UTC value as text and in `datetime`; the console's script shows
    it in the viewer's zone and keeps the UTC value on hover (without script, the UTC shows)."""
    if seconds is None:
        return Markup("")
    moment = datetime.fromtimestamp(seconds, UTC)
    return Markup('<time datetime="{}">{}</time>').format(moment.strftime("%Y-%m-%dT%H:%M:%SZ"), when(seconds))


# How an outcome looks: a tone (its colour, bot/server/console/static/console.css) and a mark
# beside its word, so that success and failure differ in text as well as in colour.
_GOOD = {"done", "success", "approved", "True", "ok", "resolved", "fixed"}
_BAD = {"failed", "failure", "False", "error", "timed_out", "action_required", "cancelled"}
_WAIT = {"running", "queued", "received", "in_progress", "pending"}


def tone(value: object) -> str:
    text = str(value)
    return "good" if text in _GOOD else "bad" if text in _BAD else "wait" if text in _WAIT else "neutral"


def outcome(value: object, label: object = None) -> Markup:
    """A badge for an outcome (a delivery's state, a check run's conclusion, a review's outcome);
    its tone's mark (✓, ✗, …) is drawn by the style sheet before the word."""
    return Markup('<span class="badge tone-{} state-{}">{}</span>').format(
        tone(value), str(value), label if label is not None else value)


_ENV.filters["when"] = when
_ENV.filters["at"] = at
_ENV.filters["markdown"] = render_markdown
_ENV.filters["outcome"] = outcome


def page(template: str, status: int = 200, *, form_origins: Iterable[str] = (), **values: Any) -> web.Response:
    text = _ENV.get_template(template).render(**values)
    return web.Response(text=text, status=status, content_type="text/html", charset="utf-8",
                        headers=headers(form_origins))


def see_other(location: str) -> web.Response:
    return web.Response(status=303, headers={**headers(), "Location": location})
