"""One trace per delivery across processes: `reviewer serve --no-workers` takes the webhook and a
`reviewer worker` runs the job through the PostgreSQL queue, each exporting to a local OTLP/HTTP
receiver (tests/support/otlp_receiver.py); the job's span continues the webhook's trace from the
`traceparent` stored with the delivery."""

from __future__ import annotations

import asyncio
import json

import pytest

from tests.support.app_support import World, installed
from tests.support.chat_double import ChatDouble, findings
from tests.support.otlp_receiver import OtlpReceiver
from tests.support.review_support import API_KEY, BUG, KEY_VAR, PRIMARY, admin_yaml, config_pull
from tests.support.scale_support import deliver_to, processes, web, worker
from tests.support.server_support import wait_for


@pytest.fixture
def world(tmp_path, github, github_app) -> World:
    return installed(tmp_path, github, github_app)


async def test_the_worker_continues_the_webhooks_trace(world, app_private_key, pg_url, tmp_path):
    receiver = OtlpReceiver().start()
    chat = await ChatDouble(api_key=API_KEY).start()
    chat.answer(PRIMARY, findings(BUG, usage=(400, 40)))
    admin = tmp_path / "admin.yaml"
    admin.write_text(admin_yaml(chat))
    extra = {"REVIEWER_ADMIN_CONFIG": str(admin), KEY_VAR: API_KEY,
             "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url, "OTEL_BSP_SCHEDULE_DELAY": "200"}
    pr = config_pull(world, "feedback: detailed\n")
    try:
        with processes(lambda: web(world, app_private_key, pg_url, **extra),
                       lambda: worker(world, app_private_key, pg_url, **extra)) as (front, jobs):
            assert await deliver_to(world, front.url, pr, "delivery-1") == 202
            run = await world.completed_run(pr, timeout=60)

            async def exported() -> bool:
                return bool(receiver.named("webhook")) and any(s.name == "post" for s in receiver.spans)
            await wait_for(exported, timeout=30)
            for proc in (front, jobs):
                assert await asyncio.to_thread(proc.terminate) == 0
    finally:
        await chat.close()
        receiver.close()
    assert run.conclusion == "failure"
    [webhook] = receiver.named("webhook")
    [job] = receiver.named("job")
    assert (webhook.service, job.service) == ("reviewer", "reviewer-worker")  # two processes
    assert job.trace_id == webhook.trace_id and job.parent_id == webhook.span_id
    in_trace = {s.name for s in receiver.spans if s.trace_id == webhook.trace_id}
    assert {"plan", f"model local/{PRIMARY}", "post", "index update"} <= in_trace
    logged = [json.loads(line) for line in jobs.lines if line.startswith("{")]
    assert any(line.get("msg") == "job done" and line.get("trace") == webhook.trace_id for line in logged)
    assert API_KEY.encode() not in receiver.everything()
