"""Structured logs: one JSON object per line, with the delivery id when there is one, never a secret.

A line logged inside a trace (bot/telemetry: when the OTEL_* variables turn traces on) carries
its trace id as `trace`, so a log line leads to its trace and back.

Secrets are kept out twice: the code never passes them to a logger, and every line is scrubbed
before it is written — of the values the server was configured with (registered at start), of
every model provider key the engine resolves (registered as it resolves them), and of anything
shaped like a GitHub token, a bearer/token authorisation or a PEM block — because an exception
text from a library can echo a request header. The registry is `bot.secrets.redaction`, below both the
server and the engine, so the engine registers keys without importing the server.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from contextvars import ContextVar
from typing import IO

from bot import telemetry
from bot.secrets.redaction import REDACTED, Redactor, redact, register_secret

__all__ = ["REDACTED", "Redactor", "redact", "register_secret", "configure", "get", "error_text", "fields",
           "current_delivery", "JsonFormatter", "LOGGER_NAME"]

LOGGER_NAME = "reviewer"

# The delivery a job works for: set by the queue around each job, so that every line the job's
# code logs (pipeline, engine, GitHub client) carries it without passing it down.
current_delivery: ContextVar[str | None] = ContextVar("current_delivery", default=None)

# Attributes every LogRecord has; anything else came from `extra=` and is a structured field.
_STANDARD = set(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {"message", "asctime", "taskName"}

class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        data: dict[str, object] = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created)) + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        delivery = current_delivery.get()
        if delivery is not None:
            data["delivery"] = delivery
        trace = telemetry.trace_id()
        if trace is not None:
            data["trace"] = trace
        for key, value in record.__dict__.items():
            if key not in _STANDARD and not key.startswith("_"):
                data[key] = value
        if record.exc_info:
            data["exc"] = self.formatException(record.exc_info)
        return redact(json.dumps(data, default=str, ensure_ascii=False))


# Libraries whose warnings reach our log as JSON lines too (else Python's last-resort handler writes
# them raw to stderr, which a log pipeline cannot read): the database driver's pool and the job
# queue. Only their warnings and errors: their debug lines are theirs, not a delivery's steps.
LIBRARIES = ("psycopg", "procrastinate")


def configure(stream: IO[str] | None = None, level: int = logging.INFO) -> logging.Handler:
    """Send the `reviewer` logger (and aiohttp's, and LIBRARIES' warnings) to `stream` as JSON
    lines; returns the handler."""
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(JsonFormatter())
    for name in (LOGGER_NAME, "aiohttp", *LIBRARIES):
        logger = logging.getLogger(name)
        for old in [h for h in logger.handlers if isinstance(h.formatter, JsonFormatter)]:
            logger.removeHandler(old)
        logger.addHandler(handler)
        logger.setLevel(max(level, logging.WARNING) if name in LIBRARIES else level)
        logger.propagate = False
    return handler


def get(name: str) -> logging.Logger:
    return logging.getLogger(f"{LOGGER_NAME}.{name}")


def error_text(exc: BaseException, limit: int = 2000) -> str:
    """The text stored and logged for a failed job: type and message, scrubbed and bounded."""
    text = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    return redact(text)[:limit]


def fields(**values: object) -> dict[str, object]:
    """`extra=` without the None values, so lines carry only what is known."""
    return {k: v for k, v in values.items() if v is not None}


