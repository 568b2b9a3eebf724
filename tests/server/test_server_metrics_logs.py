"""The in-house metrics registry and exposition, and the structured, scrubbed logs."""

from __future__ import annotations

import io
import json
import logging

import pytest

from bot.server import logging as log
from bot.server.metrics import Counter, Gauge, Histogram, Metrics, Registry


def test_exposition_of_each_kind():
    registry = Registry()
    counter = registry.register(Counter("jobs_total", "Jobs.", ("event", "outcome")))
    gauge = registry.register(Gauge("depth", "Depth."))
    histogram = registry.register(Histogram("duration_seconds", "Time.", ("event",), buckets=(0.1, 1)))
    counter.inc(event="pull_request", outcome="done")
    counter.inc(2, event='we"ird\\name\n', outcome="failed")
    gauge.set(5)
    gauge.dec(2)
    for value in (0.05, 0.1, 0.5, 3):
        histogram.observe(value, event="pull_request")
    assert registry.render() == (
        "# HELP jobs_total Jobs.\n# TYPE jobs_total counter\n"
        'jobs_total{event="pull_request",outcome="done"} 1\n'
        'jobs_total{event="we\\"ird\\\\name\\n",outcome="failed"} 2\n'
        "# HELP depth Depth.\n# TYPE depth gauge\ndepth 3\n"
        "# HELP duration_seconds Time.\n# TYPE duration_seconds histogram\n"
        'duration_seconds_bucket{event="pull_request",le="0.1"} 2\n'
        'duration_seconds_bucket{event="pull_request",le="1"} 3\n'
        'duration_seconds_bucket{event="pull_request",le="+Inf"} 4\n'
        'duration_seconds_sum{event="pull_request"} 3.65\n'
        'duration_seconds_count{event="pull_request"} 4\n')


def test_misuse_is_refused():
    counter = Counter("c_total", "C.", ("status",))
    with pytest.raises(ValueError, match=r"c_total: labels must be \['status'\], got \['code'\]"):
        counter.inc(code="200")
    with pytest.raises(ValueError, match="a counter only goes up"):
        counter.inc(-1, status="200")
    registry = Registry()
    registry.register(counter)
    with pytest.raises(ValueError, match="c_total is already registered"):
        registry.register(Counter("c_total", "again"))


def test_server_metrics_methods():
    metrics = Metrics()
    metrics.github_call(201)
    metrics.github_call("error")
    metrics.admin_reload(True)
    metrics.admin_reload(False)
    metrics.delivery("pull_request", "queued")
    text = metrics.render()
    assert 'reviewer_github_calls_total{status="201"} 1' in text
    assert 'reviewer_github_calls_total{status="error"} 1' in text
    assert 'reviewer_admin_config_reloads_total{result="ok"} 1' in text
    assert 'reviewer_admin_config_reloads_total{result="failed"} 1' in text
    assert 'reviewer_webhook_deliveries_total{event="pull_request",outcome="queued"} 1' in text


def test_log_lines_are_json_with_fields_and_scrubbed():
    stream = io.StringIO()
    handler = log.configure(stream)
    try:
        log.register_secret("hunter2-webhook-secret")
        logger = log.get("test")
        logger.warning("failed: %s", "token ghs_" + "a" * 36 + " and hunter2-webhook-secret",
                       extra={"delivery": "abc-123"})
        try:
            raise RuntimeError("Authorization: Bearer eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiIxMjMifQ.c2lnbmF0dXJl")
        except RuntimeError:
            logger.exception("crash")
    finally:  # leave logging as other tests expect it
        for name in ("reviewer", "aiohttp"):
            logger = logging.getLogger(name)
            logger.removeHandler(handler)
            logger.propagate = True
            logger.setLevel(logging.NOTSET)
    first, second = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert first["msg"] == "failed: <redacted> and <redacted>"
    assert (first["level"], first["logger"], first["delivery"]) == ("warning", "reviewer.test", "abc-123")
    assert second["msg"] == "crash" and "RuntimeError" in second["exc"]
    assert "eyJ" not in stream.getvalue() and "ghs_" not in stream.getvalue()


@pytest.mark.parametrize("secret", [
    "ghs_" + "A1" * 18, "ghp_" + "b" * 36, "github_pat_" + "C" * 30, "Bearer abc.def-ghi_jkl", "TOKEN 0123456789abcdef",
    "-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----", "eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiIxMjMifQ.c2ln",
])
def test_every_secret_shape_is_redacted_wherever_it_stands(secret):
    assert log.redact(f"at the start {secret} in the middle") == "at the start <redacted> in the middle"
    assert log.redact(f"{secret}") == "<redacted>"


def test_lines_without_secrets_are_left_alone():
    line = '{"msg": "delivery queued through the high road", "repo": "octo-org/github-app", "pr": 12}'
    assert log.redact(line) == line


def test_error_text_is_scrubbed_and_bounded():
    log.register_secret("another-s3cret-value")
    text = log.error_text(ValueError("bad another-s3cret-value " + "x" * 5000))
    assert text.startswith("ValueError: bad <redacted> xxx") and len(text) == 2000
    assert log.error_text(KeyError()) == "KeyError"
