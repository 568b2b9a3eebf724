"""Who is looking at the console, and may they: the sign-in gate, the CSRF token of forms.

Every page asks `Viewer.of(request, permission, account)`: signed out, the browser is sent to
`/console/login` with the page to come back to; signed in without the permission, a 403 page says
which permission is missing (and, when it is an MFA round that is missing, offers one). Forms
carry a CSRF token derived from the session token (HMAC), checked besides the gate's Origin check.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass
from urllib.parse import quote, urlencode, urlsplit

from aiohttp import web
from aiohttp.web_request import FileField
from multidict import MultiDictProxy

from bot.auth.guard import SAFE_METHODS, Denial, Principal
from bot.server.console.render import page
from bot.server.signin.gate import Gate

CSRF_FIELD = "csrf"


def csrf_token(session_token: str) -> str:
    return hmac.new(session_token.encode(), b"reviewer-console-csrf", hashlib.sha256).hexdigest()


@dataclass(frozen=True)
class Viewer:
    principal: Principal
    csrf: str

    def may(self, permission: str, account: str | None = None) -> bool:
        """Allowed on an object of `account` (None: of no account, which a narrowed grant is not)."""
        return self.principal.grant.allows(permission, account)

    def holds(self, permission: str) -> bool:
        """Granted on some account: enough to show a page that lists what `may` allows."""
        return self.principal.grant.holds(permission)

    @property
    def name(self) -> str:
        return self.principal.username


class Refused(Exception):
    """Raised by a page to answer with `response` instead (sign in, or 403)."""

    def __init__(self, response: web.Response) -> None:
        self.response = response


async def viewer(request: web.Request, gate: Gate, permission: str | None, account: str | None = None, *,
                 some_account: bool = False) -> Viewer:
    """The signed-in viewer allowed `permission` (None: any signed-in viewer) on an object of
    `account` (or, with `some_account`, on any account: a page that then shows each object only
    where `Viewer.may` allows it), or Refused."""
    found: Principal | Denial | None
    if permission is None:
        found = await gate.principal(request)
        if found is None:
            found = Denial(401, "Unauthorized", "sign in")
        elif request.method not in SAFE_METHODS and not gate.same_origin(request):
            found = Denial(403, "Forbidden", "a form sent with the session cookie must come from this server's pages")
    else:
        found = await gate.check(request, permission, account, some_account=some_account)
    if isinstance(found, Denial):
        connector = None
        if found.reason == "MFARequired":
            principal = await gate.principal(request)
            connector = principal.session.connector if principal and principal.session else None
        raise Refused(_denied(request, found, connector))
    if not found.by_cookie:
        raise Refused(denied_page(request, 403, "the console is for browsers: sign in at /console/login"))
    return Viewer(found, csrf_token(request.cookies.get(gate.cookies.session, "")))


async def check_form(request: web.Request, who: Viewer) -> MultiDictProxy[str | bytes | bytearray | FileField]:
    form = await request.post()
    offered = form.get(CSRF_FIELD)
    if not isinstance(offered, str) or not hmac.compare_digest(offered, who.csrf):
        raise Refused(denied_page(request, 403, "the form's CSRF token is missing or wrong: reload the page and "
                                                "try again"))
    return form


def login_url(request: web.Request) -> str:
    return "/console/login?next=" + quote(request.path_qs, safe="/")


def _denied(request: web.Request, denial: Denial, connector: str | None) -> web.Response:
    if denial.status == 401:
        return web.Response(status=303, headers={"Location": login_url(request), "Cache-Control": "no-store"})
    return denied_page(request, 403, denial.message, mfa_connector=connector)


def denied_page(request: web.Request, status: int, message: str, *, mfa_connector: str | None = None) -> web.Response:
    """A refusal naming what is missing; for a missing MFA round, a link that runs one and comes back."""
    back = request.path_qs if request.method == "GET" else (request.headers.get("Referer") or "/console/")
    mfa = None
    if mfa_connector:
        mfa = "/v1/webapi/oidc/mfa/web?" + urlencode({"connector_id": mfa_connector,
                                                      "redirect_url": urlsplit(back).path or "/console/"})
    return page("denied.html", status, message=message, mfa=mfa, who=None)
