"""The sign-in cookies: the session (bot/auth/sessions.py) as a browser carries it, and the binding
that ties a started web sign-in to the browser that started it."""

from __future__ import annotations

from dataclasses import dataclass

from aiohttp import web

SESSION_COOKIE = "reviewer_session"
BINDING_COOKIE = "reviewer_signin"  # ties a started web sign-in to the browser that started it
HOST_PREFIX = "__Host-"


@dataclass(frozen=True)
class Cookies:
    """The browser cookies' names and flags. Over https they carry the `__Host-` prefix, which
    browsers accept only with `Secure`, `Path=/` and no `Domain`: a sibling subdomain cannot plant
    or overwrite them (login CSRF, session fixation). Over http (loopback, development) browsers
    refuse `__Host-` cookies, so the plain names are used there."""

    secure: bool

    @property
    def session(self) -> str:
        return HOST_PREFIX + SESSION_COOKIE if self.secure else SESSION_COOKIE

    @property
    def binding(self) -> str:
        return HOST_PREFIX + BINDING_COOKIE if self.secure else BINDING_COOKIE

    def set(self, response: web.StreamResponse, name: str, value: str, max_age: int) -> None:
        response.set_cookie(name, value, max_age=max_age, path="/", httponly=True, samesite="Lax",
                            secure=self.secure)

    def clear(self, response: web.StreamResponse, name: str) -> None:
        response.del_cookie(name, path="/", secure=self.secure, httponly=True, samesite="Lax")


def cookies_for(public_url: str | None) -> Cookies:
    return Cookies(secure=bool(public_url and public_url.startswith("https://")))
