"""`make demo`'s second half (tests/support/demo.py runs the first, `make run`'s): the world made
worth a look in the console, then a one-time link into it.

Everything goes through the server's own interfaces, as GitHub and a person would use them:
1. GitHub's signed `installation.created` delivery, so that the console lists the repositories the
   app covers;
2. `@reviewer learn …` said on the reviewed pull request by a collaborator with write access,
   which the app answers and keeps as a learning (`/console/learnings`);
3. a pull request of a second repository whose configuration picks a model the stand-in answers
   only with 503: its review fails, and the console shows a failed delivery to redeliver;
4. a one-time sign-in link, asked of `POST /v1/signin-links` with the run's break-glass token
   (docs/operations.md "One-time sign-in links"), printed as `Console: URL`.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp

from tests.support.chat_double import ChatDouble, failing

BUSY_MODEL = "reviewer-busy"  # the model the second repository picks: the stand-in answers it 503
PAYMENTS_YAML = f"""\
feedback: standard
models:
  review: stand-in/{BUSY_MODEL}
"""
PAYMENTS_BASE = {".reviewer.yaml": PAYMENTS_YAML, "README.md": "# Payments\n",
                 "src/refund.py": "def refund(cents):\n    return -cents\n"}
PAYMENTS_HEAD = {"src/refund.py": "def refund(cents, fee=0):\n    return -(cents - fee)\n"}
LEARNING = "Amounts of money in this shop are integers of cents: name them *_cents."
COLLABORATOR = "maria"
LINK_SECONDS = 900  # the longest a link may last: a person reads the output first


def admin_token() -> str:
    """The run's break-glass token: random, kept in a 0600 file, never printed."""
    return secrets.token_urlsafe(32)


def keep_token(workdir: Path, token: str) -> Path:
    path = workdir / "admin-token"
    path.touch(mode=0o600)
    path.write_text(token + "\n")
    return path


def payments_repo(github: Any) -> Any:
    repo = github.add_repo("example-org/payments")
    base = repo.commit(PAYMENTS_BASE)
    repo.commit(PAYMENTS_HEAD, branch="fees", parent=base, message="Refunds keep the fee")
    return repo


def busy_model(chat: ChatDouble) -> None:
    chat.answer(BUSY_MODEL, failing(503, "the model is overloaded; try again later"))


async def _api(url: str, token: str, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    async with aiohttp.ClientSession() as http:
        async with http.request(method, url + path, json=body, headers={"Authorization": f"Bearer {token}"}) as answer:
            return answer.status, await answer.json()


async def populate(world: Any, wait: Callable[[Callable[[], Any], str], Awaitable[Any]]) -> None:
    """Steps 1–3: the installation, a learning, a failed review; each waited for (bounded)."""
    github, url, secret = world.github, world.url, world.app.webhook_secret
    status, _ = await github.deliver(url + "/webhook", "installation",
                                     github.payload("installation", "created", installation=world.installation),
                                     secret=secret)
    print(f"Delivered installation.created for {', '.join(sorted(world.installation.repositories))}: {status}")

    pr = world.first_pull
    world.shop.permissions[COLLABORATOR] = "write"
    said = pr.comment(f"@reviewer learn {LEARNING}", COLLABORATOR)
    status, _ = await github.deliver(url + "/webhook", "issue_comment", github.payload(
        "issue_comment", "created", installation=world.installation, pull=pr, comment=said), secret=secret)
    print(f"Delivered {COLLABORATOR}'s “@reviewer learn …” on #{pr.number}: {status}")

    async def learned() -> bool:
        code, listed = await _api(url, world.admin_token, "GET", "/v1/learnings")
        return code == 200 and any(item["text"] == LEARNING for item in listed["items"])
    await _until(learned, "the learning")

    busy = world.payments.open_pull(head="fees", title="Refunds keep the fee")
    status, _ = await github.deliver(url + "/webhook", "pull_request", github.payload(
        "pull_request", "opened", installation=world.installation, pull=busy), secret=secret)
    print(f"Delivered pull_request.opened for {world.payments.full_name}#{busy.number} (its model answers 503): "
          f"{status}")
    run = await wait(lambda: next((r for r in world.payments.check_runs.values()
                                   if r.head_sha == busy.head_sha and r.status == "completed"), None),
                     "the failed review")
    print(f"  its check run: {run.conclusion}, “{run.output.get('title')}”")


async def _until(check: Callable[[], Awaitable[bool]], what: str, timeout: float = 60.0) -> None:
    async def loop() -> None:
        while not await check():
            await asyncio.sleep(0.1)
    try:
        await asyncio.wait_for(loop(), timeout)
    except TimeoutError:
        raise SystemExit(f"gave up waiting for {what} after {timeout:.0f} s") from None


async def sign_in_link(url: str, token: str) -> str:
    """Step 4: a one-time link that signs a browser in and lands on the console."""
    status, made = await _api(url, token, "POST", "/v1/signin-links", {"expiresIn": LINK_SECONDS})
    if status != 201:
        raise SystemExit(f"the server refused a sign-in link ({status}): {made.get('message')}")
    return str(made["url"])


def guide(url: str, link: str, token_file: Path) -> None:
    print(f"""
Console: {link}

Open it in a browser: it signs you in and lands on the console (it works once, for {LINK_SECONDS // 60} minutes;
after that, sign in at {url}/console/login with the token in {token_file}). Look at:
  {url}/console/repos                           the repositories, each with its last review
  {url}/console/repos/example-org/shop/pulls/1  a pull request's reviews and findings
  {url}/console/deliveries                      every delivery; the failed one has Redeliver
  {url}/console/learnings                       what {COLLABORATOR} taught the reviewer
Serving until Ctrl-C.""", flush=True)


async def forever() -> None:
    await asyncio.Event().wait()
