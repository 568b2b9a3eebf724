"""What the console's pages read: the server's stores and state, handed over by `setup_console`
(the console never imports the app module, which imports it)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bot.audit.log import Audit
from bot.auth.store import AuthStore
from bot.connectors.controller import Reconciler
from bot.reviews.memory import ReviewMemory
from bot.server.admin_reload import AdminConfigHolder
from bot.server.signin.gate import Gate
from bot.store.model import ConnectorStore, DeliveryStore, TimelineStore


@dataclass
class Console:
    gate: Gate
    store: DeliveryStore
    connectors: ConnectorStore
    signins: AuthStore
    admin: AdminConfigHolder
    timeline: TimelineStore
    reconciler: Reconciler  # what an applied connector is checked against (the resource API's too)
    session_ttl: int
    runtime: Callable[[], Any]  # the app's Runtime: its queue and server context once started
    memory: ReviewMemory | None = None  # what reviews remember of pull requests (their findings)
    github_url: str = "https://github.com"  # where the links to pull requests, commits and runs go (GITHUB_URL)
    audit: Audit | None = None  # the audit log: what the console changes is recorded there
