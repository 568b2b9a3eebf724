"""A connector's status follows the world it depends on, without a PUT: a secret added to (or
removed from) the secret store, a restart under another REVIEWER_PUBLIC_URL, and, on a timer, what
no cheap watch can see. A status is written only when it changes, so processes sharing one
PostgreSQL store never fight over it. And under REVIEWER_PUBLIC_URL, a connector whose provider
could never come back to this server says so instead of "valid and ready"."""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime

import aiohttp
import pytest
from aiohttp import web

from bot.documents.pointers import human_pointer
from bot.server.app import RECONCILER, make_app
from tests.support.connectors_support import saml_doc, write_secret
from tests.support.console_support import serving
from tests.support.oidc_support import (
    ADMIN_TOKEN,
    CLIENT_SECRET,
    Browser,
    HostileProvider,
    connector_doc,
    signin_server,
)
from tests.support.server_support import settings_for, wait_for

OIDC_PATH = "/apis/resources.service.dev/v3/oidcconnectors"
SAML_PATH = "/apis/resources.service.dev/v2/samlconnectors"
AUTH = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
PUBLIC = "https://reviewer.example.test"
RELOAD = 0.05  # the watch of the admin file, the secrets and the connectors, scaled down (REVIEWER_ADMIN_RELOAD_SECONDS)


async def _put(http: aiohttp.ClientSession, base: str, path: str, doc: dict) -> dict:
    async with http.put(f"{base}{path}/{doc['metadata']['name']}", json=doc, headers=AUTH) as response:
        assert response.status in (200, 201)
        return await response.json()


async def _get(http: aiohttp.ClientSession, base: str, path: str, name: str) -> dict:
    async with http.get(f"{base}{path}/{name}", headers=AUTH) as response:
        assert response.status == 200
        return await response.json()


def _reconciled(obj: dict) -> dict:
    return next(c for c in obj["status"]["conditions"] if c["type"] == "SuccessfullyReconciled")


async def _until(http: aiohttp.ClientSession, base: str, path: str, name: str, status: str) -> dict:
    async def reached() -> dict | None:
        obj = await _get(http, base, path, name)
        return obj if _reconciled(obj)["status"] == status else None
    return await wait_for(reached)


def _clock_past(stamp: str) -> Callable[[], Awaitable[bool]]:
    async def past() -> bool:
        return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ") > stamp
    return past


async def test_a_secret_added_to_the_store_makes_the_connector_ready_without_a_put(tmp_path, database_url):
    secrets = tmp_path / "secrets"
    secrets.mkdir()
    provider = HostileProvider()
    async with provider.serving(), signin_server(tmp_path, REVIEWER_SECRETS_DIR=str(secrets),
                                                 REVIEWER_DATABASE_URL=database_url,
                                                 REVIEWER_ADMIN_RELOAD_SECONDS=str(RELOAD)) as server:
        doc = connector_doc("corp", provider.url, server.url, client_secret="secret://corp/client-secret")
        put = await _put(server.http, server.url, OIDC_PATH, doc)
        before = _reconciled(put)
        assert (before["status"], before["reason"]) == ("False", "SecretLookupFailed")
        # a transition's time is in whole seconds: wait until the clock has left the PUT's second,
        # so that a flip can be told from it
        await wait_for(_clock_past(before["lastTransitionTime"]))

        write_secret(str(secrets), "corp", "client-secret", CLIENT_SECRET)
        ready = await _until(server.http, server.url, OIDC_PATH, "corp", "True")
        after = _reconciled(ready)
        assert after["reason"] == "NoError" and after["observedGeneration"] == 1
        assert ready["metadata"]["generation"] == 1  # a status is not a spec change
        assert after["lastTransitionTime"] > before["lastTransitionTime"]  # it flipped, now
        assert ready["status"]["serviceResourceID"] == put["status"]["serviceResourceID"]
        browser = Browser()
        try:
            await browser.get(f"{server.url}/v1/webapi/oidc/login/web?connector_id=corp")
            assert browser.cookie("reviewer_session")  # usable, with no PUT in between
        finally:
            await browser.close()

        os.remove(secrets / "corp" / "client-secret")
        gone = _reconciled(await _until(server.http, server.url, OIDC_PATH, "corp", "False"))
        assert gone["reason"] == "SecretLookupFailed" and "secret://corp/client-secret" in gone["message"]
        assert CLIENT_SECRET not in str(gone)


async def _rounds_pass(*apps: web.Application, count: int = 10) -> None:
    """Until every app's reconcile watch has ended `count` more rounds (each looks at the store and
    the secrets, and reconciles again what moved)."""
    targets = [(app[RECONCILER], app[RECONCILER].rounds + count) for app in apps]

    async def passed() -> bool:
        return all(reconciler.rounds >= target for reconciler, target in targets)
    await wait_for(passed)


async def test_processes_sharing_postgresql_write_a_moved_status_once(tmp_path, pg_url):
    """Two web processes (each its own watch, admin file and descriptor cache) on one store: the
    status moves once, and neither rewrites it afterwards."""
    secrets = tmp_path / "secrets"
    secrets.mkdir()
    settings = settings_for(tmp_path, REVIEWER_DATABASE_URL=pg_url, REVIEWER_ADMIN_TOKEN=ADMIN_TOKEN,
                            REVIEWER_SECRETS_DIR=str(secrets), REVIEWER_ADMIN_RELOAD_SECONDS=str(RELOAD))

    def handler_for(context):
        async def handle(job):
            return None
        return handle

    first, second = make_app(settings, handler_for, role="web"), make_app(settings, handler_for, role="web")
    async with serving(first) as one, serving(second) as two, aiohttp.ClientSession() as http:
        doc = connector_doc("corp", "https://idp.example.com", one, client_secret="secret://corp/client-secret")
        put = await _put(http, one, OIDC_PATH, doc)
        assert _reconciled(put)["reason"] == "SecretLookupFailed"
        write_secret(str(secrets), "corp", "client-secret", CLIENT_SECRET)
        ready = await _until(http, two, OIDC_PATH, "corp", "True")
        assert int(ready["metadata"]["resourceVersion"]) == int(put["metadata"]["resourceVersion"]) + 1
        await _rounds_pass(first, second)  # rounds of each process's watch, then a touch of the store
        (secrets / "corp" / "client-secret").touch()
        await _rounds_pass(first, second)
        for base in (one, two):
            again = await _get(http, base, OIDC_PATH, "corp")
            assert again["metadata"]["resourceVersion"] == ready["metadata"]["resourceVersion"]  # no rewrite


async def test_the_timer_catches_what_the_watch_cannot_see(tmp_path):
    """A secret's bytes replaced in place with the same size and mtime: no stamp moves, the timer
    still reconciles."""
    secrets = tmp_path / "secrets"
    write_secret(str(secrets), "corp", "client-secret", "")
    path = secrets / "corp" / "client-secret"
    path.write_bytes(b"\xff" * len(CLIENT_SECRET))  # not UTF-8: the store cannot answer it
    stamp = os.stat(path)
    provider = HostileProvider()
    async with provider.serving(), signin_server(tmp_path, REVIEWER_SECRETS_DIR=str(secrets),
                                                 REVIEWER_ADMIN_RELOAD_SECONDS=str(RELOAD),
                                                 REVIEWER_RECONCILE_SECONDS="0.3") as server:
        doc = connector_doc("corp", provider.url, server.url, client_secret="secret://corp/client-secret")
        assert _reconciled(await _put(server.http, server.url, OIDC_PATH, doc))["reason"] == "SecretLookupFailed"
        with open(path, "r+b") as handle:
            handle.write(CLIENT_SECRET.encode())
        os.utime(path, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
        await _until(server.http, server.url, OIDC_PATH, "corp", "True")


async def test_a_restart_under_a_public_url_reconciles_what_was_stored(tmp_path):
    provider = HostileProvider()
    async with provider.serving():
        async with signin_server(tmp_path) as server:
            doc = connector_doc("corp", provider.url, server.url)  # the callback on 127.0.0.1
            assert _reconciled(await _put(server.http, server.url, OIDC_PATH, doc))["status"] == "True"
        async with signin_server(tmp_path, REVIEWER_PUBLIC_URL=PUBLIC) as server:
            moved = _reconciled(await _until(server.http, server.url, OIDC_PATH, "corp", "False"))
    assert moved["reason"] == "ValidationFailed" and "spec.redirect_url" in moved["message"]
    assert f"{PUBLIC}/v1/webapi/oidc/callback" in moved["message"]


OIDC_CASES = [
    pytest.param([f"{PUBLIC}/v1/webapi/oidc/callback"], None, id="the-callback"),
    pytest.param(["HTTPS://Reviewer.Example.Test:443/v1/webapi/oidc/callback"], None, id="same-origin-spelt-otherwise"),
    pytest.param(["https://other.example.test/v1/webapi/oidc/callback", f"{PUBLIC}/v1/webapi/oidc/callback"], None,
                 id="another-host-beside-the-callback"),
    pytest.param(["http://127.0.0.1:8080/v1/webapi/oidc/callback"], "/spec/redirect_url", id="loopback-only"),
    pytest.param([f"{PUBLIC}/callback"], "/spec/redirect_url/0", id="wrong-path-on-our-origin"),
    pytest.param([f"{PUBLIC}/v1/webapi/oidc/callback/"], "/spec/redirect_url/0", id="trailing-slash"),
    pytest.param(["http://reviewer.example.test/v1/webapi/oidc/callback"], "/spec/redirect_url",
                 id="http-on-the-https-host"),
    pytest.param([f"{PUBLIC}:8443/v1/webapi/oidc/callback"], "/spec/redirect_url", id="another-port"),
    pytest.param(["https://other.example.test/cb", "https://reviewer.example.test./v1/webapi/oidc/callback"],
                 "/spec/redirect_url", id="trailing-dot-host-is-not-chosen"),
    pytest.param([f"{PUBLIC}/v1/webapi/oidc/login", f"{PUBLIC}/v1/webapi/oidc/callback"], "/spec/redirect_url/0",
                 id="the-callback-after-a-wrong-entry-that-would-be-sent"),
]


@pytest.mark.parametrize("urls, pointer", OIDC_CASES)
async def test_an_oidc_connector_that_cannot_come_back_says_so(tmp_path, urls, pointer):
    async with signin_server(tmp_path, REVIEWER_PUBLIC_URL=PUBLIC) as server:
        doc = connector_doc("corp", "https://idp.example.com", server.url, redirect_url=urls)
        condition = _reconciled(await _put(server.http, server.url, OIDC_PATH, doc))
    if pointer is None:
        assert condition["status"] == "True", condition
        return
    assert (condition["status"], condition["reason"]) == ("False", "ValidationFailed"), condition
    assert human_pointer(pointer) in condition["message"] and f"{PUBLIC}/v1/webapi/oidc/callback" in condition["message"]
    assert "REVIEWER_PUBLIC_URL" in condition["message"]


@pytest.mark.parametrize("acs, ready", [
    (f"{PUBLIC}/v1/webapi/saml/acs/okta-saml", True),
    (f"{PUBLIC}/v1/webapi/saml/acs", True),
    (f"{PUBLIC}/v1/webapi/saml/acs/another", False),
    (f"{PUBLIC}/saml/acs", False),
    ("https://reviewer.example.com/v1/webapi/saml/acs/okta-saml", False),
])
async def test_a_saml_connector_whose_acs_is_not_ours_says_so(tmp_path, acs, ready):
    async with signin_server(tmp_path, REVIEWER_PUBLIC_URL=PUBLIC) as server:
        doc = saml_doc()
        doc["spec"]["acs"] = acs
        condition = _reconciled(await _put(server.http, server.url, SAML_PATH, doc))
    if ready:
        assert condition["status"] == "True", condition
        return
    assert (condition["status"], condition["reason"]) == ("False", "ValidationFailed"), condition
    assert "spec.acs" in condition["message"] and f"{PUBLIC}/v1/webapi/saml/acs/okta-saml" in condition["message"]


async def test_without_a_public_url_the_callback_is_not_checked(tmp_path):
    async with signin_server(tmp_path) as server:
        doc = connector_doc("corp", "https://idp.example.com", server.url,
                            redirect_url=["https://anywhere.example.net/callback"])
        assert _reconciled(await _put(server.http, server.url, OIDC_PATH, doc))["status"] == "True"
