"""`POST /api/deliveries/{id}/redeliver`, the admin API's redelivery, over real HTTP on both
backends: a delivery whose job failed, or whose job ran to its end with a review that failed, runs
again; nothing else does; a narrowed grant reaches only deliveries of its accounts."""

from __future__ import annotations

import aiohttp

from bot.events.jobs import ReviewResult
from tests.support.console_support import console_server, session_for
from tests.support.oidc_support import ADMIN_TOKEN
from tests.support.server_support import Recorder, Server, example, pr_payload, wait_for

ACCESS = """\
access:
  roles:
    admin:       {allow: ["*"]}
    acme-writer: {allow: ["deliveries:read", "deliveries:write"], accounts: ["acme*"]}
    reader:      {allow: ["deliveries:read"]}
"""


async def _redeliver(server: Server, delivery: str, *, token: str | None = ADMIN_TOKEN,
                     browser: aiohttp.ClientSession | None = None) -> tuple[int, dict]:
    url = f"{server.url}/api/deliveries/{delivery}/redeliver"
    if browser is not None:
        async with browser.post(url) as response:
            return response.status, await response.json()
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with server.http.post(url, headers=headers) as response:
        return response.status, await response.json()


async def _reviewed(server: Server, recorder: Recorder, delivery: str, result: ReviewResult | None,
                    repo: str = "acme/app", pr: int = 7) -> None:
    if result is not None:
        recorder.reviews[delivery] = result
    status, _ = await server.post("pull_request", pr_payload(pr, "a" * 40, repo=repo), delivery)
    assert status == 202
    await server.wait_state(delivery, "done", "failed")


async def _review_outcome(server: Server, delivery: str, outcome: str) -> dict:
    async def reached() -> dict | None:
        record = await server.store.delivery(delivery)
        return record if record and record["state"] == "done" and record["review_outcome"] == outcome else None
    return await wait_for(reached)


async def test_a_failed_review_or_job_runs_again_and_nothing_else(tmp_path, database_url):
    recorder = Recorder()
    async with console_server(tmp_path, recorder, admin_yaml=ACCESS, database_url=database_url) as server:
        await _reviewed(server, recorder, "d-broken", ReviewResult("failed", "invalid-config"))
        await _reviewed(server, recorder, "d-found", ReviewResult("findings"), pr=8)
        recorder.fail["d-crashed"] = "GitHub answered 502"
        await _reviewed(server, recorder, "d-crashed", None, pr=9)
        assert (await _redeliver(server, "d-broken", token=None))[0] == 401
        assert (await _redeliver(server, "d-broken", token="wrong"))[0] == 401
        status, body = await _redeliver(server, "d-found")
        assert status == 409 and body["message"] == ("delivery d-found is done: only a failed delivery (its job or "
                                                     "its review failed) is run again")
        assert (await _redeliver(server, "d-absent"))[0] == 404

        recorder.reviews["d-broken"] = ReviewResult("findings")  # the configuration was fixed
        assert await _redeliver(server, "d-broken") == (202, {"deliveryId": "d-broken", "state": "received"})
        record = await _review_outcome(server, "d-broken", "findings")
        assert (record["attempts"], record["received_count"], record["review_reason"]) == (2, 2, None)
        assert (await _redeliver(server, "d-broken"))[0] == 409  # its review completed: not run twice

        recorder.fail.pop("d-crashed")
        assert (await _redeliver(server, "d-crashed"))[0] == 202  # a failed job, as before
        assert (await server.wait_state("d-crashed", "done"))["attempts"] == 2


async def test_a_narrowed_grant_redelivers_only_deliveries_of_its_accounts(tmp_path, database_url):
    recorder = Recorder()
    async with console_server(tmp_path, recorder, admin_yaml=ACCESS, database_url=database_url) as server:
        failed = ReviewResult("failed", "no-usable-answer")
        await _reviewed(server, recorder, "d-acme", failed)
        await _reviewed(server, recorder, "d-other", failed, repo="other/app", pr=8)
        installation = example("installation.created")  # a delivery of no repository
        assert (await server.post("installation", installation, "d-install"))[0] == 202
        await server.wait_state("d-install", "done")
        writer = await session_for(server, ["acme-writer"])
        reader = await session_for(server, ["reader"])
        try:
            assert (await _redeliver(server, "d-other", browser=writer))[0] == 404  # not its account: not said
            assert (await _redeliver(server, "d-install", browser=writer))[0] == 404  # no account is not its own
            status, body = await _redeliver(server, "d-acme", browser=reader)
            assert status == 403 and body["reason"] == "Forbidden" and "deliveries:write" in body["message"]
            assert await server.state("d-other") == "done" and await server.state("d-acme") == "done"
            recorder.reviews["d-acme"] = ReviewResult("approved")
            assert (await _redeliver(server, "d-acme", browser=writer))[0] == 202
            await _review_outcome(server, "d-acme", "approved")
            status, body = await _redeliver(server, "d-install")  # the break-glass token reaches it: not failed
            assert status == 409
        finally:
            await writer.close()
            await reader.close()
