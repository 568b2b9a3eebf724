"""`reviewer learnings list|show|add|edit|rm`: the learnings a server keeps, from the terminal.

A client of the server's learnings API (`GET/POST /v1/learnings`, `GET/PATCH/DELETE
/v1/learnings/{id}`; their shapes are `bot.learnings.model`'s), with the token of `bot.commands.client`.
`--format json` prints the API's JSON as it came; text prints one line per learning, with every
control character of what the server sent shown escaped (a learning's text must not drive the
terminal). Exit codes: 0 done, 1 the server refused (no permission, no such learning, an invalid
learning: its problems are listed), 2 usage, no credentials, or the server unreachable.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
from typing import Any
from urllib.parse import quote

import aiohttp

from bot.commands.client import TIMEOUT, ApiError, Credentials, call, credentials

API = "/v1/learnings"
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
TEXT_WIDTH = 72


def run(args: argparse.Namespace) -> int:
    try:
        creds = credentials(args.server)
        answer = asyncio.run(_request(creds, args))
    except ApiError as exc:
        print(f"reviewer learnings: error: {_shown(str(exc))}", file=sys.stderr)
        for cause in exc.causes:
            print(f"  {_shown(cause)}", file=sys.stderr)
        return exc.code
    if args.format == "json":
        print(json.dumps(answer, indent=2, ensure_ascii=False))
    else:
        print(_text(args.action, answer))
    return 0


async def _request(creds: Credentials, args: argparse.Namespace) -> Any:
    async with aiohttp.ClientSession(timeout=TIMEOUT) as http:
        if args.action == "list":
            return await call(http, creds, "GET", API, query=_filters(args))
        if args.action == "add":
            return await call(http, creds, "POST", API, body=_new_body(args))
        one = f"{API}/{quote(args.id, safe='')}"
        if args.action == "show":
            return await call(http, creds, "GET", one)
        if args.action == "edit":
            return await call(http, creds, "PATCH", one, body=_patch_body(args))
        return await call(http, creds, "DELETE", one)


def _split_repo(value: str) -> tuple[str, str]:
    owner, _, name = value.partition("/")
    if not owner or not name or "/" in name:
        raise ApiError(f"--repo must be OWNER/NAME; got {value!r}", 2)
    return owner, name


def _filters(args: argparse.Namespace) -> dict[str, str]:
    query: dict[str, str] = {}
    if args.repo:
        query["account"], query["repository"] = _split_repo(args.repo)
    if args.account:
        if query and query["account"].lower() != args.account.lower():
            raise ApiError("--account and --repo name two accounts", 2)
        query["account"] = args.account
    if args.kind:
        query["kind"] = args.kind
    return query


def _new_body(args: argparse.Namespace) -> dict[str, Any]:
    if bool(args.repo) == bool(args.account):
        raise ApiError("say where the learning applies: --repo OWNER/NAME, or --account LOGIN for every repository "
                       "of an account", 2)
    scope: dict[str, Any] = {"account": args.account} if args.account else dict(
        zip(("account", "repository"), _split_repo(args.repo), strict=True))
    if args.path:
        scope["paths"] = args.path
    body: dict[str, Any] = {"scope": scope, "kind": args.kind, "text": args.text}
    for key in ("rule", "category"):
        if getattr(args, key):
            body[key] = getattr(args, key)
    if args.source_url:
        body["source"] = {"url": args.source_url}
    return body


def _patch_body(args: argparse.Namespace) -> dict[str, Any]:
    body: dict[str, Any] = {}
    for key in ("text", "kind", "rule", "category"):
        value = getattr(args, key)
        if value is not None:
            body[key] = value or None  # "" clears rule and category
    if args.path is not None or args.every_path:
        if args.path and args.every_path:
            raise ApiError("--path and --every-path contradict each other", 2)
        body["scope"] = {"paths": [] if args.every_path else args.path}
    if not body:
        raise ApiError("nothing to change: give --text, --kind, --rule, --category, --path or --every-path", 2)
    return body


def _shown(text: Any) -> str:
    """Server-sent text as the terminal may show it: control characters escaped."""
    return _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), str(text))


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _line(learning: Any) -> str:
    if not isinstance(learning, dict):
        return _shown(learning)
    scope = _mapping(learning.get("scope"))
    where = f"{scope.get('account')}/{scope.get('repository') or '*'}"
    paths = scope.get("paths") or []
    if paths:
        where += " " + ",".join(map(str, paths))
    about = f"rule {learning['rule']}" if learning.get("rule") else (
        f"category {learning['category']}" if learning.get("category") else "-")
    text = " ".join(str(learning.get("text", "")).split())
    text = text if len(text) <= TEXT_WIDTH else text[: TEXT_WIDTH - 1] + "…"
    return _shown(f"{learning.get('id')}  {learning.get('kind')}  {where}  {about}  {text}")


def _text(action: str, answer: Any) -> str:
    if action == "list":
        items = answer.get("items") if isinstance(answer, dict) else None
        if not isinstance(items, list) or not items:
            return "No learnings."
        return "\n".join(_line(item) for item in items)
    if action == "rm":
        return f"Deleted: {_line(answer)}"
    if not isinstance(answer, dict):
        return _shown(answer)
    source = _mapping(answer.get("source"))
    lines = [("Added: " if action == "add" else "Changed: " if action == "edit" else "") + _line(answer),
             f"  created {answer.get('created')} by {source.get('author') or 'unknown'}"
             + (f" ({source['url']})" if source.get("url") else ""),
             *(f"  | {line}" for line in str(answer.get("text", "")).splitlines())]
    return "\n".join(_shown(line) for line in lines)
