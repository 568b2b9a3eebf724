"""Turning traces on from the standard `OTEL_*` variables, and off again (docs/configuration.md).

Traces are on when the environment names an OTLP endpoint (`OTEL_EXPORTER_OTLP_ENDPOINT` or
`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) or asks for the OTLP exporter (`OTEL_TRACES_EXPORTER=otlp`),
unless `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none`. Everything else — the endpoint's
headers, timeout, compression, the sampler, the batch sizes, the service name and resource
attributes — is read by OpenTelemetry's SDK and its OTLP/HTTP exporter themselves, as their
specification says, so no variable means something here that it does not mean elsewhere.

The SDK is imported only here, and only when traces are on.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from bot import telemetry

ENDPOINTS = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")


def wanted(environ: Mapping[str, str]) -> bool:
    """Whether the environment asks for traces (pure: the rule of the module's docstring)."""
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    exporters = {e.strip().lower() for e in environ.get("OTEL_TRACES_EXPORTER", "").split(",") if e.strip()}
    if "none" in exporters:
        return False
    return "otlp" in exporters or any(environ.get(name, "").strip() for name in ENDPOINTS)


class Traces:
    """The SDK's provider, kept to flush and stop it when the process ends."""

    def __init__(self, provider: Any) -> None:
        self._provider = provider

    def flush(self, timeout_ms: int = 5000) -> bool:
        return bool(self._provider.force_flush(timeout_ms))

    def shutdown(self) -> None:
        """Sends what is buffered, then turns traces off."""
        telemetry._install(None)
        self._provider.shutdown()


def configure(environ: Mapping[str, str] | None = None, service: str = "reviewer") -> Traces | None:
    """Traces on when the environment asks for them (the SDK's own variables read from `environ`,
    which is the process's); None, and nothing imported, when it does not."""
    env = os.environ if environ is None else environ
    if not wanted(env):
        return None
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import SERVICE_NAME, Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    # Resource.create reads OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES from the process; ours is
    # the default name only
    attributes = {} if env.get("OTEL_SERVICE_NAME") else {SERVICE_NAME: service}
    provider = TracerProvider(resource=Resource.create(attributes))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    telemetry._install(provider.get_tracer("reviewer"))
    return Traces(provider)
