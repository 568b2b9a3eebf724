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


_ENV.filters["when"] = when


def page(template: str, status: int = 200, *, form_origins: Iterable[str] = (), **values: Any) -> web.Response:
    text = _ENV.get_template(template).render(**values)
    return web.Response(text=text, status=status, content_type="text/html", charset="utf-8",
                        headers=headers(form_origins))


def see_other(location: str) -> web.Response:
    return web.Response(status=303, headers={**headers(), "Location": location})
