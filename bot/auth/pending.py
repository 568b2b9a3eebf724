"""A sign-in between its start and the provider's answer, as one typed record.

Every start (a browser's sign-in, MFA round or test, a terminal's sign-in or MFA round; OIDC or
SAML) keeps one `PendingSignIn` in the sign-in store under its state (OIDC) or request id (SAML),
and the callback or assertion consumer takes it back once. The record is checked when it is made
and when it is read back (`from_json`), so that a flow never meets a record missing what it needs:
an MFA round always has the user and the session it verifies, a terminal's flow its listener, a
browser's flow the page it returns to. The stored JSON keeps the keys the untyped record had, so a
sign-in started before an upgrade finishes after it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Literal, cast, get_args

from bot.auth.errors import SignInError
from bot.auth.store import AuthStore

Flow = Literal["web", "mfa", "test", "console"]  # as the sign-in log names them
FLOWS: tuple[str, ...] = get_args(Flow)
log = logging.getLogger("reviewer.signin")


@dataclass(frozen=True)
class Terminal:
    """The listener of `reviewer login` the answer goes back to, sealed with its key (hex)."""

    url: str
    key: str


@dataclass(frozen=True)
class OidcRequest:
    """What the OIDC callback needs of its authorization request: the ID token's nonce, the PKCE
    verifier (None without PKCE) and the redirect URI the code was issued for."""

    nonce: str
    verifier: str | None
    redirect_uri: str


@dataclass(frozen=True)
class PendingSignIn:
    """`connector` is the connector's name; `return_to` the browser's page afterwards ("" for a
    terminal); `binding` the hash of the browser's binding cookie (an OIDC browser flow);
    `username` and `session` (the session's key) the signed-in user an MFA round verifies;
    `client` a terminal's listener; `oidc` the OIDC request (None for SAML)."""

    connector: str
    flow: Flow
    return_to: str = ""
    binding: str = ""
    username: str = ""
    session: str = ""
    client: Terminal | None = None
    oidc: OidcRequest | None = None

    def __post_init__(self) -> None:
        if self.flow not in FLOWS:
            raise ValueError(f"pending sign-in: flow {self.flow!r} is none of {', '.join(FLOWS)}")
        if self.flow == "mfa" and not (self.username and self.session):
            raise ValueError("pending sign-in: an MFA round needs the user and the session it verifies")
        if self.flow == "console" and self.client is None:
            raise ValueError("pending sign-in: a terminal's sign-in needs the terminal's listener")
        if self.client is None and not self.return_to:
            raise ValueError("pending sign-in: a browser's flow needs the page it returns to")

    def terminal(self) -> Terminal:
        """The terminal's listener of a terminal's flow."""
        if self.client is None:
            raise SignInError("state", "this sign-in was started in a browser, not by a terminal", status=400)
        return self.client

    def oidc_request(self) -> OidcRequest:
        """The OIDC request the callback finishes."""
        if self.oidc is None:
            raise SignInError("state", "this sign-in was not started with an OIDC connector: start it again",
                              status=400)
        return self.oidc

    def to_json(self) -> dict[str, Any]:
        """The stored body: the keys of the record before it was typed, only those that are set."""
        body: dict[str, Any] = {"connector": self.connector, "flow": self.flow}
        for name in ("return_to", "binding", "username", "session"):
            if getattr(self, name):
                body[name] = getattr(self, name)
        if self.client is not None:
            body.update(client_url=self.client.url, client_key=self.client.key)
        if self.oidc is not None:
            body.update(nonce=self.oidc.nonce, verifier=self.oidc.verifier, redirect_uri=self.oidc.redirect_uri)
        return body

    @classmethod
    def from_json(cls, body: dict[str, Any]) -> PendingSignIn:
        """The record from its stored body; ValueError names the field that is missing or wrong."""
        def text(name: str, required: bool = False) -> str:
            value = body.get(name)
            if value is None and not required:
                return ""
            if not isinstance(value, str) or (required and not value):
                raise ValueError(f"pending sign-in: `{name}` must be a non-empty string")
            return value

        client = Terminal(text("client_url", True), text("client_key", True)) if "client_url" in body else None
        oidc = None
        if "nonce" in body:
            verifier = body.get("verifier")
            if verifier is not None and not isinstance(verifier, str):
                raise ValueError("pending sign-in: `verifier` must be a string or null")
            oidc = OidcRequest(text("nonce", True), verifier, text("redirect_uri", True))
        return cls(text("connector", True), cast(Flow, text("flow", True)), text("return_to"), text("binding"),
                   text("username"), text("session"), client, oidc)


async def keep(store: AuthStore, key: str, pending: PendingSignIn, expires_at: float) -> None:
    """Keep a started sign-in under `key` until `expires_at` (taken once by `take`)."""
    await store.put_pending(key, pending.to_json(), expires_at)


async def take(store: AuthStore, key: str) -> PendingSignIn | None:
    """The sign-in kept under `key`, taken once: None when it is unknown, already taken or expired,
    and when its record is unreadable (logged: only this process writes them, so the store's rows
    were changed by hand), which the caller refuses as it refuses an unknown one."""
    body = await store.take_pending(key)
    if body is None:
        return None
    try:
        return PendingSignIn.from_json(body)
    except ValueError as exc:
        log.warning("a pending sign-in was refused: %s", exc)
        return None
