"""Analyzer results from CI, as GitHub's code scanning takes SARIF (docs/analyzers.md):

    POST /v1/repos/{owner}/{repo}/code-scanning/sarifs       → 202 {"id", "url"}
    GET  /v1/repos/{owner}/{repo}/code-scanning/sarifs/{id}  → {"processing_status", "errors"}

Both need `analyses:write` on `owner` (a session token, or the admin token), checked first. An
upload is read whole before anything is kept: the body within bot/analyzers/upload.py's bounds
(refused with 413 past them), then decoded with every bound there (400 with each problem, as
a JSON pointer, a code and a message); a repository the app is not installed on is refused with
404 (checked before the body is read). What an upload may cost the server is bounded by its work,
not only its bytes (`UploadAdmission`): decoding runs in a child process with a memory and CPU limit
(bot/analyzers/isolated.py), at most `decodes` at once, with at most `WAITING_PER_DECODE` times
as many more read and waiting their turn; past that an upload is answered 503 with `Retry-After`
before its body is read. Each accepted upload is an entry of the audit log (`sarif.upload`).
A refused upload stores nothing. An accepted one is stored (bot/store/uploads.py) as its results,
`pending`, under the repository's name as the installation events spell it (GitHub's names are
case-insensitive; the keys of the queue and the review memory are not); when the app knows the
pull request whose head is `commit_sha` (from the ref `refs/pull/N/…`, or its last `pull_request`
delivery), a job is queued for that pull request as a delivery of its own
(bot.events.routes.UPLOAD_EVENT), which posts the findings; otherwise the next review of a pull
request with that head takes them up. GitHub is asked only which installation reaches a repository
the installation events have not named; nothing is posted from here, and nothing an
upload holds is logged: only the repository, the head, the tools and the counts.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import time
import uuid
from collections.abc import AsyncIterator, Callable

from aiohttp import web

from bot.analyzers.isolated import DEFAULT_MEMORY_BYTES, Decoded, DecoderUnavailable, decode_isolated
from bot.analyzers.model import Problem
from bot.analyzers.upload import MAX_BODY_BYTES, error_body
from bot.audit.log import Audit
from bot.auth.guard import Denial, Principal
from bot.events.routes import UPLOAD_EVENT
from bot.github import GitHubError
from bot.loops.pause import pause
from bot.server import logging as log
from bot.server.context import ServerContext
from bot.server.resources.status import denial_response
from bot.server.signin.gate import Gate
from bot.store.model import Incoming
from bot.store.uploads import UploadRecord, UploadStore

logger = log.get("analyses")

PERMISSION = "analyses:write"
_OWNER = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})")  # GitHub's login rule
_REPO = re.compile(r"(?!\.\.?\Z)[A-Za-z0-9._-]{1,100}")  # GitHub's repository name rule
_ID = re.compile(r"[0-9a-f]{32}")
_CHUNK = 256 * 1024
PRUNE_EVERY = 3600.0
WAITING_PER_DECODE = 3  # uploads read and waiting, for each decode at once
RETRY_AFTER = 10  # seconds: what a busy answer asks the uploader to wait


class UploadAdmission:
    """At most `decodes` uploads decode at once, each in its own child process of `memory_bytes`;
    at most WAITING_PER_DECODE times as many more are read and wait for a turn. An upload past
    those is not admitted (its body is never read). So the server holds at most
    `decodes * (1 + WAITING_PER_DECODE)` bodies, and its children `decodes * memory_bytes`."""

    def __init__(self, decodes: int = 1, memory_bytes: int = DEFAULT_MEMORY_BYTES) -> None:
        self.decodes, self.memory_bytes = decodes, memory_bytes
        self.most = decodes * (1 + WAITING_PER_DECODE)
        self.admitted = 0
        self._turns = asyncio.Semaphore(decodes)

    @contextlib.asynccontextmanager
    async def admit(self) -> AsyncIterator[bool]:
        """Yields whether the upload is admitted (False: answer it busy); held while it is read."""
        if self.admitted >= self.most:
            yield False
            return
        self.admitted += 1
        try:
            yield True
        finally:
            self.admitted -= 1

    async def decode(self, raw: bytes, repository_url: str) -> Decoded | list[Problem]:
        async with self._turns:
            return await decode_isolated(raw, repository_url=repository_url, memory_bytes=self.memory_bytes)


def setup_upload_routes(app: web.Application, *, gate: Gate, uploads: UploadStore,
                          context: Callable[[], ServerContext | None], public_url: str | None,
                          github_web_url: str, admission: UploadAdmission | None = None,
                          audit: Audit | None = None) -> None:
    api = _Uploads(gate, uploads, context, public_url, github_web_url, admission or UploadAdmission(), audit)
    app.router.add_post("/v1/repos/{owner}/{repo}/code-scanning/sarifs", api.upload)
    app.router.add_get("/v1/repos/{owner}/{repo}/code-scanning/sarifs/{id}", api.status)
    app.cleanup_ctx.append(lambda _: _pruning(uploads))


async def _pruning(uploads: UploadStore) -> AsyncIterator[None]:
    """Uploads past their week deleted at start and hourly, while the server runs."""
    async def loop() -> None:
        while True:
            try:
                if deleted := await uploads.prune():
                    logger.info("deleted SARIF uploads past their 7 days", extra={"count": deleted})
            except Exception:
                logger.exception("deleting old SARIF uploads failed; trying again in an hour")
            await pause(PRUNE_EVERY)
    task = asyncio.create_task(loop(), name="sarif-upload-retention")
    yield
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task


def web_url_of(api_url: str) -> str:
    """GitHub's web address for its REST address: api.github.com → github.com, GHES's
    `https://host/api/v3` → `https://host`."""
    url = api_url.rstrip("/")
    if url == "https://api.github.com":
        return "https://github.com"
    return url.removesuffix("/api/v3")


def _answer(status: int, message: str, **extra: object) -> web.Response:
    return web.json_response({"message": message, **extra}, status=status)


def _busy(message: str) -> web.Response:
    return web.json_response({"message": f"{message}; try again in {RETRY_AFTER} s"}, status=503,
                             headers={"Retry-After": str(RETRY_AFTER)})


def _refused(problems: list[Problem]) -> web.Response:
    status = 413 if any(p.code == "too-large" for p in problems) else 400
    return web.json_response(error_body(problems), status=status)


class _Uploads:
    def __init__(self, gate: Gate, uploads: UploadStore, context: Callable[[], ServerContext | None],
                 public_url: str | None, github_web_url: str, admission: UploadAdmission,
                 audit: Audit | None) -> None:
        self.gate, self.uploads, self.context = gate, uploads, context
        self.public_url, self.github_web_url = public_url, github_web_url
        self.admission, self.audit = admission, audit

    async def _allowed(self, request: web.Request) -> web.Response | tuple[str, str, Principal]:
        owner, repo = request.match_info["owner"], request.match_info["repo"]
        allowed = await self.gate.check(request, PERMISSION, owner)
        if isinstance(allowed, Denial):
            return denial_response(allowed)
        if not _OWNER.fullmatch(owner) or not _REPO.fullmatch(repo):
            return _answer(400, f"{owner[:100]}/{repo[:100]} is not a GitHub repository name (owner/name)")
        return owner, repo, allowed

    async def upload(self, request: web.Request) -> web.Response:
        allowed = await self._allowed(request)
        if isinstance(allowed, web.Response):
            return allowed
        owner, repo, who = allowed
        full_name = f"{owner}/{repo}"
        context = self.context()
        if context is None:
            return _answer(503, "the server is starting; try again")
        try:
            installation = await _installation(context, owner, repo)
        except GitHubError as exc:
            logger.warning("SARIF upload: asking GitHub for the installation of %s failed: %s", full_name, exc)
            return _answer(502, exc.describe())
        if installation is None:
            return _answer(404, f"the app is not installed on {full_name} (or the repository does not exist): "
                                "an upload is taken only for a repository the app reviews")
        full_name = await _known_name(context, full_name)
        async with self.admission.admit() as admitted:
            if not admitted:
                logger.warning("SARIF upload for %s not taken: %d uploads are being read or decoded", full_name,
                               self.admission.admitted)
                return _busy("the server is reading as many SARIF uploads as it takes at once")
            decoded = await self._decoded(request, full_name)
        if isinstance(decoded, web.Response):
            return decoded
        upload_id = uuid.uuid4().hex
        pull = decoded.pull_number or await self.uploads.pull_for_head(full_name, decoded.commit_sha)
        await self.uploads.add(UploadRecord(upload_id, full_name, decoded.commit_sha, decoded.ref, pull,
                                            decoded.tool_name, [], results_json=decoded.results_json))
        if pull is not None:
            await context.store.accept(_job(upload_id, full_name, installation, pull, decoded))
        logger.info("SARIF upload accepted", extra={"repository": full_name, "head": decoded.commit_sha[:12],
                                                    "tools": list(decoded.tools), "results": decoded.results,
                                                    "pull": pull})
        if self.audit is not None:
            await self.audit.record(who, "sarif.upload", f"{full_name}/code-scanning/sarifs/{upload_id}",
                                    ip=request.remote, account=owner,
                                    details={"repository": full_name, "commit": decoded.commit_sha,
                                             "tools": list(decoded.tools)[:20], "results": decoded.results})
        base = self.public_url or f"{request.scheme}://{request.host}"
        return web.json_response({"id": upload_id, "url": f"{base}/v1/repos/{full_name}/code-scanning/sarifs/"
                                                          f"{upload_id}"}, status=202)

    async def _decoded(self, request: web.Request, full_name: str) -> Decoded | web.Response:
        """The body read within its bound and decoded in a child process, in turn."""
        raw = await _bounded_body(request)
        if raw is None:
            return _refused([Problem("", "too-large", f"the body is larger than {MAX_BODY_BYTES:,} bytes "
                                                      "(the base64 of GitHub's 10 MB limit on the gzipped file)")])
        try:
            decoded = await self.admission.decode(raw, f"{self.github_web_url}/{full_name}")
        except DecoderUnavailable as exc:
            logger.error("SARIF upload for %s: %s", full_name, exc)
            return _busy(str(exc))
        if isinstance(decoded, list):
            logger.info("SARIF upload refused", extra={"repository": full_name,
                                                       "problems": [p.code for p in decoded[:10]]})
            return _refused(decoded)
        return decoded

    async def status(self, request: web.Request) -> web.Response:
        allowed = await self._allowed(request)
        if isinstance(allowed, web.Response):
            return allowed
        owner, repo, _ = allowed
        upload_id = request.match_info["id"]
        record = await self.uploads.get(f"{owner}/{repo}", upload_id) if _ID.fullmatch(upload_id) else None
        context = self.context()
        if record is None and context is not None and _ID.fullmatch(upload_id):  # named in another case
            known = await _known_name(context, f"{owner}/{repo}")
            record = await self.uploads.get(known, upload_id) if known != f"{owner}/{repo}" else None
        if record is None:
            return _answer(404, f"no SARIF upload {upload_id[:64]!r} for {owner}/{repo} (uploads are kept 7 days)")
        return web.json_response({"processing_status": record.status, "errors": record.errors})


async def _installation(context: ServerContext, owner: str, repo: str) -> int | None:
    """The installation reaching the repository: as installation events said, else as GitHub says."""
    stored = await context.store.installation_for(f"{owner}/{repo}")
    if stored is not None or context.github is None:
        return stored
    return await context.github.repo_installation(owner, repo)


async def _known_name(context: ServerContext, full_name: str) -> str:
    """The repository's name as the installation events spell it: GitHub's names are
    case-insensitive, but the uploads' rows, the pull request's key in the queue and the review
    memory (its ledger of findings, its pause) are not. As given when no event named it."""
    wanted = full_name.lower()
    for installation in await context.store.installations():
        for name in installation.get("repositories") or ():
            if isinstance(name, str) and name.lower() == wanted:
                return name
    return full_name


async def _bounded_body(request: web.Request) -> bytes | None:
    """The body, or None once it passes MAX_BODY_BYTES (the rest is never read)."""
    if request.content_length is not None and request.content_length > MAX_BODY_BYTES:
        return None
    out = bytearray()
    while True:
        chunk = await request.content.read(_CHUNK)
        if not chunk:
            return bytes(out)
        out += chunk
        if len(out) > MAX_BODY_BYTES:
            return None


def _job(upload_id: str, full_name: str, installation: int, pull: int, upload: Decoded) -> Incoming:
    """The delivery that queues the upload's job under its pull request's key (bot.events.jobs.classify)."""
    payload = {"action": "uploaded", "installation": {"id": installation}, "repository": {"full_name": full_name},
               "upload": {"id": upload_id, "commit_sha": upload.commit_sha, "pull_number": pull}}
    return Incoming(f"sarif-upload-{upload_id}", UPLOAD_EVENT, {}, json.dumps(payload).encode(), time.time())
