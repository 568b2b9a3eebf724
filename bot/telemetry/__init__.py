"""Traces and the per-job observer of model calls, behind a thin API the pipeline uses.

The pipeline, the engine and the GitHub client call `span(...)`, `model_call(...)` and read
`trace_id()`; none imports OpenTelemetry's SDK. `bot.telemetry.setup.configure` turns traces on
from the standard `OTEL_*` variables (docs/configuration.md): until it does, `span` yields a
do-nothing span without touching OpenTelemetry at all, so a server without those variables pays a
function call per span and nothing else.

One trace per delivery: the webhook opens a root span (`new_trace`), its W3C `traceparent` is
stored with the delivery, and the job that handles it continues the trace (`resumed`), whichever
process runs it. A span's attributes are names, counts and outcomes: never a prompt, an answer, a
token or a key (the callers pass none, and `_clean` keeps only scalars).

A model call is also reported to the job's observer (`observing`), which the server's queue sets to
its metrics around each job: the engine counts calls, tokens and money without importing the server.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Protocol

__all__ = ["ModelCall", "Observer", "Span", "check_run", "enabled", "fail_current", "model_call", "new_trace", "observing", "resumed", "span",
           "trace_id", "traceparent"]

_state: dict[str, Any] = {"tracer": None}  # the SDK's tracer, once bot.telemetry.setup configured one


def enabled() -> bool:
    return _state["tracer"] is not None


def _install(tracer: Any) -> None:
    """For bot.telemetry.setup: the tracer every span comes from from now on (None: off)."""
    _state["tracer"] = tracer


Scalar = str | int | float | bool
MAX_TEXT = 256  # a string attribute's and a span name's most characters (a model's name is a repository's)


def _clean(attributes: dict[str, Any]) -> dict[str, Scalar]:
    """The attributes OpenTelemetry takes: scalars, None dropped (a value is never a text blob:
    strings are cut at 256 characters, so a caller's mistake cannot ship a prompt)."""
    out: dict[str, Scalar] = {}
    for key, value in attributes.items():
        if value is None:
            continue
        if isinstance(value, str):
            out[key] = value[:MAX_TEXT]
        elif isinstance(value, bool | int | float):
            out[key] = value
        else:
            out[key] = str(value)[:MAX_TEXT]
    return out


class Span:
    """A span the caller may add attributes to, or mark failed; does nothing when traces are off."""

    def __init__(self, span: Any = None) -> None:
        self._span = span

    def set(self, **attributes: Any) -> None:
        if self._span is not None:
            self._span.set_attributes(_attrs(attributes))

    def fail(self, description: str) -> None:
        """Marks the span an error, with a short description (no secret: the caller's own words)."""
        if self._span is not None:
            from opentelemetry.trace import Status, StatusCode

            self._span.set_status(Status(StatusCode.ERROR, description[:256]))


_NOOP = Span()
# An exception's text may quote what it was about (a provider's error can echo its input): spans
# record the exception's type only (`_entered`), never its message or traceback.
_QUIET = {"record_exception": False, "set_status_on_exception": False}


@contextlib.contextmanager
def _entered(started: Any) -> Iterator[Span]:
    """The span `started` (an SDK `start_as_current_span` context) as ours; an exception marks it
    failed with its type alone, and goes on up."""
    with started as current:
        wrapped = Span(current)
        try:
            yield wrapped
        except BaseException as exc:
            wrapped.fail(type(exc).__name__)
            raise


def _attrs(attributes: dict[str, Any]) -> dict[str, Scalar]:
    # `name=value` keyword arguments; dots in attribute names are spelt with `__` (`gen_ai__system`)
    return _clean({key.replace("__", "."): value for key, value in attributes.items()})


@contextlib.contextmanager
def span(name: str, **attributes: Any) -> Iterator[Span]:
    """A child of the current span (an exception ends it as an error, and goes on up)."""
    tracer = _state["tracer"]
    if tracer is None:
        yield _NOOP
        return
    with _entered(tracer.start_as_current_span(name[:MAX_TEXT], attributes=_attrs(attributes), **_QUIET)) as current:
        yield current


@contextlib.contextmanager
def new_trace(name: str, **attributes: Any) -> Iterator[Span]:
    """A root span, the start of a trace of its own whatever context the caller is in (one trace
    per delivery, even where a proxy sends a `traceparent` of its own)."""
    tracer = _state["tracer"]
    if tracer is None:
        yield _NOOP
        return
    from opentelemetry import context
    from opentelemetry.trace import SpanKind

    with _entered(tracer.start_as_current_span(name[:MAX_TEXT], context=context.Context(), kind=SpanKind.SERVER,
                                               attributes=_attrs(attributes), **_QUIET)) as current:
        yield current


@contextlib.contextmanager
def resumed(parent: str | None, name: str, **attributes: Any) -> Iterator[Span]:
    """A span continuing the trace whose W3C `traceparent` is `parent` (a job continuing its
    delivery's trace in any process); a root span when there is none or it is malformed."""
    tracer = _state["tracer"]
    if tracer is None:
        yield _NOOP
        return
    from opentelemetry import context
    from opentelemetry.trace import SpanKind
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

    carrier = {"traceparent": parent} if parent else {}
    parent_context = TraceContextTextMapPropagator().extract(carrier, context=context.Context())
    with _entered(tracer.start_as_current_span(name[:MAX_TEXT], context=parent_context, kind=SpanKind.CONSUMER,
                                               attributes=_attrs(attributes), **_QUIET)) as current:
        yield current


def traceparent() -> str | None:
    """The current span's W3C `traceparent`, to store with the work it hands on (None: traces off)."""
    if _state["tracer"] is None:
        return None
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

    carrier: dict[str, str] = {}
    TraceContextTextMapPropagator().inject(carrier)
    return carrier.get("traceparent")


def trace_id() -> str | None:
    """The current trace's id (32 hex digits), for the log lines; None when traces are off."""
    if _state["tracer"] is None:
        return None
    from opentelemetry import trace

    context = trace.get_current_span().get_span_context()
    return format(context.trace_id, "032x") if context.is_valid else None


# --- model calls ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ModelCall:
    """One request to a model provider, as the metrics count it: never its prompt or key."""

    provider: str
    model: str
    outcome: str  # ok | error | timeout | refused
    prompt_tokens: int | None = None  # the provider's own counts; None when it gave none
    answer_tokens: int | None = None
    money: float | None = None  # at the admin file's `price`, when the provider declares one


class Observer(Protocol):
    def model_call(self, call: ModelCall) -> None: ...

    def check_run(self, conclusion: str) -> None: ...

    def verdicts(self, counts: Mapping[str, int]) -> None: ...


_observer: ContextVar[Observer | None] = ContextVar("reviewer_telemetry_observer", default=None)


@contextlib.contextmanager
def observing(observer: Observer | None) -> Iterator[None]:
    """Reports the model calls made inside (this task and those it starts) to `observer`."""
    token = _observer.set(observer)
    try:
        yield
    finally:
        _observer.reset(token)


def model_call(call: ModelCall, current: Span = _NOOP) -> None:
    """Records a model call: on its span (`current`) and to the job's observer."""
    current.set(gen_ai__usage__input_tokens=call.prompt_tokens, gen_ai__usage__output_tokens=call.answer_tokens,
                reviewer__outcome=call.outcome)
    if call.outcome != "ok":
        current.fail(f"model call {call.outcome}")
    observer = _observer.get()
    if observer is not None:
        observer.model_call(call)


def verdicts(**counts: int) -> None:
    """Records how a review's verification went: findings confirmed, refuted, not verified,
    failed (bot/engine/verify.py)."""
    observer = _observer.get()
    if observer is not None:
        observer.verdicts(counts)


def check_run(conclusion: str) -> None:
    """Records a check run completed with `conclusion` (success, failure, neutral, …)."""
    span_now = _current()
    span_now.set(reviewer__check_run__conclusion=conclusion)
    observer = _observer.get()
    if observer is not None:
        observer.check_run(conclusion)


def _current() -> Span:
    if _state["tracer"] is None:
        return _NOOP
    from opentelemetry import trace

    return Span(trace.get_current_span())


def fail_current(description: str) -> None:
    """Marks the current span an error (a job that failed)."""
    _current().fail(description)
