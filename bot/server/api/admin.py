"""The admin API: `GET /api/config/{owner}/{repo}` (and bot.server.api.deliveries's
`POST /api/deliveries/{id}/redeliver`). The first is the effective configuration of a repository and
where each value came from, for a caller with `config:read` on the repository's account (the
admin token, or a session whose roles allow it: `accounts` in the admin file's `access` narrows it).

It answers what the app would apply to a pull request opened now against the default branch:
`.reviewer.yaml` (or `.yml`) at the head of that branch, validated as a pull request's would be,
layered on the admin configuration in force. An invalid file is not applied, as on a pull request:
`valid` is false, `errors` lists every error with its position, and `effective` shows the admin
layers alone. Answers: 200; 400 a name GitHub cannot have; 401 no or wrong token (nothing more
said); 403 a `Status` (`Forbidden`, `MFARequired`) when signed in without the permission; 404 the app is not installed on the repository; 502 GitHub failed (the message says how);
503 the server has no GitHub App credentials.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from typing import Any

from aiohttp import web

from bot.audit.log import Audit
from bot.auth.guard import Denial
from bot.config.admin import AdminConfig
from bot.config.layering import effective_config
from bot.config.render import render_effective
from bot.documents.diagnostics import Diagnostic
from bot.documents.yamldoc import MAX_BYTES
from bot.github import GitHubError
from bot.plan.config_files import load_config_file
from bot.server import logging as log
from bot.server.api.config_reader import ConfigAtHead, NotInstalled, read_config_at_head
from bot.server.api.deliveries import setup_delivery_routes
from bot.server.context import ServerContext
from bot.server.resources.status import denial_response
from bot.server.signin.gate import Gate

logger = log.get("admin_api")

GITHUB_DEADLINE = 30.0  # seconds the whole GitHub side may take; the client retries within it
_OWNER = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$")  # GitHub's login rule
_REPO = re.compile(r"^(?!\.\.?$)[A-Za-z0-9._-]{1,100}$")  # GitHub's repository name rule


def setup_admin_routes(app: web.Application, *, gate: Gate, context: Callable[[], ServerContext | None],
                       audit: Audit | None = None) -> None:
    """`context()` gives the running server's context (None before it starts); `audit` records
    the changes made through it (a redelivery)."""
    api = _AdminAPI(gate, context)
    app.router.add_get("/api/config/{owner}/{repo}", api.config)
    setup_delivery_routes(app, gate=gate, context=context, audit=audit)


def config_report(admin: AdminConfig | None, at_head: ConfigAtHead) -> dict[str, Any]:
    """The answer for a repository whose files were read: validation, layering, rendering (pure)."""
    full_name = at_head.full_name
    path: str | None
    if at_head.oversized:
        path, size = next(iter(at_head.oversized.items()))
        repo_config, errors = None, [_too_large(size)]
    else:
        repo_config, path, found = load_config_file(at_head.files, admin, full_name, "head")
        errors = [{"line": e.line, "column": e.column, "pointer": e.pointer, "code": e.code, "message": e.message}
                  for e in found]
    config = effective_config(admin, repo_config, full_name)
    return {"repository": full_name, "ref": at_head.ref, "configFile": path, "valid": not errors,
            "errors": errors, "effective": render_effective(config), "sources": dict(config.sources)}


def _too_large(size: int) -> dict[str, Any]:
    return Diagnostic(1, 1, "", "too-large", f"the file is {size} bytes; the limit is {MAX_BYTES} bytes "
                                             "(256 KiB)").to_json()


def _answer(status: int, message: str) -> web.Response:
    return web.json_response({"message": message}, status=status)


class _AdminAPI:
    def __init__(self, gate: Gate, context: Callable[[], ServerContext | None]) -> None:
        self.gate = gate
        self.context = context

    async def config(self, request: web.Request) -> web.Response:
        owner, repo = request.match_info["owner"], request.match_info["repo"]
        allowed = await self.gate.check(request, "config:read", owner)
        if isinstance(allowed, Denial):
            if allowed.status == 401:
                response = _answer(401, "Unauthorized")
                response.headers["WWW-Authenticate"] = "Bearer"
                return response
            return denial_response(allowed)
        if not _OWNER.match(owner) or not _REPO.match(repo):
            return _answer(400, f"{owner}/{repo} is not a GitHub repository name (owner/name)")
        context = self.context()
        if context is None or context.github is None:
            return _answer(503, "the server has no GitHub App credentials (GITHUB_APP_ID and GITHUB_PRIVATE_KEY "
                                "or GITHUB_PRIVATE_KEY_PATH), so it cannot read repositories")
        try:
            async with asyncio.timeout(GITHUB_DEADLINE):
                at_head = await read_config_at_head(context.github, context.store, owner, repo)
        except NotInstalled:
            return _answer(404, f"the app is not installed on {owner}/{repo} (or the repository does not exist)")
        except GitHubError as exc:
            logger.warning("admin API: reading %s/%s failed: %s", owner, repo, exc)
            return _answer(502, exc.describe())
        except TimeoutError:
            logger.warning("admin API: reading %s/%s took longer than %.0fs", owner, repo, GITHUB_DEADLINE)
            return _answer(502, f"GitHub did not answer within {GITHUB_DEADLINE:.0f} seconds; try again later")
        return web.json_response(config_report(context.admin.current, at_head))
