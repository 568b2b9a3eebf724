"""A small in-house Prometheus registry: counters, gauges, histograms and the text exposition.

In-house because the server needs four metric families and the text format (version 0.0.4) is a
page of rules; a client library would be a dependency for that. Label values are escaped as the
format requires; label names are fixed at declaration so a caller cannot grow cardinality by typo.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Iterable, Mapping
from typing import TypeVar

from bot.server import process_metrics
from bot.telemetry import ModelCall

# The `model` label's bound (Metrics._model_label): distinct models named, and a name's length.
MAX_MODEL_LABELS = 100
MAX_MODEL_CHARS = 128
OTHER_MODEL = "(other)"
DEFAULT_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300)


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _number(value: float) -> str:
    if value == math.inf:
        return "+Inf"
    if value == -math.inf:
        return "-Inf"
    if math.isnan(value):
        return "NaN"
    if float(value).is_integer() and abs(value) < 1e15:
        return str(int(value))
    return repr(float(value))


def _labels(names: tuple[str, ...], values: tuple[str, ...], extra: str = "") -> str:
    parts = [f'{n}="{_escape(v)}"' for n, v in zip(names, values, strict=False)]
    if extra:
        parts.append(extra)
    return "{" + ",".join(parts) + "}" if parts else ""


M = TypeVar("M", bound="_Metric")


class _Metric:
    kind = ""

    def __init__(self, name: str, help: str, labels: Iterable[str] = ()) -> None:
        self.name = name
        self.help = help
        self.labelnames = tuple(labels)

    def _key(self, labels: dict[str, str]) -> tuple[str, ...]:
        if set(labels) != set(self.labelnames):
            raise ValueError(f"{self.name}: labels must be {list(self.labelnames)}, got {sorted(labels)}")
        return tuple(str(labels[n]) for n in self.labelnames)

    def header(self) -> list[str]:
        return [f"# HELP {self.name} {_escape(self.help)}", f"# TYPE {self.name} {self.kind}"]

    def samples(self) -> list[str]:
        raise NotImplementedError


class Counter(_Metric):
    kind = "counter"

    def __init__(self, name: str, help: str, labels: Iterable[str] = ()) -> None:
        super().__init__(name, help, labels)
        self._values: dict[tuple[str, ...], float] = {}

    def inc(self, amount: float = 1.0, **labels: str) -> None:
        if amount < 0:
            raise ValueError(f"{self.name}: a counter only goes up")
        key = self._key(labels)
        self._values[key] = self._values.get(key, 0.0) + amount

    def value(self, **labels: str) -> float:
        return self._values.get(self._key(labels), 0.0)

    def samples(self) -> list[str]:
        return [f"{self.name}{_labels(self.labelnames, k)} {_number(v)}" for k, v in sorted(self._values.items())]


class Gauge(Counter):
    kind = "gauge"

    def set(self, value: float, **labels: str) -> None:
        self._values[self._key(labels)] = float(value)

    def inc(self, amount: float = 1.0, **labels: str) -> None:
        key = self._key(labels)
        self._values[key] = self._values.get(key, 0.0) + amount

    def dec(self, amount: float = 1.0, **labels: str) -> None:
        self.inc(-amount, **labels)


class Histogram(_Metric):
    kind = "histogram"

    def __init__(self, name: str, help: str, labels: Iterable[str] = (), buckets: Iterable[float] = DEFAULT_BUCKETS) -> None:
        super().__init__(name, help, labels)
        self.buckets = tuple(sorted(float(b) for b in buckets))
        self._series: dict[tuple[str, ...], tuple[list[int], list[float]]] = {}

    def observe(self, value: float, **labels: str) -> None:
        key = self._key(labels)
        counts, total = self._series.setdefault(key, ([0] * (len(self.buckets) + 1), [0.0]))
        counts[bisect_left(self.buckets, value)] += 1  # le is inclusive: value == bound counts
        total[0] += value

    def count(self, **labels: str) -> int:
        series = self._series.get(self._key(labels))
        return sum(series[0]) if series else 0

    def samples(self) -> list[str]:
        lines = []
        for key, (counts, total) in sorted(self._series.items()):
            cumulative = 0
            for bound, n in zip(self.buckets + (math.inf,), counts, strict=False):
                cumulative += n
                le = f'le="{_number(bound)}"'
                lines.append(f"{self.name}_bucket{_labels(self.labelnames, key, le)} {cumulative}")
            lines.append(f"{self.name}_sum{_labels(self.labelnames, key)} {_number(total[0])}")
            lines.append(f"{self.name}_count{_labels(self.labelnames, key)} {cumulative}")
        return lines


class Registry:
    def __init__(self) -> None:
        self._metrics: dict[str, _Metric] = {}

    def register(self, metric: M) -> M:
        """The metric itself, typed as given, so `registry.register(Gauge(...)).set` checks."""
        if metric.name in self._metrics:
            raise ValueError(f"metric {metric.name} is already registered")
        self._metrics[metric.name] = metric
        return metric

    def render(self) -> str:
        lines: list[str] = []
        for metric in self._metrics.values():
            lines += metric.header() + metric.samples()
        return "\n".join(lines) + "\n"


class Metrics:
    """The server's metrics, with one method per thing that happens, so callers need no names."""

    def __init__(self) -> None:
        r = self.registry = Registry()
        self.deliveries = r.register(Counter(
            "reviewer_webhook_deliveries_total",
            "Webhook deliveries by event and outcome (queued, ignored, invalid, duplicate).",
            ("event", "outcome")))
        self.rejected = r.register(Counter(
            "reviewer_webhook_rejected_total",
            "Webhook requests refused before storage, by HTTP status.", ("status",)))
        self.jobs = r.register(Counter(
            "reviewer_jobs_total", "Jobs by event and outcome (done, failed, superseded; interrupted: an attempt the "
            "store went away under, run again once it is back).",
            ("event", "outcome")))
        self.reviews = r.register(Counter(
            "reviewer_reviews_total",
            "Reviews by event, outcome (approved, findings, failed, skipped) and reason (why one failed or was "
            "skipped; empty when none). A failed review's job is `done` in reviewer_jobs_total.",
            ("event", "outcome", "reason")))
        self.queue_depth = r.register(Gauge(
            "reviewer_queue_depth", "Jobs waiting: received but not classified, or queued and not started.",
            ("state",)))
        self.running = r.register(Gauge("reviewer_jobs_running", "Jobs being handled now."))
        self.job_duration = r.register(Histogram(
            "reviewer_job_duration_seconds", "Time a job spent in the handler.", ("event",)))
        self.github_calls = r.register(Counter(
            "reviewer_github_calls_total", "GitHub API calls by HTTP status (or 'error').", ("status",)))
        self.pruned = r.register(Counter(
            "reviewer_deliveries_pruned_total", "Finished deliveries deleted after the retention period."))
        self.admin_reloads = r.register(Counter(
            "reviewer_admin_config_reloads_total", "Admin configuration reloads by result (ok, failed).",
            ("result",)))
        for state in ("received", "queued"):
            self.queue_depth.set(0, state=state)
        self.running.set(0)
        self.pruned.inc(0)
        self._operations(r)
        self._learnings_metrics()

    def _learnings_metrics(self) -> None:
        """Learnings (docs/reviews.md "Learnings"): what became of posted findings, read from the
        store at each scrape, so every process shows the same figures."""
        self.findings = self.registry.register(Gauge(
            "reviewer_findings", "Posted findings by what became of them (resolved, dismissed, open), the model's and "
            "the analyzers' alike; their sum is every finding posted.", ("state",)))
        for state in ("resolved", "dismissed", "open"):
            self.findings.set(0, state=state)

    def findings_by_state(self, counts: dict[str, int]) -> None:
        for state in ("resolved", "dismissed", "open"):
            self.findings.set(counts.get(state, 0), state=state)

    def delivery(self, event: str, outcome: str) -> None:
        self.deliveries.inc(event=event, outcome=outcome)

    def review(self, event: str, outcome: str, reason: str | None) -> None:
        self.reviews.inc(event=event, outcome=outcome, reason=reason or "")

    def github_call(self, status: int | str) -> None:
        """For the GitHub client: one call per response (its status) or failure ('error')."""
        self.github_calls.inc(status=str(status))

    def admin_reload(self, ok: bool) -> None:
        self.admin_reloads.inc(result="ok" if ok else "failed")

    # --- operations (issue #27): models, money, check runs, queue wait, the process ------------------
    # The job's queue hands these metrics to bot.telemetry as the job's observer (`model_call`,
    # `check_run`), so that the engine and the GitHub client count here without importing the server.

    def _operations(self, r: Registry) -> None:
        self.model_calls = r.register(Counter(
            "reviewer_model_calls_total", "Model calls by provider, model and outcome (ok, error, timeout, refused: "
            "the provider refused the lookups' tools).", ("provider", "model", "outcome")))
        self.model_tokens = r.register(Counter(
            "reviewer_model_tokens_total", "Tokens of model calls as the providers count them, by provider, model "
            "and kind (prompt, answer); an answer without counts adds none.", ("provider", "model", "kind")))
        self.model_cost = r.register(Counter(
            "reviewer_model_cost_total", "What model calls cost at the admin file's `price` (per million tokens, in "
            "its currency), for the models that declare one.", ("provider", "model")))
        self.check_runs = r.register(Counter(
            "reviewer_check_runs_total", "Check runs completed, by conclusion (success, failure, neutral).",
            ("conclusion",)))
        self._models: set[tuple[str, str]] = set()  # the (provider, model) labels given out
        self.verified = r.register(Counter(
            "reviewer_findings_verified_total", "Findings a verifier checked before posting (verify: true), by verdict: "
            "confirmed, refuted (not posted), unverified (it cited nothing, or lines it was not shown: posted as "
            "found), failed (no answer: posted as found).", ("verdict",)))
        self.refuted = r.register(Counter(
            "reviewer_findings_refuted_total", "Findings a verifier refuted, citing the lines it read: not posted."))
        for verdict in ("confirmed", "refuted", "unverified", "failed"):
            self.verified.inc(0, verdict=verdict)
        self.refuted.inc(0)
        self.queue_wait_seconds = r.register(Histogram(
            "reviewer_queue_wait_seconds", "Time a job waited between being queued and starting (first attempts).",
            ("event",)))

    def _model_label(self, provider: str, model: str) -> str:
        """The `model` label: a repository's `.reviewer.yaml` may name any model of a declared
        provider, so its values come from the repositories. The first MAX_MODEL_LABELS names keep
        theirs (cut at MAX_MODEL_CHARS); calls to any later one are counted as OTHER_MODEL."""
        named = (provider, model[:MAX_MODEL_CHARS])
        if named not in self._models:
            if len(self._models) >= MAX_MODEL_LABELS:
                return OTHER_MODEL
            self._models.add(named)
        return named[1]

    def model_call(self, call: ModelCall) -> None:
        """bot.telemetry.Observer: one model call."""
        model = self._model_label(call.provider, call.model)
        self.model_calls.inc(provider=call.provider, model=model, outcome=call.outcome)
        if call.prompt_tokens is not None:
            self.model_tokens.inc(call.prompt_tokens, provider=call.provider, model=model, kind="prompt")
        if call.answer_tokens is not None:
            self.model_tokens.inc(call.answer_tokens, provider=call.provider, model=model, kind="answer")
        if call.money is not None:
            self.model_cost.inc(call.money, provider=call.provider, model=model)

    def verdicts(self, counts: Mapping[str, int]) -> None:
        """bot.telemetry.Observer: how one review's verification went."""
        for verdict in ("confirmed", "refuted", "unverified", "failed"):
            self.verified.inc(counts.get(verdict, 0), verdict=verdict)
        self.refuted.inc(counts.get("refuted", 0))

    def check_run(self, conclusion: str) -> None:
        """bot.telemetry.Observer: one check run completed."""
        self.check_runs.inc(conclusion=conclusion)

    def queue_wait(self, seconds: float, event: str) -> None:
        self.queue_wait_seconds.observe(seconds, event=event)

    def render(self) -> str:
        own = process_metrics.render(process_metrics.sample())
        return self.registry.render() + "".join(line + "\n" for line in own)
