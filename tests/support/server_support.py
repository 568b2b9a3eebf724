"""Helpers for the server tests: a real server on 127.0.0.1, signed deliveries built from GitHub's
example payloads (tests/data/webhooks), and a small recording job handler injected at the seam."""

from __future__ import annotations

import asyncio
import copy
import hashlib
import hmac
import json
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web

from bot.events.jobs import Job, ReviewResult
from bot.server.app import RUNTIME, STORE, make_app
from bot.server.settings import load_settings
from bot.store.model import DeliveryStore
from tests.support.sqlite_template import migrated_sqlite

SECRET = "It's a Secret to Everybody"
EXAMPLES = Path(__file__).parent.parent / "data" / "webhooks"


def example(name: str) -> dict[str, Any]:
    """GitHub's example payload for `event.action` (or `event`)."""
    return copy.deepcopy(json.loads((EXAMPLES / f"{name}.json").read_text()))


def pr_payload(number: int, head: str, action: str = "synchronize", repo: str = "octo/app") -> dict[str, Any]:
    data = example("pull_request.synchronize")
    data["action"] = action
    data["number"] = data["pull_request"]["number"] = number
    data["pull_request"]["head"]["sha"] = head
    data["repository"]["full_name"] = repo
    return data


def sign(body: bytes, secret: str = SECRET) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


class Recorder:
    """A real job handler: records each job; holds a job while its delivery id is in `hold`;
    raises for a delivery id in `fail`; returns the review result `reviews` has for it (a review
    the pipeline would have run: bot.events.jobs.ReviewResult)."""

    def __init__(self) -> None:
        self.jobs: list[Job] = []
        self.hold: dict[str, asyncio.Event] = {}
        self.fail: dict[str, str] = {}
        self.reviews: dict[str, ReviewResult] = {}
        self.changed = asyncio.Event()

    async def __call__(self, job: Job) -> ReviewResult | None:
        self.jobs.append(job)
        self.changed.set()
        if job.delivery_id in self.hold:
            await self.hold[job.delivery_id].wait()
        if job.delivery_id in self.fail:
            raise RuntimeError(self.fail[job.delivery_id])
        return self.reviews.get(job.delivery_id)

    def ids(self) -> list[str]:
        return [job.delivery_id for job in self.jobs]


@dataclass
class Server:
    url: str
    app: web.Application
    http: aiohttp.ClientSession

    @property
    def store(self) -> DeliveryStore:
        return self.app[STORE]

    async def post(self, event: str | None, payload: dict | bytes, delivery: str | None = None, *,
                   secret: str | None = SECRET, content_type: str = "application/json",
                   headers: dict[str, str] | None = None) -> tuple[int, str]:
        body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        sent = {"Content-Type": content_type, "User-Agent": "GitHub-Hookshot/test"}
        if event is not None:
            sent["X-GitHub-Event"] = event
        sent["X-GitHub-Delivery"] = delivery or str(uuid.uuid4())
        if secret is not None:
            sent["X-Hub-Signature-256"] = sign(body, secret)
        sent.update(headers or {})
        async with self.http.post(self.url + "/webhook", data=body, headers=sent) as response:
            return response.status, await response.text()

    async def state(self, delivery: str) -> str | None:
        record = await self.store.delivery(delivery)
        return record["state"] if record else None

    async def wait_state(self, delivery: str, *states: str) -> dict:
        """Wait (bounded) until the delivery reaches one of `states`; returns its record."""
        async def reached() -> dict | None:
            record = await self.store.delivery(delivery)
            return record if record and record["state"] in states else None
        return await wait_for(reached)

    def queue_idle(self) -> bool:
        queue = self.app[RUNTIME].queue
        return queue is not None and queue.depth() == 0 and queue.running == 0


async def wait_for(check: Callable[[], Awaitable[Any]], timeout: float = 10.0) -> Any:
    """Poll until `check()` is truthy; a bounded wait, not a timing assertion."""
    async def loop() -> Any:
        while not (result := await check()):
            await asyncio.sleep(0.01)
        return result
    return await asyncio.wait_for(loop(), timeout)


def settings_for(tmp_path: Path, **extra: str):
    env = {"GITHUB_WEBHOOK_SECRET": SECRET, "REVIEWER_WORKERS": "4", **extra}
    if "REVIEWER_DATABASE_URL" not in env:  # (setdefault would copy the file for a PostgreSQL test too)
        env["REVIEWER_DATABASE_URL"] = migrated_sqlite(tmp_path / "reviewer.db")
    return load_settings(env)


@asynccontextmanager
async def running_server(tmp_path: Path, handler: Callable[[Job], Awaitable[None]], **extra: str) -> AsyncIterator[Server]:
    app = make_app(settings_for(tmp_path, **extra), lambda context: handler)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        async with aiohttp.ClientSession() as http:
            yield Server(f"http://127.0.0.1:{runner.addresses[0][1]}", app, http)
    finally:
        await runner.cleanup()
