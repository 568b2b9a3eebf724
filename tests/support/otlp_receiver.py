"""A local OTLP/HTTP trace receiver: what an OpenTelemetry collector would get from the server.

A tiny aiohttp server on its own thread and event loop (the SDK's exporter posts from a thread of
its own with a blocking client, which must not wait on the test's loop), answering
`POST /v1/traces` as the OTLP/HTTP specification says: the body an `ExportTraceServiceRequest` in
protobuf (gzip when the exporter compresses), the answer an empty `ExportTraceServiceResponse`.
Every span received is kept decoded (name, ids in hex, parent, kind, attributes, status), and every
raw body too, so that a test can look for text that must never be exported.
"""

from __future__ import annotations

import asyncio
import gzip
import threading
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue


@dataclass(frozen=True)
class ReceivedSpan:
    name: str
    trace_id: str
    span_id: str
    parent_id: str  # "" for a root span
    kind: int
    attributes: dict[str, Any]
    status: int  # 0 unset, 1 ok, 2 error
    service: str


def _value(value: AnyValue) -> Any:
    which = value.WhichOneof("value")
    return None if which is None else getattr(value, which)


@dataclass
class OtlpReceiver:
    spans: list[ReceivedSpan] = field(default_factory=list)
    bodies: list[bytes] = field(default_factory=list)
    url: str = ""
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def start(self) -> OtlpReceiver:
        ready = threading.Event()
        self._loop = asyncio.new_event_loop()

        def serve() -> None:
            asyncio.set_event_loop(self._loop)
            app = web.Application()
            app.router.add_post("/v1/traces", self._traces)
            self._runner = web.AppRunner(app, access_log=None)
            self._loop.run_until_complete(self._runner.setup())
            site = web.TCPSite(self._runner, "127.0.0.1", 0)
            self._loop.run_until_complete(site.start())
            self.url = f"http://127.0.0.1:{self._runner.addresses[0][1]}"
            ready.set()
            self._loop.run_forever()
            self._loop.run_until_complete(self._runner.cleanup())
            self._loop.close()

        self._thread = threading.Thread(target=serve, name="otlp-receiver", daemon=True)
        self._thread.start()
        ready.wait(10)
        return self

    def close(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    async def _traces(self, request: web.Request) -> web.Response:
        if request.content_type != "application/x-protobuf":
            return web.Response(status=415, text="OTLP/HTTP protobuf only")
        body = await request.read()
        if request.headers.get("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
        export = ExportTraceServiceRequest()
        export.ParseFromString(body)
        spans = []
        for resource_spans in export.resource_spans:
            resource = {a.key: _value(a.value) for a in resource_spans.resource.attributes}
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    spans.append(ReceivedSpan(
                        span.name, span.trace_id.hex(), span.span_id.hex(), span.parent_span_id.hex(), span.kind,
                        {a.key: _value(a.value) for a in span.attributes}, span.status.code,
                        str(resource.get("service.name", ""))))
        with self._lock:
            self.bodies.append(body)
            self.spans += spans
        return web.Response(body=ExportTraceServiceResponse().SerializeToString(),
                            content_type="application/x-protobuf")

    def named(self, prefix: str) -> list[ReceivedSpan]:
        with self._lock:
            return [s for s in self.spans if s.name.startswith(prefix)]

    def everything(self) -> bytes:
        with self._lock:
            return b"".join(self.bodies)
