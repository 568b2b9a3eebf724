"""The few plain pages outside the console: the home page (`GET /`) and `reviewer setup`'s.

Server-rendered, every value escaped, no script and no style: the Content-Security-Policy allows
nothing but forms to the origins a page names. Pages are `no-store` and send at most their origin
as the referrer (`/setup?token=…` carries a one-time token, the callback GitHub's code).
"""

from __future__ import annotations

import html
from collections.abc import Iterable

from aiohttp import web


def headers(form_origins: Iterable[str] = (), referrer: str = "no-referrer") -> dict[str, str]:
    forms = " ".join(["'self'", *sorted(set(form_origins))])
    return {"Content-Security-Policy": f"default-src 'none'; form-action {forms}; frame-ancestors 'none'; "
                                       "base-uri 'none'",
            "X-Content-Type-Options": "nosniff", "Referrer-Policy": referrer, "Cache-Control": "no-store",
            "X-Frame-Options": "DENY"}


def text(value: object) -> str:
    return html.escape(str(value), quote=True)


def link(href: str, label: str) -> str:
    return f'<a href="{text(href)}">{text(label)}</a>'


def page(title: str, body: str, *, status: int = 200, form_origins: Iterable[str] = (),
         referrer: str = "no-referrer") -> web.Response:
    """`body` is HTML the caller built with `text`/`link` (every value escaped)."""
    document = ('<!doctype html><html lang="en"><head><meta charset="utf-8">'
                '<meta name="viewport" content="width=device-width, initial-scale=1">'
                f'<link rel="icon" href="data:,"><title>{text(title)}</title></head>'
                f'<body><main><h1>{text(title)}</h1>{body}</main></body></html>')
    return web.Response(text=document, status=status, content_type="text/html", charset="utf-8",
                        headers=headers(form_origins, referrer))
