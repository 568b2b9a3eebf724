"""What a job handler may use, in a module of its own.

`ServerContext` is made by the app (bot/server/app.py) and read by the admin API, the delivery
admin and the console; defined here rather than in app.py so that none of them imports the app
that imports them (no cycle between the app and the modules it wires: .importlinter `acyclic`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, Protocol

import aiohttp
from aiohttp import web

from bot.events.jobs import Handler
from bot.github import GitHubApp
from bot.server.admin_reload import AdminConfigHolder
from bot.server.metrics import Metrics
from bot.server.settings import Settings
from bot.store.model import DeliveryStore
from bot.store.stores import Stores


@dataclass
class ServerContext:
    """What a job handler may use: settings (secrets inside `Secret`), the admin configuration
    holder (read `.current` per job), metrics (`metrics.github_call(status)`), the store, one
    shared HTTP session for outgoing calls, every store of the process (on one pool: the review
    memory, the indexes, the uploads... of bot/store/stores.py) and the GitHub App client (None without an app id and
    private key: nothing can be done on GitHub then)."""

    settings: Settings
    admin: AdminConfigHolder
    metrics: Metrics
    store: DeliveryStore
    http: aiohttp.ClientSession
    stores: Stores
    github: GitHubApp | None = None


HandlerFactory = Callable[[ServerContext], Handler]

Role = Literal["all", "web", "worker"]  # serve, serve --no-workers, worker


class AppFactory(Protocol):
    """What builds a process's app: bot/server/core.py `core_app` (a worker), bot/server/app.py
    `make_app` (a web process)."""

    def __call__(self, settings: Settings, handler_for: HandlerFactory, *, admin: AdminConfigHolder | None = None,
                 metrics: Metrics | None = None, role: Role = "all") -> web.Application: ...
