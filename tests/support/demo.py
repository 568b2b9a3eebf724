"""`make run` and `make demo`: the app, exactly as `reviewer serve` runs it, against local
stand-ins — no account.

1. A GitHub double (the one the tests use) serves GitHub's REST API on 127.0.0.1 and holds an
   example repository with a `.reviewer.yaml`; an OpenAI-compatible stand-in answers as the model,
   with one scripted finding.
2. `reviewer serve` starts as its own process on 127.0.0.1, configured through the environment
   like in production (app id, a private key made for this run, the webhook secret,
   GITHUB_API_URL pointing at the double, an admin file declaring the stand-in model provider, a
   random break-glass token).
3. A pull request is opened and GitHub's signed `pull_request.opened` delivery is sent.
4. The check run, the review and the summary comment the app posted are printed.

`make run` stops there. `make demo` (`python -m tests.support.demo --keep-running`) goes on
(tests/support/demo_console.py): the installation's repositories, a learning, a failed review,
then a line `Console: URL` with a one-time link that signs a browser in to the console, and serves
until Ctrl-C.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from tests.support import demo_console
from tests.support.chat_double import ChatDouble, findings
from tests.support.github_double import GitHubDouble

ROOT = Path(__file__).resolve().parent.parent.parent

REVIEWER_YAML = """\
# yaml-language-server: $schema=./.reviewer.schema.json
feedback: standard
approve: true
ignore: ["**/*.lock"]
rules:
  - id: money-as-integers
    rule: Amounts of money are integers of cents, never floats.
    paths: ["src/billing/**"]
  - id: docs-friendly
    rule: Documentation is short and friendly.
    paths: ["docs/**"]
context:
  - path: docs/architecture.md
    description: How billing talks to the ledger.
    paths: ["src/billing/**"]
"""

BASE = {
    ".reviewer.yaml": REVIEWER_YAML,
    "README.md": "# Shop\n",
    "docs/architecture.md": "# Architecture\nBilling posts entries to the ledger.\n",
    "src/billing/invoice.py": "def total(lines):\n    return sum(line.cents for line in lines)\n",
    "poetry.lock": "# lock\n",
}
HEAD = {
    "src/billing/invoice.py": ("def total(lines, discount=0):\n"
                               "    return sum(line.cents for line in lines) - discount\n"),
    "poetry.lock": "# lock, updated\n",
}
ADMIN_YAML = """\
providers:
  stand-in:
    type: openai
    baseUrl: {base_url}
    apiKey: env://DEMO_MODEL_KEY
    timeout: 10
defaults:
  models:
    review: stand-in/reviewer-demo
"""
FINDING = {"path": "src/billing/invoice.py", "startLine": 1, "endLine": 1, "severity": "minor",
           "category": "maintainability", "message": "Say in the signature that `discount` is in cents.",
           "suggestedFix": "def total(lines, discount_cents=0):", "rules": ["money-as-integers"]}


def _private_key() -> tuple[str, str]:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption()).decode()
    public = key.public_key().public_bytes(serialization.Encoding.PEM,
                                           serialization.PublicFormat.SubjectPublicKeyInfo).decode()
    return private, public


def _start_server(env: dict[str, str], workdir: Path) -> tuple[subprocess.Popen, int]:
    """`reviewer serve` in a process of its own; its JSON log line says where it listens. Its log
    is copied to workdir/server.log for as long as it runs (an unread pipe would block it)."""
    proc = subprocess.Popen([sys.executable, "-m", "bot", "serve"], env=env, cwd=workdir,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    log = open(workdir / "server.log", "w", encoding="utf-8")
    for line in proc.stderr:
        log.write(line)
        if line.startswith("{") and json.loads(line).get("msg") == "listening":
            threading.Thread(target=_copy, args=(proc.stderr, log), daemon=True).start()
            return proc, int(json.loads(line)["port"])
    log.close()
    raise SystemExit(f"reviewer serve stopped before listening (exit {proc.wait()}); see {workdir / 'server.log'}")


def _copy(source, target) -> None:
    with target:
        for line in source:
            target.write(line)
            target.flush()


async def _wait(check, what: str, timeout: float = 60.0):
    async def loop():
        while not (result := check()):
            await asyncio.sleep(0.05)
        return result
    try:
        return await asyncio.wait_for(loop(), timeout)
    except TimeoutError:
        raise SystemExit(f"gave up waiting for {what} after {timeout:.0f} s") from None


def _print_run(run, pr) -> None:
    print(f"\nCheck run “{run.name}” on {run.head_sha[:7]}: {run.status}, conclusion {run.conclusion}")
    print(f"Title: {run.output.get('title')}\n")
    print(textwrap.indent(run.output.get("summary") or "", "    "))
    for note in run.annotations:
        print(f"  annotation {note['path']}:{note['start_line']} [{note['annotation_level']}] {note['message']}")
    for review in pr.reviews:
        print(f"\nReview by {review.user.login}: {review.state} on {review.commit_id[:7]}")
        for comment in review.comments:
            print(textwrap.indent(f"{comment.path}:{comment.line}\n{comment.body}", "    "))


@dataclass
class World:
    """The stand-ins, and the app serving against them."""

    github: GitHubDouble
    chat: ChatDouble
    app: Any
    installation: Any
    shop: Any
    payments: Any
    workdir: Path
    admin_token: str
    private_key: str = field(repr=False, default="")
    url: str = ""
    first_pull: Any = None


async def _world() -> World:
    github, chat = GitHubDouble(), ChatDouble(api_key="demo-key")
    await github.start()
    await chat.start()
    chat.answer("reviewer-demo", findings(FINDING))
    demo_console.busy_model(chat)
    private, public = _private_key()
    app = github.add_app(public, slug="reviewer", webhook_secret="demo-webhook-secret")
    shop = github.add_repo("example-org/shop")
    payments = demo_console.payments_repo(github)
    installation = github.install(app, shop, payments)
    base = shop.commit(BASE)
    shop.commit(HEAD, branch="discounts", parent=base, message="Add discounts")
    workdir = Path(tempfile.mkdtemp(prefix="reviewer-demo-"))
    return World(github, chat, app, installation, shop, payments, workdir, demo_console.admin_token(), private)


def _environment(world: World) -> dict[str, str]:
    (world.workdir / "admin.yaml").write_text(ADMIN_YAML.format(base_url=world.chat.base_url))
    # this shell's own Reviewer settings stay out (a REVIEWER_PUBLIC_URL would move the console's link),
    # but for the log's (REVIEWER_LOG_LEVEL=DEBUG make demo shows each step in server.log)
    kept = {k: v for k, v in os.environ.items()
            if not k.startswith(("GITHUB_", "REVIEWER_", "PORT")) or k in ("REVIEWER_LOG_LEVEL", "REVIEWER_ACCESS_LOG")}
    return {**kept, "PYTHONPATH": str(ROOT), "PORT": "0", "REVIEWER_HOST": "127.0.0.1",
            "GITHUB_APP_ID": str(world.app.id), "GITHUB_PRIVATE_KEY": world.private_key,
            "GITHUB_WEBHOOK_SECRET": world.app.webhook_secret, "GITHUB_API_URL": world.github.url,
            "REVIEWER_DATABASE_URL": f"sqlite:///{world.workdir / 'reviewer.db'}",
            "REVIEWER_ADMIN_CONFIG": str(world.workdir / "admin.yaml"), "DEMO_MODEL_KEY": "demo-key",
            "REVIEWER_ADMIN_TOKEN": world.admin_token}


def _stop_on_signals() -> None:
    """Ctrl-C (SIGINT) and SIGTERM end the demo through its cleanup (the server stopped, the
    stand-ins closed), also where its parent started it with SIGINT ignored (a `&` in a script)."""
    task, loop = asyncio.current_task(), asyncio.get_running_loop()
    assert task is not None
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, task.cancel)


async def demo(keep_running: bool) -> int:
    _stop_on_signals()
    world = await _world()
    proc, port = _start_server(_environment(world), world.workdir)
    world.url = f"http://127.0.0.1:{port}"
    print(f"reviewer serve is listening on {world.url} (GitHub double at {world.github.url}); "
          f"its log: {world.workdir / 'server.log'}")
    try:
        repo = world.shop
        pr = world.first_pull = repo.open_pull(head="discounts", title="Add discounts to invoices")
        payload = world.github.payload("pull_request", "opened", installation=world.installation, pull=pr)
        status, _ = await world.github.deliver(f"{world.url}/webhook", "pull_request", payload,
                                               secret=world.app.webhook_secret)
        print(f"Delivered pull_request.opened for #{pr.number}: the app answered {status}")
        run = await _wait(lambda: next((r for r in repo.check_runs.values()
                                        if r.head_sha == pr.head_sha and r.status == "completed"), None),
                          "the check run")
        _print_run(run, pr)
        if keep_running:
            print()
            await demo_console.populate(world, _wait)
            link = await demo_console.sign_in_link(world.url, world.admin_token)
            demo_console.guide(world.url, link, demo_console.keep_token(world.workdir, world.admin_token))
            await demo_console.forever()
        return 0 if run.conclusion in ("success", "neutral") else 1
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
        await world.chat.close()
        await world.github.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep-running", action="store_true",
                        help="after the review, fill the console and print a one-time sign-in link to it (make demo)")
    try:
        return asyncio.run(demo(parser.parse_args().keep_running))
    except (KeyboardInterrupt, asyncio.CancelledError):  # stopped by a signal: a clean end
        return 0


if __name__ == "__main__":
    raise SystemExit(main())
