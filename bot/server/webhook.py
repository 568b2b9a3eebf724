"""`POST /webhook`: verify, store, acknowledge — nothing else on the request path.

The checks run in docs/architecture.md's order: 413 body over 25 MiB (Content-Length first, then a cap while
reading), 401 missing or wrong `X-Hub-Signature-256` (constant-time comparison over the raw body),
415 a content type other than JSON, 400 a missing `X-GitHub-Event` or `X-GitHub-Delivery`; then
the raw body and headers are committed (group commit) and only then answered: 202, or 200 for
`ping`. The body is not parsed here; the dispatcher does that off the request path.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import time

from aiohttp import web

from bot import telemetry
from bot.server import logging as log
from bot.server.metrics import Metrics
from bot.store.model import DeliveryStore, Incoming, StoreUnavailable

MAX_BODY = 25 * 1024 * 1024
KEPT_HEADERS = ("X-GitHub-Event", "X-GitHub-Delivery", "X-GitHub-Hook-ID",
                "X-GitHub-Hook-Installation-Target-ID", "X-GitHub-Hook-Installation-Target-Type",
                "User-Agent", "Content-Type")
_EVENT = re.compile(r"[a-z_]{1,64}")
_DELIVERY = re.compile(r"[A-Za-z0-9._:-]{1,128}")
_SIGNATURE = re.compile(r"sha256=([0-9a-fA-F]{64})")

logger = log.get("webhook")


def signature(secret: bytes, body: bytes) -> str:
    """The `X-Hub-Signature-256` value GitHub sends for `body`."""
    return "sha256=" + hmac.new(secret, body, hashlib.sha256).hexdigest()


def verify_signature(secret: bytes, body: bytes, header: str | None) -> bool:
    match = _SIGNATURE.fullmatch(header or "")
    if not match:
        return False
    return hmac.compare_digest(signature(secret, body), "sha256=" + match.group(1).lower())


def _reject(metrics: Metrics, status: int, message: str, delivery: str | None = None) -> web.Response:
    metrics.rejected.inc(status=str(status))
    logger.warning("webhook refused: %s", message, extra=log.fields(status=status, delivery=delivery))
    return web.json_response({"error": message}, status=status)


def make_handler(secret: bytes, store: DeliveryStore, metrics: Metrics):
    async def webhook(request: web.Request) -> web.Response:
        # Untrusted until the signature checks out: log nothing from the request before that.
        if request.content_length is not None and request.content_length > MAX_BODY:
            return _reject(metrics, 413, f"the body is over {MAX_BODY} bytes")
        try:
            body = await request.read()  # the app's client_max_size caps chunked bodies too
        except web.HTTPRequestEntityTooLarge:
            return _reject(metrics, 413, f"the body is over {MAX_BODY} bytes")
        headers = request.headers
        if not verify_signature(secret, body, headers.get("X-Hub-Signature-256")):
            return _reject(metrics, 401, "missing or wrong X-Hub-Signature-256")
        delivery = headers.get("X-GitHub-Delivery")
        if request.content_type != "application/json":
            return _reject(metrics, 415, "the content type must be application/json", delivery)
        event = headers.get("X-GitHub-Event")
        if not event or not delivery:
            return _reject(metrics, 400, "missing X-GitHub-Event or X-GitHub-Delivery", delivery)
        if not _EVENT.fullmatch(event) or not _DELIVERY.fullmatch(delivery):
            return _reject(metrics, 400, "X-GitHub-Event or X-GitHub-Delivery is malformed")
        kept = {name: headers[name] for name in KEPT_HEADERS if name in headers}
        # A trace of its own per delivery (bot.telemetry), continued by its job in whichever process
        with telemetry.new_trace("webhook", delivery=delivery, event=event, bytes=len(body)) as span:
            try:
                new = await store.accept(Incoming(delivery, event, kept, body, time.time(), telemetry.traceparent()))
            except StoreUnavailable as exc:  # never 202 for what is not stored: GitHub will redeliver
                span.fail("the delivery could not be stored")
                return _reject(metrics, 503, f"the delivery cannot be stored right now ({exc})", delivery)
            span.set(duplicate=not new)
        if not new:
            metrics.delivery(event, "duplicate")
            logger.info("duplicate delivery acknowledged", extra={"delivery": delivery, "event": event})
        else:
            logger.debug("delivery stored", extra={"delivery": delivery, "event": event, "bytes": len(body)})
        status = 200 if event == "ping" else 202
        return web.Response(status=status, text="duplicate\n" if not new else "accepted\n")

    return webhook
