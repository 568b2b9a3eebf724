"""Traces and the operations metrics, end to end: a signed webhook → the real pipeline → the chat
double (which asks for a lookup before it answers) → the GitHub double, with traces exported over
OTLP/HTTP to a local receiver (tests/support/otlp_receiver.py) and read back decoded.

One trace per delivery, from the webhook's span through the stored `traceparent` to the job's, and
under it the plan, every GitHub call, every model call (model, tokens, outcome), the lookup, the
index update and the posting; the trace id in the JSON log lines; nothing of the prompt or the key
in what is exported. /metrics then counts the model calls, tokens, money, check runs, queue wait
and the process's own figures.
"""

from __future__ import annotations

import asyncio
import io
import json
import logging
import re
from collections.abc import Iterator

import aiohttp
import pytest

from bot import telemetry
from bot.server import logging as log
from bot.telemetry.setup import configure, wanted
from tests.support.app_support import running_app
from tests.support.chat_double import asks, findings
from tests.support.otlp_receiver import OtlpReceiver
from tests.support.review_support import API_KEY, KEY_VAR, PRIMARY, admin_yaml, finding, reviewed

PRICING = "RATE = 3\n\ndef apply_discount(total, rate):\n    return total * (1 - rate)\n"
CHECKOUT_BASE = "def checkout(cart):\n    return sum(cart)\n"
CHECKOUT_HEAD = ("from src.pricing import apply_discount\n\ndef checkout(cart):\n"
                 "    return apply_discount(sum(cart), 0.9)  # the-secret-prompt-marker\n")
RULE = "Discounts never exceed half the total, says the-rule-marker."
CONFIG = f"rules:\n  - id: discounts\n    rule: {RULE}\n    paths: ['src/**']\n"
RAISES = finding(4, "blocking", "bug", "A rate of 0.9 is over the limit.", path="src/checkout.py")


@pytest.fixture
def receiver() -> Iterator[OtlpReceiver]:
    server = OtlpReceiver().start()
    try:
        yield server
    finally:
        server.close()


@pytest.fixture
def json_logs() -> Iterator[io.StringIO]:
    stream = io.StringIO()
    log.configure(stream, level=logging.DEBUG)
    try:
        yield stream
    finally:  # leave logging as other tests expect it
        for name in ("reviewer", "aiohttp"):
            logger = logging.getLogger(name)
            for handler in [h for h in logger.handlers if isinstance(h.formatter, log.JsonFormatter)]:
                logger.removeHandler(handler)
            logger.propagate = True
            logger.setLevel(logging.NOTSET)


def test_traces_are_off_unless_an_otel_variable_asks_for_them():
    assert not wanted({})
    assert not wanted({"OTEL_SERVICE_NAME": "reviewer"})  # a name alone exports nothing
    assert wanted({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"})
    assert wanted({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://collector:4318/v1/traces"})
    assert wanted({"OTEL_TRACES_EXPORTER": "otlp"})
    assert not wanted({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_SDK_DISABLED": "true"})
    assert not wanted({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_TRACES_EXPORTER": "none"})
    assert configure({}) is None and not telemetry.enabled()
    with telemetry.span("anything", a=1) as span:
        span.set(b=2)
        assert telemetry.trace_id() is None and telemetry.traceparent() is None


async def test_one_trace_from_the_webhook_through_the_queue_to_the_job(
        tmp_path, github, github_app, app_private_key, chat, receiver, json_logs, monkeypatch):
    monkeypatch.setenv(KEY_VAR, API_KEY)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.url)
    traces = configure(service="reviewer-test")
    assert traces is not None and telemetry.enabled()
    chat.answer(PRIMARY, asks(("definition", {"name": "apply_discount", "path": "src/checkout.py", "line": 4}),
                              usage=(1000, 20)),
                findings(RAISES, usage=(3000, 100)))
    priced = admin_yaml(chat).replace("    timeout: 5\n", "    timeout: 5\n    price: {input: 2, output: 10}\n")
    try:
        async with running_app(tmp_path, github, github_app, app_private_key, admin_yaml=priced) as world:
            pr = world.pull({".reviewer.yaml": CONFIG, "src/pricing.py": PRICING, "src/checkout.py": CHECKOUT_BASE},
                            {"src/checkout.py": CHECKOUT_HEAD})
            run = await reviewed(world, pr)
            async with aiohttp.ClientSession() as http, http.get(world.url + "/metrics") as response:
                metrics = await response.text()
        assert await asyncio.to_thread(traces.flush)
    finally:
        traces.shutdown()
    assert run.conclusion == "failure" and not telemetry.enabled()

    [webhook] = receiver.named("webhook")
    trace = [s for s in receiver.spans if s.trace_id == webhook.trace_id]
    by_id = {s.span_id: s for s in trace}
    [job] = [s for s in trace if s.name == "job"]
    assert webhook.parent_id == "" and webhook.kind == 2 and webhook.service == "reviewer-test"  # SERVER, a root
    assert job.parent_id == webhook.span_id and job.kind == 5  # CONSUMER: the queue handed the context on
    assert job.attributes["event"] == "pull_request" and job.attributes["review"] == "findings"
    names = {s.name for s in trace}
    assert {"plan", "index update", "lookup definition", "post", f"model local/{PRIMARY}",
            "github POST /repos/{owner}/{repo}/check-runs",
            "github PATCH /repos/{owner}/{repo}/check-runs/{check_run_id}"} <= names, names

    def under_job(span) -> bool:
        while span.parent_id:
            if span.parent_id == job.span_id:
                return True
            span = by_id[span.parent_id]
        return False

    assert all(under_job(s) for s in trace if s not in (webhook, job))  # every other span is the job's
    models = [s for s in trace if s.name == f"model local/{PRIMARY}"]
    assert [(m.attributes["gen_ai.request.model"], m.attributes["gen_ai.provider.name"],
             m.attributes["gen_ai.usage.input_tokens"], m.attributes["gen_ai.usage.output_tokens"],
             m.attributes["reviewer.outcome"]) for m in models] == [
        (PRIMARY, "local", 1000, 20, "ok"), (PRIMARY, "local", 3000, 100, "ok")]
    [patch] = [s for s in trace if s.name.startswith("github PATCH")][-1:]
    assert patch.attributes["http.response.status_code"] == 200
    assert job.attributes["reviewer.check_run.conclusion"] == "failure"

    exported = receiver.everything()
    for secret in (API_KEY, "the-secret-prompt-marker", "the-rule-marker", "apply_discount(sum(cart)"):
        assert secret.encode() not in exported  # neither the key nor the prompt's text leaves in a span

    lines = [json.loads(line) for line in json_logs.getvalue().splitlines()]
    done = [line for line in lines if line["msg"] == "job done" and line.get("delivery")]
    assert done and all(line["trace"] == webhook.trace_id for line in done)

    assert f'reviewer_model_calls_total{{provider="local",model="{PRIMARY}",outcome="ok"}} 2' in metrics
    assert f'reviewer_model_tokens_total{{provider="local",model="{PRIMARY}",kind="prompt"}} 4000' in metrics
    assert f'reviewer_model_tokens_total{{provider="local",model="{PRIMARY}",kind="answer"}} 120' in metrics
    # (4000 × 2 + 120 × 10) per million tokens
    [cost] = re.findall(rf'^reviewer_model_cost_total{{provider="local",model="{PRIMARY}"}} (\S+)$', metrics, re.M)
    assert float(cost) == pytest.approx(0.0092)
    assert 'reviewer_check_runs_total{conclusion="failure"} 1' in metrics
    assert 'reviewer_queue_wait_seconds_count{event="pull_request"} 1' in metrics
    for family in ("process_cpu_seconds_total", "process_resident_memory_bytes", "process_open_fds",
                   "process_start_time_seconds"):
        assert f"\n{family} " in metrics


async def test_a_bad_traceparent_starts_a_trace_of_its_own_and_a_failure_exports_its_type_alone(
        receiver, monkeypatch):
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.url)
    traces = configure()
    assert traces is not None
    parent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    try:
        with telemetry.resumed(parent, "continued"):
            assert telemetry.trace_id() == "0af7651916cd43dd8448eb211c80319c"
        for hostile in ("00-zz-yy-01", "00-" + "0" * 32 + "-" + "0" * 16 + "-01", "x" * 5000):
            with telemetry.resumed(hostile, "fresh"):
                assert telemetry.trace_id() not in (None, "0" * 32)
        with pytest.raises(ValueError), telemetry.span("failing", note="x" * 1000):
            raise ValueError("the-exception-marker sk-secret")
        assert await asyncio.to_thread(traces.flush)
    finally:
        traces.shutdown()
    [continued] = receiver.named("continued")
    assert (continued.trace_id, continued.parent_id) == ("0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331")
    fresh = receiver.named("fresh")
    assert len(fresh) == 3 and all(s.parent_id == "" for s in fresh) and len({s.trace_id for s in fresh}) == 3
    [failing] = receiver.named("failing")
    assert failing.status == 2 and len(failing.attributes["note"]) == 256  # an attribute is cut, never a blob
    assert b"the-exception-marker" not in receiver.everything() and b"sk-secret" not in receiver.everything()
    assert b"ValueError" in receiver.everything()  # the status names the type


async def test_a_span_name_is_cut_as_its_attributes_are(receiver, monkeypatch):
    """A model's span is named after the model, which a repository's `.reviewer.yaml` chooses (any
    model of a declared provider): a name as long as the file allows is cut at 256 characters, as
    an attribute's value is, so no caller's value ships a blob in a span's name."""
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.url)
    traces = configure()
    assert traces is not None
    try:
        with telemetry.span("model local/" + "m" * 100_000, gen_ai__request__model="m" * 100_000):
            pass
        assert await asyncio.to_thread(traces.flush)
    finally:
        traces.shutdown()
    [span] = [s for s in receiver.spans if s.name.startswith("model local/")]
    assert len(span.name) == 256 and len(span.attributes["gen_ai.request.model"]) == 256
