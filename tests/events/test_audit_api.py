"""The audit log over real HTTP on both backends: each administrator's change is recorded with who,
from where and what (connectors applied and deleted through the resource API and the console,
redeliveries through the admin API and the console, the admin file reloaded or refused), and
`GET /v1/audit` lists them to `audit:read` only, a narrowed grant seeing only its accounts, a bad
filter answered 400 naming it. Break-glass sign-ins are in the sign-in log."""

from __future__ import annotations

import logging

import aiohttp

from bot.events.jobs import ReviewResult
from tests.support.console_support import console_server, csrf_of, session_for
from tests.support.oidc_support import ADMIN_TOKEN, CLIENT_SECRET, connector_doc, put_connector
from tests.support.server_support import Recorder, Server, pr_payload, wait_for

ACCESS = """\
access:
  roles:
    admin:       {allow: ["*"]}
    acme-audit:  {allow: ["audit:read", "deliveries:read", "deliveries:write"], accounts: ["acme*"]}
    writer:      {allow: ["connectors:read", "connectors:write", "deliveries:read", "deliveries:write"]}
"""
ADMIN = {"Authorization": f"Bearer {ADMIN_TOKEN}"}


async def _audit(server: Server, query: str = "", *, headers: dict[str, str] | None = ADMIN,
                 browser: aiohttp.ClientSession | None = None) -> tuple[int, dict]:
    http = browser or server.http
    async with http.get(f"{server.url}/v1/audit{query}", headers=headers if browser is None else None) as response:
        return response.status, await response.json()


async def _failed_review(server: Server, recorder: Recorder, delivery: str, repo: str, pr: int) -> None:
    recorder.reviews[delivery] = ReviewResult("failed", "no-usable-answer")
    status, _ = await server.post("pull_request", pr_payload(pr, "a" * 40, repo=repo), delivery)
    assert status == 202
    await server.wait_state(delivery, "done")


async def test_connector_changes_are_recorded_with_the_fields_they_touched_never_a_value(tmp_path, database_url):
    async with console_server(tmp_path, admin_yaml=ACCESS, database_url=database_url) as server:
        doc = connector_doc("okta", "http://127.0.0.1:9", server.url)
        await put_connector(server, doc)
        doc["spec"]["client_secret"] = "a-new-secret-value-9876543210"
        doc["spec"]["display"] = "Okta"
        await put_connector(server, doc)
        url = f"{server.url}/apis/resources.service.dev/v3/oidcconnectors/okta"
        forged = {**ADMIN, "X-Forwarded-For": "203.0.113.9", "Forwarded": "for=203.0.113.9", "X-Real-IP": "203.0.113.9"}
        async with server.http.delete(url, headers=forged) as response:  # any client can write those headers
            assert response.status == 200
        status, body = await _audit(server)
        assert status == 200 and body["nextBefore"] is None
        deleted, changed, created = body["entries"]
        assert (created["action"], created["target"], created["actor"], created["ip"], created["account"]) == \
            ("connector.apply", "oidcconnectors/okta", "break-glass token", "127.0.0.1", None)
        assert created["details"]["created"] is True and "spec.client_secret" in created["details"]["fields"]
        assert changed["details"] == {"created": False, "fields": ["spec.client_secret", "spec.display"],
                                      "generation": 2}
        assert (deleted["action"], deleted["details"]) == ("connector.delete", {"sessionsEnded": 0})
        assert deleted["ip"] == "127.0.0.1"  # the peer the server sees, never a forwarded header's claim
        assert created["at"].endswith("Z") and created["seq"] < changed["seq"] < deleted["seq"]
        async with server.http.get(f"{server.url}/v1/audit", headers=ADMIN) as response:
            text = await response.text()
        assert CLIENT_SECRET not in text and "a-new-secret-value" not in text


async def test_redeliveries_are_recorded_by_who_asked_on_the_delivery_account(tmp_path, database_url):
    recorder = Recorder()
    async with console_server(tmp_path, recorder, admin_yaml=ACCESS, database_url=database_url) as server:
        await _failed_review(server, recorder, "d-api", "acme/app", 7)
        await _failed_review(server, recorder, "d-console", "acme/app", 8)
        browser = await session_for(server, ["writer"], username="rita@example.com")
        async with browser:
            async with browser.post(f"{server.url}/api/deliveries/d-api/redeliver") as response:
                assert response.status == 202
            async with browser.get(f"{server.url}/console/deliveries/d-console") as response:
                csrf = csrf_of(await response.text())
            async with browser.post(f"{server.url}/console/deliveries/d-console/redeliver", data={"csrf": csrf},
                                    allow_redirects=False) as response:
                assert response.status == 303
        status, body = await _audit(server, "?action=delivery.redeliver")
        assert status == 200
        assert [(e["target"], e["actor"], e["account"], e["ip"], e["details"]) for e in body["entries"]] == [
            ("d-console", "rita@example.com", "acme", "127.0.0.1", {"repository": "acme/app", "event": "pull_request"}),
            ("d-api", "rita@example.com", "acme", "127.0.0.1", {"repository": "acme/app", "event": "pull_request"})]


async def test_a_connector_applied_in_the_console_is_recorded(tmp_path, database_url):
    async with console_server(tmp_path, admin_yaml=ACCESS, database_url=database_url) as server:
        browser = await session_for(server, ["writer"], username="wes@example.com")
        async with browser:
            async with browser.get(f"{server.url}/console/connectors") as response:
                csrf = csrf_of(await response.text())
            yaml = ("apiVersion: resources.service.dev/v3\nkind: ServiceOIDCConnector\nmetadata:\n  name: corp\n"
                    "spec:\n  issuer_url: http://127.0.0.1:9\n  client_id: reviewer\n"
                    "  client_secret: console-literal-secret-42\n"
                    f"  redirect_url: [\"{server.url}/v1/webapi/oidc/callback\"]\n"
                    "  claims_to_roles: [{claim: groups, value: admins, roles: [admin]}]\n")
            async with browser.post(f"{server.url}/console/connectors/apply", data={"csrf": csrf, "yaml": yaml},
                                    allow_redirects=False) as response:
                assert response.status == 303, await response.text()
        status, body = await _audit(server, "?actor=wes@example.com")
        assert status == 200 and len(body["entries"]) == 1
        entry = body["entries"][0]
        assert (entry["action"], entry["target"], entry["details"]["created"]) == \
            ("connector.apply", "oidcconnectors/corp", True)


async def test_the_admin_file_reloaded_or_refused_is_recorded(tmp_path, database_url):
    async with console_server(tmp_path, admin_yaml=ACCESS, database_url=database_url,
                              REVIEWER_ADMIN_RELOAD_SECONDS="0.05") as server:
        path = tmp_path / "admin.yaml"
        path.write_text(ACCESS + "defaults:\n  feedback: minimal\n")

        async def entries(action: str) -> list[dict]:
            return (await _audit(server, f"?action={action}"))[1]["entries"]
        reloaded = (await wait_for(lambda: entries("admin-config.reload")))[0]
        assert (reloaded["actor"], reloaded["ip"], reloaded["target"]) == ("server", None, str(path))
        assert reloaded["details"]["fields"] == ["defaults.feedback"] and ":" in reloaded["details"]["process"]
        path.write_text(ACCESS + "defaults:\n  feedback: loud\n")
        refused = (await wait_for(lambda: entries("admin-config.refuse")))[0]
        assert refused["details"]["errors"] == 1 and "loud" not in str(refused)


async def test_without_audit_read_403_and_a_narrowed_grant_sees_only_its_accounts(tmp_path, database_url):
    recorder = Recorder()
    async with console_server(tmp_path, recorder, admin_yaml=ACCESS, database_url=database_url) as server:
        await _failed_review(server, recorder, "d-acme", "acme-corp/app", 7)
        await _failed_review(server, recorder, "d-other", "other/app", 8)
        for delivery in ("d-acme", "d-other"):
            async with server.http.post(f"{server.url}/api/deliveries/{delivery}/redeliver", headers=ADMIN) as response:
                assert response.status == 202
        assert (await _audit(server, headers=None))[0] == 401
        assert (await _audit(server, headers={"Authorization": "Bearer wrong"}))[0] == 401

        writer = await session_for(server, ["writer"])  # connectors and deliveries, but not audit:read
        async with writer:
            status, body = await _audit(server, browser=writer)
            assert status == 403 and body["reason"] == "Forbidden" and "lacks the permission audit:read" in body["message"]
            async with writer.get(f"{server.url}/console/audit", allow_redirects=False) as response:
                assert response.status == 403
        narrowed = await session_for(server, ["acme-audit"], connector="mock2")
        async with narrowed:
            status, body = await _audit(server, browser=narrowed)
            assert status == 200
            assert [(e["target"], e["account"]) for e in body["entries"]] == [("d-acme", "acme-corp")]
            async with narrowed.get(f"{server.url}/console/audit") as response:
                page = await response.text()
            assert response.status == 200 and "d-acme" in page and "d-other" not in page
            assert "oidcconnectors/mock" not in page  # instance-wide: the connectors session_for applied
        status, body = await _audit(server)  # the un-narrowed token sees every entry
        assert {e["target"] for e in body["entries"]} >= {"d-acme", "d-other", "oidcconnectors/mock",
                                                           "oidcconnectors/mock2"}


async def test_bad_filters_answer_400_naming_the_field_and_good_ones_filter(tmp_path, database_url):
    async with console_server(tmp_path, admin_yaml=ACCESS, database_url=database_url) as server:
        for name in ("a", "b", "c"):
            await put_connector(server, connector_doc(name, "http://127.0.0.1:9", server.url))
        for query, field in (("?action=connector.explode", "action"), ("?since=last+week", "since"),
                             ("?until=2026-02-30", "until"), ("?limit=0", "limit"), ("?limit=9999", "limit"),
                             ("?before=x", "before"), ("?actor=a&actor=b", "actor"), ("?who=ann", "who"),
                             ("?since=2030-01-02&until=2030-01-01", "until")):
            status, body = await _audit(server, query)
            assert status == 400 and body["field"] == field and body["message"].startswith(f"{field}: "), (query, body)
        status, body = await _audit(server, "?limit=2")
        assert [e["target"] for e in body["entries"]] == ["oidcconnectors/c", "oidcconnectors/b"]
        status, rest = await _audit(server, f"?limit=2&before={body['nextBefore']}")
        assert [e["target"] for e in rest["entries"]] == ["oidcconnectors/a"] and rest["nextBefore"] is None
        assert (await _audit(server, "?actor=nobody"))[1]["entries"] == []
        assert len((await _audit(server, "?actor=break-glass+token&since=2000-01-01T00:00:00Z"))[1]["entries"]) == 3
        assert (await _audit(server, "?until=2000-01-01"))[1]["entries"] == []


class _Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


async def test_break_glass_sign_ins_are_in_the_sign_in_log(tmp_path, database_url):
    lines, logger = _Lines(), logging.getLogger("reviewer.signin")
    level = logger.level
    logger.setLevel(logging.INFO)  # what `reviewer serve` logs at by default
    logger.addHandler(lines)
    try:
        async with console_server(tmp_path, admin_yaml=ACCESS, database_url=database_url) as server, \
                aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as browser:
            for token in ("a-wrong-guess", ADMIN_TOKEN):
                async with browser.post(f"{server.url}/console/login/token", data={"token": token},
                                        headers={"Origin": server.url}, allow_redirects=False) as response:
                    assert response.status == 303
            async with browser.get(f"{server.url}/console/signins") as response:
                page = await response.text()
            assert response.status == 200
            assert page.count("break-glass token") >= 2 and "refused: token" in page and "signed in" in page
            assert ADMIN_TOKEN not in page and "a-wrong-guess" not in page
    finally:
        logger.removeHandler(lines)
        logger.setLevel(level)
    assert lines.lines == ["sign-in refused: connector=(break-glass token) check=token username=break-glass token",
                           "signed in: connector=(break-glass token) username=break-glass token roles=*"]
