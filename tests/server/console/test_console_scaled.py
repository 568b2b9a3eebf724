"""The console scaled out on PostgreSQL: a web process (`serve --no-workers`) serves the pages, a
worker process (`reviewer worker`) runs the jobs and records their timeline, and the web
process's console shows what the worker did. A worker serves no console."""

from __future__ import annotations

import aiohttp
from aiohttp import web

from bot.server.app import make_app
from tests.support.console_support import ACCESS_YAML, serving, session_for
from tests.support.oidc_support import ADMIN_TOKEN
from tests.support.server_support import Server, pr_payload, settings_for


async def test_a_workers_timeline_is_shown_by_a_web_process(tmp_path, pg_url):
    calls: list[str] = []

    async def answer(request: web.Request) -> web.Response:
        calls.append(request.path)
        return web.json_response({}, status=201)

    double = web.Application()
    double.router.add_route("*", "/{tail:.*}", answer)
    ran: list[str] = []

    def handler_for(context):
        async def handle(job):  # the job calls GitHub once, then fails
            ran.append(job.delivery_id)
            async with context.http.post(f"{github}/repos/acme/app/check-runs") as response:
                await response.read()
            raise RuntimeError("the review could not be posted")
        return handle

    admin_file = tmp_path / "admin.yaml"
    admin_file.write_text(ACCESS_YAML)
    async with serving(double) as github:
        settings = settings_for(tmp_path, REVIEWER_DATABASE_URL=pg_url, GITHUB_API_URL=github,
                                REVIEWER_ADMIN_TOKEN=ADMIN_TOKEN, REVIEWER_ADMIN_CONFIG=str(admin_file))
        web_app = make_app(settings, handler_for, role="web")
        worker_app = make_app(settings, handler_for, role="worker")
        async with serving(web_app) as web_url, serving(worker_app) as worker_url, \
                aiohttp.ClientSession() as http:
            server = Server(web_url, web_app, http)
            async with http.get(worker_url + "/console/", allow_redirects=False) as response:
                assert response.status == 404
            status, _ = await server.post("pull_request", pr_payload(7, "c" * 40, repo="acme/app"), "d-scaled")
            assert status == 202
            await server.wait_state("d-scaled", "failed")
            admin = await session_for(server, ["admin"])
            try:
                async with admin.get(web_url + "/console/deliveries/d-scaled") as response:
                    page = await response.text()
            finally:
                await admin.close()
    assert ran == ["d-scaled"] and calls == ["/repos/acme/app/check-runs"]
    assert "1 GitHub call" in page and "<code>POST /repos/acme/app/check-runs</code>" in page
    assert "the review could not be posted" in page and "attempt 1: failed" in page
