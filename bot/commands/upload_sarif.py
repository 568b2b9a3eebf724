"""`reviewer upload-sarif FILE --repo OWNER/REPO --commit SHA [--ref REF] [--format F] [--server URL]
[--tool-name NAME]`: an analyzer's report, uploaded to a Reviewer server as GitHub takes SARIF.

The report is converted to SARIF where it is reviewdog's rdjson/rdjsonl or checkstyle XML
(bot/analyzers/convert.py), checked here with the server's own reader (bot/analyzers/upload.py:
the body is decoded again before it is sent, so a file the server would refuse is refused here,
with the same messages, and nothing is sent), gzipped and base64-encoded, and posted to
`{server}/v1/repos/{owner}/{repo}/code-scanning/sarifs` with `Authorization: Bearer` and the token
of `REVIEWER_TOKEN`, else the session `reviewer login` keeps. Absolute paths under the current
directory are made relative (it is sent as `checkout_uri`, as GitHub's upload action sends the
workspace).

Exit codes: 0 uploaded; 1 the report or the upload is refused (here or by the server, or the
token is); 2 usage, an unreadable file, no token or no server to send to, or a server that cannot
be reached.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import aiohttp

from bot.analyzers.convert import MAX_INPUT_BYTES, ConvertError, checkout_uri, to_sarif
from bot.analyzers.upload import Upload, decode_upload, encode_sarif
from bot.commands.session import session_file

TIMEOUT = aiohttp.ClientTimeout(total=120)
_REPO = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9_.-]+$")


class UploadError(Exception):
    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


def _credentials(server: str | None) -> tuple[str, str]:
    """(server, token): REVIEWER_TOKEN with --server or REVIEWER_SERVER, else `reviewer login`'s session."""
    server = server or os.environ.get("REVIEWER_SERVER")
    token = os.environ.get("REVIEWER_TOKEN")
    record: dict[str, Any] = {}
    if not token:
        try:
            loaded = json.loads(session_file().read_text(encoding="utf-8"))
            record = loaded if isinstance(loaded, dict) else {}
        except (OSError, ValueError):
            record = {}
    stored_server = str(record.get("server") or "").rstrip("/")
    server = (server or stored_server).rstrip("/")
    if not server:
        raise UploadError("no server: give --server URL (or set REVIEWER_SERVER, or sign in with `reviewer login`)", 2)
    if not token:
        if record.get("token") and stored_server == server:
            token = str(record["token"])
        else:
            raise UploadError(f"no token for {server}: set REVIEWER_TOKEN, or run `reviewer login --server {server}`", 2)
    return server, token


def _ref(given: str | None, directory: Path) -> str:
    if given:
        return given
    if os.environ.get("GITHUB_REF"):
        return os.environ["GITHUB_REF"]
    try:
        branch = subprocess.run(["git", "symbolic-ref", "--quiet", "--short", "HEAD"], cwd=directory,
                                capture_output=True, text=True, timeout=10, check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        branch = ""
    if not branch:
        raise UploadError("no ref: give --ref refs/heads/BRANCH (or refs/pull/N/head), or set GITHUB_REF", 2)
    return f"refs/heads/{branch}"


def build_body(args: argparse.Namespace, directory: Path) -> tuple[dict[str, Any], Upload]:
    """The upload body, and what the server will read from it; raises UploadError."""
    try:
        with open(args.file, "rb") as handle:
            data = handle.read(MAX_INPUT_BYTES + 1)
    except OSError as exc:
        raise UploadError(f"cannot read {args.file} ({exc.strerror})", 2) from None
    try:
        document = to_sarif(data, args.format, tool_name=args.tool_name, root=str(directory))
    except ConvertError as exc:
        raise UploadError(f"{args.file}: {exc}", 1) from None
    body: dict[str, Any] = {"commit_sha": args.commit, "ref": _ref(args.ref, directory),
                            "sarif": encode_sarif(document), "checkout_uri": checkout_uri(str(directory))}
    if args.tool_name:
        body["tool_name"] = args.tool_name
    decoded = decode_upload(body)
    if isinstance(decoded, list):
        lines = [f"{args.file}: {p.pointer or '/'}: {p.code}: {p.message}" for p in decoded]
        raise UploadError("the upload would be refused; nothing was sent:\n" + "\n".join(lines), 1)
    return body, decoded


BUSY_ATTEMPTS = 6  # a server reading as many uploads as it takes answers 503 with Retry-After
MAX_BUSY_WAIT = 60.0  # seconds waited at most before one attempt


async def post(server: str, repo: str, token: str, body: dict[str, Any]) -> dict[str, Any]:
    """The upload, sent again (at most BUSY_ATTEMPTS times) while the server says it is busy."""
    url = f"{server}/v1/repos/{repo}/code-scanning/sarifs"
    for attempt in range(1, BUSY_ATTEMPTS + 1):
        status, text, retry_after = await _send(url, token, body)
        if status != 503 or retry_after is None or attempt == BUSY_ATTEMPTS:
            break
        wait = min(retry_after, MAX_BUSY_WAIT)
        print(f"{url} is busy (503): trying again in {wait:g} s", file=sys.stderr)
        await asyncio.sleep(wait)
    try:
        answer = json.loads(text)
    except ValueError:
        answer = None
    if status >= 400:
        raise UploadError(_refusal(url, status, answer), 2 if status == 404 else 1)
    if not isinstance(answer, dict) or not isinstance(answer.get("id"), str):
        raise UploadError(f"{url} answered {status} without an upload id", 1)
    return answer


async def _send(url: str, token: str, body: dict[str, Any]) -> tuple[int, str, float | None]:
    """(status, text, Retry-After in seconds when the answer gives a number of them)."""
    try:
        async with aiohttp.ClientSession(timeout=TIMEOUT) as http, http.post(
                url, json=body, headers={"Authorization": f"Bearer {token}", "Accept": "application/json"}) as response:
            text = await response.text()
            retry_after = response.headers.get("Retry-After", "")
            return response.status, text, float(retry_after) if retry_after.isdigit() else None
    except (aiohttp.ClientError, TimeoutError) as exc:
        raise UploadError(f"cannot reach {url} ({exc.__class__.__name__})", 2) from None


def _refusal(url: str, status: int, answer: Any) -> str:
    """The server's reason, as GitHub (`message`, `errors`) or as our other APIs (`error.message`) say it."""
    answer = answer if isinstance(answer, dict) else {}
    error = answer.get("error")
    message = answer.get("message") or (error.get("message") if isinstance(error, dict) else None) or "no details"
    lines = [f"{url} answered {status}: {message}"]
    for item in answer.get("errors") or []:
        if isinstance(item, dict):
            lines.append(f"  {item.get('pointer', '')}: {item.get('code', '')}: {item.get('message', '')}")
    return "\n".join(lines[:21])


def run(args: argparse.Namespace) -> int:
    if not _REPO.match(args.repo):
        print(f"reviewer upload-sarif: error: --repo {args.repo!r} is not OWNER/REPO", file=sys.stderr)
        return 2
    try:
        body, upload = build_body(args, Path.cwd())
        server, token = _credentials(args.server)
        answer = asyncio.run(post(server, args.repo, token, body))
    except UploadError as exc:
        print(f"reviewer upload-sarif: error: {exc}", file=sys.stderr)
        return exc.code
    print(f"Uploaded {len(upload.results)} result(s) of {', '.join(upload.tools) or 'no tool'} for "
          f"{args.repo}@{args.commit[:12]}: id {answer['id']}" + (f", {answer['url']}" if answer.get("url") else ""))
    return 0
