"""`POST /webhook`: verify, store, acknowledge — nothing else on the request path.

The checks run in docs/architecture.md's order: 413 body over 25 MiB (Content-Length first, then a cap while
reading), 401 missing or wrong `X-Hub-Signature-256` (constant-time comparison over the raw body),
415 a content type other than JSON, 400 a missing `X-GitHub-Event` or `X-GitHub-Delivery`; then
the raw body and headers are committed (group commit) and only then answered: 202, or 200 for
`ping`. The body is not parsed here; the dispatcher does that off the request path.

Until its signature checks out a body is anyone's, so what the server holds of such bodies is
bounded: a request without a well-formed signature header is refused before its body is read; the
signature is computed while the body streams in; and the bytes of bodies being read unverified,
across every request at once, are at most `unverified_bytes` (REVIEWER_WEBHOOK_UNVERIFIED_MIB):
past that a delivery is answered 503 with Retry-After (GitHub marks it failed, to be redelivered).
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
_CHUNK = 64 * 1024
RETRY_AFTER = 5

logger = log.get("webhook")


def signature(secret: bytes, body: bytes) -> str:
    """The `X-Hub-Signature-256` value GitHub sends for `body`."""
    return "sha256=" + hmac.new(secret, body, hashlib.sha256).hexdigest()


def verify_signature(secret: bytes, body: bytes, header: str | None) -> bool:
    match = _SIGNATURE.fullmatch(header or "")
    if not match:
        return False
    return hmac.compare_digest(signature(secret, body), "sha256=" + match.group(1).lower())


def _reject(metrics: Metrics, status: int, message: str, delivery: str | None = None,
            retry_after: int | None = None) -> web.Response:
    metrics.rejected.inc(status=str(status))
    logger.warning("webhook refused: %s", message, extra=log.fields(status=status, delivery=delivery))
    headers = {"Retry-After": str(retry_after)} if retry_after is not None else None
    return web.json_response({"error": message}, status=status, headers=headers)


class Unverified:
    """The bytes of webhook bodies being read before their signature is checked, across requests
    at once: at most `budget`."""

    def __init__(self, budget: int) -> None:
        self.budget, self.held = budget, 0

    def take(self, size: int) -> bool:
        if self.held + size > self.budget:
            return False
        self.held += size
        return True

    def give(self, size: int) -> None:
        self.held -= size


class _Busy(Exception):
    pass


class _TooLarge(Exception):
    pass


async def _signed_body(request: web.Request, secret: bytes, unverified: Unverified) -> tuple[bytes, str]:
    """The body, read within MAX_BODY and the unverified budget (_TooLarge, _Busy), with its
    signature computed as it came in. A length the request announces is taken from the budget
    before anything is read."""
    taken = 0
    try:
        if request.content_length is not None:
            if not unverified.take(request.content_length):
                raise _Busy
            taken = request.content_length
        mac = hmac.new(secret, digestmod=hashlib.sha256)
        chunks: list[bytes] = []
        size = 0
        async for chunk in request.content.iter_chunked(_CHUNK):
            size += len(chunk)
            if size > MAX_BODY:
                raise _TooLarge
            if size > taken:
                if not unverified.take(size - taken):
                    raise _Busy
                taken = size
            mac.update(chunk)
            chunks.append(chunk)
        return b"".join(chunks), "sha256=" + mac.hexdigest()
    finally:
        unverified.give(taken)


def make_handler(secret: bytes, store: DeliveryStore, metrics: Metrics, unverified_bytes: int = 64 * 1024 * 1024):
    unverified = Unverified(max(unverified_bytes, MAX_BODY))

    async def webhook(request: web.Request) -> web.Response:
        # Untrusted until the signature checks out: log nothing from the request before that.
        if request.content_length is not None and request.content_length > MAX_BODY:
            return _reject(metrics, 413, f"the body is over {MAX_BODY} bytes")
        headers = request.headers
        claimed = _SIGNATURE.fullmatch(headers.get("X-Hub-Signature-256") or "")
        if claimed is None:  # nothing to check the body against: never read
            return _reject(metrics, 401, "missing or wrong X-Hub-Signature-256")
        try:
            body, computed = await _signed_body(request, secret, unverified)
        except _TooLarge:
            return _reject(metrics, 413, f"the body is over {MAX_BODY} bytes")
        except _Busy:
            return _reject(metrics, 503, "too many webhook bodies are being read and checked at once; "
                                         f"try again in {RETRY_AFTER} s", retry_after=RETRY_AFTER)
        if not hmac.compare_digest(computed, "sha256=" + claimed.group(1).lower()):
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
