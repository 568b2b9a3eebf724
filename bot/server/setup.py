"""`reviewer setup`'s server: the pages of GitHub's App manifest flow (bot/github/manifest.py).

- `GET /setup?token=T` — the one-time token the command printed (only the person at the terminal
  may start a registration: anyone who reached this port could otherwise register an app of their
  own and have its credentials written here). The page holds a form that posts the manifest to
  GitHub, with a fresh `state`.
- `GET /setup/callback?code=…&state=…` — where GitHub sends the browser back. The state must be
  one this server issued, unused and under an hour old; a code is sent to GitHub once (a reload,
  or a replayed link, is refused here before GitHub is asked). The credentials GitHub hands over are
  written to `REVIEWER_SECRETS_DIR/github-app/` (bot/github/credentials.py), the page says what to
  do next, and the server stops.
- `GET /` — what this server is; `GET /livez` — a probe.

Nothing secret is shown or logged: not the private key, the webhook or client secret, nor the
token (it is printed once, on the terminal that started the command).
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import re
import secrets
import signal
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import TextIO
from urllib.parse import urlencode, urlsplit

import aiohttp
from aiohttp import web

from bot.github import credentials
from bot.github.manifest import (
    CODE_LIFETIME,
    GitHubEndpoints,
    ManifestError,
    Registered,
    build_manifest,
    conversion_url,
    load_manifest,
    new_app_url,
    registered,
)
from bot.server.listen import bind, start_site, url_host
from bot.server.pages import link, page, text
from bot.server.probes import livez

_HOST = re.compile(r"(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(:\d{1,5})?")
HEADERS = {"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28", "User-Agent": "reviewer-setup"}


@dataclass(frozen=True)
class SetupConfig:
    public_url: str
    github: GitHubEndpoints
    org: str | None
    secrets_dir: str
    host: str
    port: int
    token: str = field(default_factory=lambda: secrets.token_urlsafe(24), repr=False)


@dataclass
class Flow:
    """The server's memory of the flow: states issued (→ when), codes sent to GitHub, the result."""

    states: dict[str, float] = field(default_factory=dict)
    codes: set[str] = field(default_factory=set)
    result: Registered | None = None
    done: asyncio.Event = field(default_factory=asyncio.Event)


CONFIG = web.AppKey("setup_config", SetupConfig)
FLOW = web.AppKey("setup_flow", Flow)
HTTP = web.AppKey("setup_http", aiohttp.ClientSession)


def redirect_base(config: SetupConfig, host_header: str, scheme: str) -> str | None:
    """Where GitHub sends the browser back: the public URL when the page was reached through it,
    else the address the browser used (a laptop, a port-forward); None for a Host that is no address."""
    if not _HOST.fullmatch(host_header):
        return None
    if host_header.lower() == (urlsplit(config.public_url).netloc or "").lower():
        return config.public_url
    return f"{'https' if scheme == 'https' else 'http'}://{host_header}"


async def home(request: web.Request) -> web.Response:
    return page("Reviewer setup", "<p>This is <code>reviewer setup</code>: it registers Reviewer's GitHub App "
                "through GitHub's manifest flow. Open the address the command printed in its terminal "
                "(it carries a one-time token).</p>")


async def start(request: web.Request) -> web.Response:
    config, flow = request.app[CONFIG], request.app[FLOW]
    given = request.query.get("token", "")
    if not hmac.compare_digest(given.encode(), config.token.encode()):
        return page("Setup token needed", "<p>Open the address <code>reviewer setup</code> printed in its terminal: "
                    "it carries the one-time token that lets you register the app.</p>", status=403)
    base = redirect_base(config, request.host, request.scheme)
    if base is None:
        return page("Bad request", "<p>The request's Host header is not an address.</p>", status=400)
    state = secrets.token_urlsafe(24)
    flow.states[state] = time.monotonic()
    manifest = build_manifest(load_manifest(), config.public_url, f"{base}/setup/callback")
    action = new_app_url(config.github, config.org, state)
    owner = f"the organisation <code>{text(config.org)}</code>" if config.org else "your personal account"
    body = (f"<p>This registers Reviewer as a GitHub App of {owner} on {link(config.github.web, config.github.web)}: "
            f"GitHub will send its webhooks to <code>{text(config.public_url)}/webhook</code>. On GitHub, choose "
            "the app's name (it must be unique there) and create it; GitHub then sends you back here.</p>"
            f'<form method="post" action="{text(action)}">'
            f'<input type="hidden" name="manifest" value="{text(json.dumps(manifest))}">'
            '<button type="submit">Register the app on GitHub</button></form>'
            "<p>The app asks for these permissions: "
            + ", ".join(f"<code>{text(k)}: {text(v)}</code>" for k, v in manifest.get("default_permissions", {}).items())
            + ".</p>")
    return page("Register Reviewer's GitHub App", body, form_origins=[config.github.web], referrer="origin")


def _refused(title: str, message: str, status: int = 400) -> web.Response:
    return page(title, f"<p>{text(message)}</p><p>Start again from the address <code>reviewer setup</code> printed "
                "in its terminal.</p>", status=status)


def _take_state(flow: Flow, state: str) -> bool:
    """Consume `state` when this server issued it under an hour ago (a state serves one callback)."""
    for issued, when in list(flow.states.items()):
        if hmac.compare_digest(issued.encode(), state.encode()):
            del flow.states[issued]
            return time.monotonic() - when <= CODE_LIFETIME
    return False


async def callback(request: web.Request) -> web.Response:
    config, flow = request.app[CONFIG], request.app[FLOW]
    if flow.result is not None:
        return _refused("Already registered", "This setup has registered an app already.", 409)
    if not _take_state(flow, request.query.get("state", "")):
        return _refused("State does not match",
                        "The state GitHub sent back is not one this setup issued (or it was used, or is older "
                        "than an hour), so the code was not used.")
    code = request.query.get("code", "")
    if code in flow.codes:
        return _refused("Code already used", "This code was sent to GitHub already: GitHub turns a code into "
                        "credentials once.")
    flow.codes.add(code)
    try:
        url = conversion_url(config.github, code)
        async with request.app[HTTP].post(url, headers=HEADERS) as response:
            status, body = response.status, await response.read()
    except ManifestError as exc:
        return _refused("Bad code", str(exc))
    except (aiohttp.ClientError, TimeoutError) as exc:
        return _refused("GitHub did not answer", f"POST {config.github.api}/app-manifests/…/conversions: "
                        f"{type(exc).__name__}", 502)
    try:
        answer = json.loads(body) if body else None
    except ValueError:
        answer = None
    if status != 201:
        said = answer.get("message") if isinstance(answer, dict) else None
        return _refused("GitHub refused the code", f"GitHub answered {status}"
                        + (f" ({said})" if isinstance(said, str) else "")
                        + ": the code was used already, is older than an hour, or belongs to another GitHub.", 502)
    try:
        result = registered(answer)
        where = credentials.write(config.secrets_dir, result.credentials)
    except ManifestError as exc:
        return _refused("GitHub's answer is unusable", str(exc), 502)
    except OSError as exc:
        return _refused("Credentials not written", f"{credentials.directory(config.secrets_dir)}: {exc.strerror}. "
                        "On GitHub, generate a new private key and webhook secret for the app.", 500)
    flow.result = result
    flow.done.set()
    return page("Reviewer's GitHub App is registered",
                f"<p>GitHub App <b>{text(result.name)}</b> (id {result.credentials.app_id}) is registered; its "
                f"credentials are in <code>{text(where)}/</code>.</p>"
                f"<p>Next: {link(result.install_url, 'install it on the repositories to review')}, then start "
                "the server (<code>reviewer serve</code>) with the same <code>REVIEWER_SECRETS_DIR</code>.</p>"
                "<p>This setup server has stopped.</p>")


async def _client(app: web.Application) -> AsyncIterator[None]:
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30)) as http:
        app[HTTP] = http
        yield


def make_setup_app(config: SetupConfig) -> web.Application:
    app = web.Application()
    app[CONFIG], app[FLOW] = config, Flow()
    app.cleanup_ctx.append(_client)
    app.router.add_get("/", home)
    app.router.add_get("/livez", livez)
    app.router.add_get("/setup", start)
    app.router.add_get("/setup/callback", callback)
    return app


def local_urls(config: SetupConfig, port: int) -> list[str]:
    """The addresses to print: through the public URL, and on this machine."""
    here = {"0.0.0.0": "127.0.0.1", "::": "::1"}.get(config.host, config.host)
    query = urlencode({"token": config.token})
    return [f"{config.public_url}/setup?{query}", f"http://{url_host(here)}:{port}/setup?{query}"]


async def run_setup(config: SetupConfig, out: TextIO) -> Registered | None:
    """Serve until an app is registered (its result) or SIGINT/SIGTERM (None). ListenError when the
    port cannot be listened on."""
    app = make_setup_app(config)
    sockets = bind(config.host, config.port)
    runner = web.AppRunner(app, access_log=None, handle_signals=False)
    await runner.setup()
    try:
        await start_site(runner, sockets)
        port = runner.addresses[0][1]
        print(f"reviewer setup: listening on {url_host(config.host)}:{port}. Open one of these in a browser "
              "to register the GitHub App (the token in them works for this run only):", file=out, flush=True)
        for url in local_urls(config, port):
            print(f"  {url}", file=out, flush=True)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        waiters = [asyncio.create_task(app[FLOW].done.wait()), asyncio.create_task(stop.wait())]
        await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
        for waiter in waiters:
            waiter.cancel()
    finally:
        with contextlib.suppress(Exception):
            await runner.cleanup()  # lets the last page go out first
    return app[FLOW].result
