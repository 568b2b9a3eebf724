"""The instance admin configuration (`REVIEWER_ADMIN_CONFIG`), loaded at start and reloaded on change.

Jobs read `holder.current` when they start, so a reload applies to the next job and never changes
one half-way. A bad file at start stops the server (the caller prints the errors); a bad reload keeps
the configuration in force, logs the errors and counts a failed reload. Change is detected by
polling the file's mtime and size — simple, and it works on every filesystem and for the
rename-into-place a ConfigMap update does. With an `audit`, each reload and each refusal is an
entry of the audit log (actor "server"; one per process that reloaded, named in its details), with
the names of the fields that changed.
"""

from __future__ import annotations

import asyncio
import os
import socket
import time
from collections.abc import Callable
from typing import Any

from bot.audit.log import SERVER_ACTOR, Audit, changed_fields
from bot.documents.diagnostics import Diagnostic, format_text
from bot.loops.pause import pause
from bot.server import logging as log
from bot.server.metrics import Metrics

logger = log.get("admin")
Loader = Callable[[str, str], "tuple[Any | None, list[Diagnostic]]"]


def default_loader(text: str, path: str) -> tuple[Any | None, list[Diagnostic]]:
    from bot.config.admin import load_admin_config  # imported late: the server starts without it if unset

    return load_admin_config(text, path)


class AdminConfigError(Exception):
    """The admin configuration is invalid at start; `lines` are its errors, `path:line:col: code: message`."""

    def __init__(self, lines: list[str]) -> None:
        super().__init__("\n".join(lines))
        self.lines = lines


class AdminConfigHolder:
    def __init__(self, path: str | None, metrics: Metrics | None = None, loader: Loader = default_loader) -> None:
        self.path = path
        self.metrics = metrics
        self.loader = loader
        self.current: Any | None = None  # an AdminConfig, or None when no admin file is configured
        self._stamp: tuple[int, int] | None = None
        # What the console's overview shows: when a configuration was last put in force, and the
        # errors of the last load that failed (cleared by the next one that succeeds).
        self.loaded_at: float | None = None
        self.last_errors: list[str] = []
        self.last_error_at: float | None = None
        self.audit: Audit | None = None  # records reloads and refusals (set by the app)

    def _read(self) -> tuple[Any | None, list[str], tuple[int, int] | None]:
        """(config, error lines, stamp); config is None when the file is bad."""
        assert self.path is not None
        try:
            stat = os.stat(self.path)
            with open(self.path, encoding="utf-8") as f:
                text = f.read()
        except (OSError, UnicodeDecodeError) as exc:
            return None, [f"{self.path}: cannot read the admin configuration ({exc.__class__.__name__}: "
                          f"{getattr(exc, 'strerror', None) or exc})"], None
        config, diagnostics = self.loader(text, self.path)
        if diagnostics or config is None:
            lines = format_text(self.path, diagnostics) or [f"{self.path}: the admin configuration is invalid"]
            return None, lines, (stat.st_mtime_ns, stat.st_size)
        return config, [], (stat.st_mtime_ns, stat.st_size)

    @classmethod
    def loaded(cls, path: str | None, metrics: Metrics | None = None) -> AdminConfigHolder:
        """A holder with the file loaded; raises AdminConfigError when it is invalid."""
        holder = cls(path, metrics)
        errors = holder.load_initial()
        if errors:
            raise AdminConfigError(errors)
        return holder

    def load_initial(self) -> list[str]:
        """Load at start; returns the error lines (empty when loaded, or when no file is set)."""
        if self.path is None:
            return []
        config, errors, stamp = self._read()
        if config is not None:
            self.current, self._stamp, self.loaded_at = config, stamp, time.time()
            logger.info("admin configuration loaded", extra={"path": self.path})
        return errors

    def _changed(self) -> bool:
        if self.path is None:
            return False  # no file: nothing to watch
        try:
            stat = os.stat(self.path)
        except OSError:
            return self._stamp is not None  # removed: try (and fail) once, then wait for it to return
        return (stat.st_mtime_ns, stat.st_size) != self._stamp

    def reload_if_changed(self) -> bool | None:
        """None when unchanged; True when a new configuration is in force; False when it was bad."""
        if self.path is None or not self._changed():
            return None
        config, errors, stamp = self._read()
        self._stamp = stamp
        if config is None:
            self.last_errors, self.last_error_at = errors, time.time()
            logger.error("admin configuration reload failed; keeping the previous one",
                         extra={"path": self.path, "errors": errors})
            if self.metrics:
                self.metrics.admin_reload(False)
            return False
        self.current, self.loaded_at, self.last_errors, self.last_error_at = config, time.time(), [], None
        logger.info("admin configuration reloaded", extra={"path": self.path})
        if self.metrics:
            self.metrics.admin_reload(True)
        return True

    async def watch(self, interval: float) -> None:
        while True:
            await pause(interval)
            before = self.current
            try:
                reloaded = await asyncio.to_thread(self.reload_if_changed)
            except Exception:  # a loader bug must not end the watch
                logger.exception("admin configuration reload crashed; keeping the previous one")
                if self.metrics:
                    self.metrics.admin_reload(False)
                continue
            if reloaded is not None and self.audit is not None and self.path is not None:
                await self.audit.record(SERVER_ACTOR, "admin-config.reload" if reloaded else "admin-config.refuse",
                                        self.path, ip=None, details=self._audit_details(before, reloaded))

    def _audit_details(self, before: Any, reloaded: bool) -> dict[str, Any]:
        """Which process, and the names of the fields that changed (reloaded) or how many errors the
        file has (refused): never a value."""
        details: dict[str, Any] = {"process": f"{socket.gethostname()}:{os.getpid()}"}
        if reloaded:
            details["fields"] = changed_fields(getattr(before, "data", None), getattr(self.current, "data", None))
        else:
            details["errors"] = len(self.last_errors)
        return details
