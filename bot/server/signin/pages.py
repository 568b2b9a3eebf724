"""The few HTML pages sign-in shows itself: a refusal naming the failed check, nothing else.

Server-rendered, escaped, no script; the CSP forbids everything but the page itself.
"""

from __future__ import annotations

import html

from aiohttp import web

SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; form-action 'self'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


def refusal_page(status: int, check: str, message: str, *, claim_names: list[str] | None = None,
                 hint: str = "") -> web.Response:
    parts = [f"<p>The check that failed: <code>{html.escape(check)}</code>.</p>",
             f"<p>{html.escape(message)}</p>"]
    if claim_names is not None:
        names = ", ".join(f"<code>{html.escape(n)}</code>" for n in claim_names) or "none"
        parts.append(f"<p>Claims received from the provider (names only): {names}.</p>")
    if hint:
        parts.append(f"<p>{html.escape(hint)}</p>")
    parts.append("<p>Start the sign-in again once the cause is fixed: "
                 "<a href=\"/console/login\">back to the sign-in page</a>.</p>")
    body = ("<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Sign-in refused</title>"
            "</head><body><main><h1>Sign-in refused</h1>" + "".join(parts) + "</main></body></html>")
    return web.Response(text=body, status=status, content_type="text/html", charset="utf-8",
                        headers=SECURITY_HEADERS)


def redirect(url: str) -> web.Response:
    """A 302 to `url` (a checked target: the provider, a local path or the terminal's listener)."""
    return web.Response(status=302, headers={**SECURITY_HEADERS, "Location": url})
