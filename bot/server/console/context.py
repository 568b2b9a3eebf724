"""What the console's pages read: the server's stores and state, handed over by `setup_console`
(the console never imports the app module, which imports it)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bot.auth.guard import Gate
from bot.auth.store import AuthStore
from bot.connectors.store import ConnectorStore
from bot.server.admin_reload import AdminConfigHolder
from bot.server.console.timeline import TimelineStore
from bot.server.store import Store


@dataclass
class Console:
    gate: Gate
    store: Store
    connectors: ConnectorStore
    signins: AuthStore
    admin: AdminConfigHolder
    timeline: TimelineStore
    secrets_dir: str | None
    session_ttl: int
    runtime: Callable[[], Any]  # the app's Runtime: its queue and server context once started
