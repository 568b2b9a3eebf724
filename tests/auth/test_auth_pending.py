"""The pending sign-in's record (bot/auth/pending.py): each flow's record survives the store as it
was made, its stored body keeps the keys of the untyped record before it (a sign-in started before
an upgrade finishes after it), a record missing what its flow needs is never made, and a stored
body changed by hand is refused as an unknown sign-in is."""

from __future__ import annotations

import time

import pytest

from bot.auth.errors import SignInError
from bot.auth.pending import OidcRequest, PendingSignIn, Terminal, keep, take
from bot.store.signin.sqlite import SqliteAuthStore

LISTENER = Terminal("http://127.0.0.1:41234/callback", "ab" * 32)
REQUEST = OidcRequest("the-nonce", "the-verifier", "https://reviewer.example.com/v1/webapi/oidc/callback")
RECORDS = [
    PendingSignIn("corp", "web", return_to="/console/", binding="b" * 64, oidc=REQUEST),
    PendingSignIn("corp", "test", return_to="/console/connectors?x=1", binding="b" * 64, oidc=REQUEST),
    PendingSignIn("corp", "mfa", return_to="/console/", binding="b" * 64, session="s" * 64,
                  username="carol@example.com", oidc=OidcRequest("n", None, "https://r.example.com/cb")),
    PendingSignIn("corp", "console", client=LISTENER, oidc=REQUEST),
    PendingSignIn("okta", "mfa", client=LISTENER, session="s" * 64, username="carol@example.com"),  # SAML
    PendingSignIn("okta", "web", return_to="/"),  # SAML: no OIDC request, no binding
]


@pytest.fixture
async def store(tmp_path):
    opened = SqliteAuthStore(str(tmp_path / "reviewer.db"))
    await opened.open()
    yield opened
    await opened.close()


@pytest.mark.parametrize("record", RECORDS, ids=lambda r: f"{r.flow}-{'oidc' if r.oidc else 'saml'}")
async def test_each_flow_comes_back_from_the_store_as_it_was_kept_and_only_once(store, record):
    await keep(store, "key", record, time.time() + 600)
    assert await take(store, "key") == record
    assert await take(store, "key") is None


async def test_the_stored_body_keeps_the_keys_of_the_untyped_record(store):
    """A record an earlier release stored, as its OIDC start and terminal wrote it, reads back."""
    earlier = {"connector": "corp", "nonce": "the-nonce", "verifier": None, "redirect_uri": REQUEST.redirect_uri,
               "flow": "console", "client_url": LISTENER.url, "client_key": LISTENER.key}
    await store.put_pending("key", earlier, time.time() + 600)
    taken = await take(store, "key")
    assert taken == PendingSignIn("corp", "console", client=LISTENER,
                                  oidc=OidcRequest("the-nonce", None, REQUEST.redirect_uri))
    assert taken.to_json() == earlier


@pytest.mark.parametrize(("fields", "named"), [
    ({"flow": "mfa", "return_to": "/", "username": "carol@example.com"}, "MFA round"),
    ({"flow": "console"}, "terminal's listener"),
    ({"flow": "web"}, "returns to"),
    ({"flow": "admin", "return_to": "/"}, "flow"),
])
def test_a_record_missing_what_its_flow_needs_is_never_made(fields, named):
    with pytest.raises(ValueError, match=named):
        PendingSignIn("corp", **fields)


@pytest.mark.parametrize("body", [
    {"connector": "corp", "flow": "web"},  # no page to return to
    {"connector": "corp", "flow": "web", "return_to": "/", "nonce": "n"},  # an OIDC request without its URI
    {"connector": "corp", "flow": "console", "client_url": LISTENER.url, "client_key": 7},
    {"connector": ["corp"], "flow": "web", "return_to": "/"},
    {"flow": "web", "return_to": "/"},
])
async def test_a_body_changed_by_hand_is_refused_as_an_unknown_sign_in(store, body, caplog):
    await store.put_pending("key", body, time.time() + 600)
    assert await take(store, "key") is None
    assert "a pending sign-in was refused" in caplog.text
    assert await store.take_pending("key") is None  # taken all the same: it cannot be tried twice


def test_what_a_flow_needs_is_asked_of_the_record_with_a_refusal_when_absent():
    saml_web = RECORDS[-1]
    with pytest.raises(SignInError, match="not started with an OIDC connector"):
        saml_web.oidc_request()
    with pytest.raises(SignInError, match="started in a browser"):
        saml_web.terminal()
    assert RECORDS[3].terminal() == LISTENER and RECORDS[0].oidc_request() == REQUEST
