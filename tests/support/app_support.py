"""The app as GitHub sees it: `reviewer serve`'s application, with the real pipeline, served on
127.0.0.1 against the GitHub double; helpers to open pull requests and wait for the check run."""

from __future__ import annotations

import asyncio
import functools
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

from aiohttp import web
from cryptography.hazmat.primitives import serialization

from bot.server.app import make_app
from bot.server.process import pipeline_handler
from bot.server.settings import load_settings
from tests.support.github_double import App, GitHubDouble
from tests.support.server_support import wait_for
from tests.support.sqlite_template import migrated_sqlite

BASE_FILES = {
    "README.md": "# Example\n",
    "src/app.py": "def add(a, b):\n    return a + b\n",
    "docs/guide.md": "# Guide\n",
}


@asynccontextmanager
async def started_github(**options) -> AsyncIterator[GitHubDouble]:
    """The GitHub double (`options`: GitHubDouble's, such as an API prefix), started on 127.0.0.1;
    at the end it fails the test if the app broke GitHub's REST description."""
    double = GitHubDouble(**options)
    await double.start()
    try:
        yield double
    finally:
        await double.close()
    assert double.violations == [], "requests that GitHub's REST description refuses:\n" + "\n".join(double.violations)


def registered_app(github: GitHubDouble, private_key: str) -> App:
    """The app, registered with the double under the public half of `private_key` (PEM)."""
    return github.add_app(public_half(private_key))


@functools.lru_cache(maxsize=8)
def public_half(private_key: str) -> str:
    """The public key (PEM) of a private one: worked out once a run (parsing the private key
    checks its numbers, some 70 ms, and nearly every test registers the run's one app key)."""
    key = serialization.load_pem_private_key(private_key.encode(), password=None)
    return key.public_key().public_bytes(serialization.Encoding.PEM,
                                         serialization.PublicFormat.SubjectPublicKeyInfo).decode()


@dataclass
class World:
    github: GitHubDouble
    app: App
    url: str  # the app server
    tmp: Path
    repo: object = None
    installation: object = None

    def pull(self, base: dict[str, str | None] | None = None, head: dict[str, str | None] | None = None,
             **options):
        """A pull request whose base holds BASE_FILES laid over `base`, and whose branch changes `head`."""
        base_sha = self.repo.commit({**BASE_FILES, **(base or {})}, replace=True)
        branch = f"change-{uuid.uuid4().hex[:8]}"
        self.repo.commit(head or {"src/app.py": "def add(a, b):\n    return b + a\n"}, branch=branch, parent=base_sha)
        return self.repo.open_pull(head=branch, **options)

    async def deliver(self, event: str, payload: dict, delivery_id: str | None = None) -> tuple[int, str]:
        return await self.github.deliver(self.url + "/webhook", event, payload, secret=self.app.webhook_secret,
                                         delivery_id=delivery_id)

    async def opened(self, pr, action: str = "opened", delivery_id: str | None = None) -> tuple[int, str]:
        payload = self.github.payload("pull_request", action, installation=self.installation, pull=pr)
        return await self.deliver("pull_request", payload, delivery_id)

    def runs(self, pr) -> list:
        return [run for run in self.repo.check_runs.values() if run.head_sha == pr.head_sha]

    async def completed_run(self, pr, timeout: float = 20.0):
        """The pull request's completed Reviewer run (a bounded wait, not a timing assertion)."""
        async def done():
            finished = [run for run in self.runs(pr) if run.status == "completed"]
            return finished[0] if finished else None
        return await wait_for(done, timeout)


def installed(tmp_path: Path, github: GitHubDouble, github_app: App, repo: str = "octo-org/example") -> World:
    """A world whose repository has the app installed, with no app server yet (`url` is set by
    whoever starts one: `serving`, or a process of tests/support/process_support.py)."""
    world = World(github, github_app, "", tmp_path)
    world.repo = github.add_repo(repo)
    world.installation = github.install(github_app, world.repo)
    return world


def app_settings(world: World, private_key: str, admin_yaml: str | None = None, **extra: str):
    env = {"GITHUB_WEBHOOK_SECRET": world.app.webhook_secret, "GITHUB_APP_ID": str(world.app.id),
           "GITHUB_PRIVATE_KEY": private_key, "GITHUB_API_URL": world.github.url,
           **extra}
    if "REVIEWER_DATABASE_URL" not in env:  # (setdefault would copy the file for a PostgreSQL test too)
        env["REVIEWER_DATABASE_URL"] = migrated_sqlite(world.tmp / "reviewer.db")
    if admin_yaml is not None:
        path = world.tmp / "admin.yaml"
        path.write_text(admin_yaml)
        env["REVIEWER_ADMIN_CONFIG"] = str(path)
    return load_settings(env)


@asynccontextmanager
async def running_app(tmp_path: Path, github: GitHubDouble, github_app: App, private_key: str, *,
                      admin_yaml: str | None = None, repo: str = "octo-org/example", **extra: str) -> AsyncIterator[World]:
    world = installed(tmp_path, github, github_app, repo)
    async with serving(world, private_key, admin_yaml=admin_yaml, **extra):
        yield world


# aiohttp reads what a client still sends after an early answer (a refused upload's 413) for its
# lingering time, 10 s by default, before it closes: the tests' servers linger 1 s, as the tests
# scale the queue's timings down (a test of a refused endless body waited the whole 10 s)
LINGERING = 1.0


@asynccontextmanager
async def serving(world: World, private_key: str, *, admin_yaml: str | None = None,
                  handler_for=pipeline_handler, **extra: str) -> AsyncIterator[World]:
    """The app for an existing world (its database in `world.tmp`): a restart is a second `serving`."""
    app = make_app(app_settings(world, private_key, admin_yaml, **extra), handler_for)
    runner = web.AppRunner(app, access_log=None, lingering_time=LINGERING)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    world.url = f"http://127.0.0.1:{runner.addresses[0][1]}"
    try:
        yield world
    finally:
        await runner.cleanup()


async def settle(seconds: float = 0.3) -> None:
    """Give the queue a moment to pick up work that must NOT happen (used after a negative check)."""
    await asyncio.sleep(seconds)

