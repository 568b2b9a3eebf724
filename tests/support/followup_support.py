"""Follow-ups end to end (tests/app/test_app_followups.py, tests/app/test_app_learnings.py): a
pull request reviewed with one finding, a comment or review delivered, the app's answers in a thread."""

from __future__ import annotations

import sqlite3
import uuid

from tests.support.app_support import World
from tests.support.chat_double import ChatDouble, findings
from tests.support.github_double.model import User
from tests.support.review_support import BUG, PRIMARY, config_pull, inline_comments, reviewed, shown
from tests.support.server_support import wait_for


async def finished(world: World, delivery_id: str) -> str:
    """Wait (bounded) until the app is done with a delivery; its final state."""
    def state() -> str | None:
        with sqlite3.connect(world.tmp / "reviewer.db") as conn:
            row = conn.execute("SELECT state FROM deliveries WHERE delivery_id = ?", (delivery_id,)).fetchone()
        return row[0] if row and row[0] in ("done", "ignored", "failed", "superseded") else None

    async def check() -> str | None:
        return state()
    return await wait_for(check, 20)


async def say(world: World, event: str, pr, *, comment=None, review=None, sender: User | None = None,
              delivery_id: str | None = None) -> str:
    """Deliver a comment or review event on the pull request; the delivery's final state."""
    action = {"issue_comment": "created", "pull_request_review_comment": "created",
              "pull_request_review": "submitted"}[event]
    payload = world.github.payload(event, action, installation=world.installation, pull=pr, comment=comment,
                                   review=review, sender=sender)
    delivery_id = delivery_id or str(uuid.uuid4())
    status, _ = await world.deliver(event, payload, delivery_id)
    assert status == 202
    return await finished(world, delivery_id)


async def reviewed_with_a_finding(world: World, chat: ChatDouble, config: str, permissions: dict[str, str]):
    """A pull request (its `.reviewer.yaml` is `config`) reviewed with BUG as its one inline
    finding, then these people given these permissions on the repository: (pull request, finding)."""
    chat.answer(PRIMARY, findings(BUG))
    pr = config_pull(world, config)
    await reviewed(world, pr)
    world.repo.permissions.update(permissions)
    [finding] = inline_comments(world, pr)
    return pr, finding


def replies(world: World, pr, root) -> list[str]:
    """The app's replies in the thread of `root`, as a reader sees them."""
    return [shown(c.body) for c in pr.thread(root)[1:] if c.user == world.app.bot]
