"""The process's own metrics: /proc parsed as Prometheus' client libraries name the figures, and
rendered on /metrics (the live reading is checked against this very process)."""

from __future__ import annotations

import time

from bot.server import process_metrics
from bot.server.metrics import Metrics
from bot.telemetry import ModelCall

# A command name with spaces and parentheses: the fields are counted from the last ")"
STAT = ("4242 (python (my) app) S 1 4242 4242 0 -1 4194560 2000 0 0 0 "
        "250 50 0 0 20 0 3 0 12345 104857600 2560 18446744073709551615 1 1 0 0 0 0 0 16781312 16386 0 0 0 17 "
        "1 0 0 0 0 0\n")


def test_stat_is_parsed_past_a_command_name_with_parentheses():
    cpu, rss, vsize, start = process_metrics.parse_stat(STAT, ticks=100, page_size=4096, boot_time=1_700_000_000)
    assert cpu == 3.0  # (250 + 50) ticks
    assert rss == 2560 * 4096 and vsize == 104857600
    assert start == 1_700_000_000 + 123.45
    assert process_metrics.parse_boot_time("cpu  1 2 3\nbtime 1700000000\nprocesses 9\n") == 1_700_000_000
    limits = "Limit                     Soft Limit           Hard Limit           Units\n" \
             "Max open files            1024                 1048576              files\n"
    assert process_metrics.parse_max_fds(limits) == 1024
    assert process_metrics.parse_max_fds(limits.replace("1024 ", "unlimited ")) is None


def test_this_process_is_read_and_rendered_in_prometheus_names(tmp_path):
    sample = process_metrics.sample()
    assert sample is not None
    assert sample.open_fds >= 3 and sample.resident_bytes > 1_000_000 and sample.cpu_seconds > 0
    assert 0 < sample.start_time <= time.time()
    assert sample.max_fds is None or sample.max_fds > 0
    text = Metrics().render()
    assert "# TYPE process_cpu_seconds_total counter\n" in text
    for family in ("process_resident_memory_bytes", "process_open_fds", "process_start_time_seconds"):
        assert f"# TYPE {family} gauge\n{family} " in text
    assert process_metrics.sample(tmp_path) is None  # no /proc there: left out, not guessed
    assert process_metrics.render(None) == []


def test_model_calls_are_counted_with_tokens_and_money_only_where_known():
    metrics = Metrics()
    metrics.model_call(ModelCall("local", "m1", "ok", 1000, 50, money=0.0025))
    metrics.model_call(ModelCall("local", "m1", "timeout"))
    metrics.model_call(ModelCall("free", "m2", "ok", 10, None))
    metrics.check_run("neutral")
    metrics.queue_wait(0.2, "pull_request")
    text = metrics.render()
    assert 'reviewer_model_calls_total{provider="local",model="m1",outcome="ok"} 1' in text
    assert 'reviewer_model_calls_total{provider="local",model="m1",outcome="timeout"} 1' in text
    assert 'reviewer_model_tokens_total{provider="local",model="m1",kind="prompt"} 1000' in text
    assert 'reviewer_model_tokens_total{provider="free",model="m2",kind="prompt"} 10' in text
    assert 'reviewer_model_tokens_total{provider="free",model="m2",kind="answer"}' not in text  # not reported
    assert 'reviewer_model_cost_total{provider="local",model="m1"} 0.0025' in text
    assert 'reviewer_model_cost_total{provider="free"' not in text  # no price declared: no money figure
    assert 'reviewer_check_runs_total{conclusion="neutral"} 1' in text
    assert 'reviewer_queue_wait_seconds_count{event="pull_request"} 1' in text


def test_model_names_a_repository_chooses_cannot_grow_the_metrics_without_bound():
    """A repository's `.reviewer.yaml` may name any model of a declared provider, so the `model`
    label's values come from the repositories: past a bound of distinct models, calls are counted
    under `(other)`, and a long name is cut, so that /metrics stays a bounded page."""
    metrics = Metrics()
    for n in range(5000):
        metrics.model_call(ModelCall("local", f"model-{n}", "error"))
    metrics.model_call(ModelCall("local", "m" * 5000, "error"))
    metrics.model_call(ModelCall("local", "model-0", "ok", 10, 5))  # one seen before keeps its name
    lines = [line for line in metrics.render().splitlines() if line.startswith("reviewer_model_calls_total{")]
    assert len(lines) <= 102
    assert 'reviewer_model_calls_total{provider="local",model="(other)",outcome="error"} ' in "\n".join(lines)
    assert 'reviewer_model_calls_total{provider="local",model="model-0",outcome="ok"} 1' in lines
    assert all(len(line) < 400 for line in lines)
    assert sum(float(line.rsplit(" ", 1)[1]) for line in lines) == 5002  # every call counted
