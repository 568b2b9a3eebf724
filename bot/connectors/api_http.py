"""The HTTP edges of the resource API: Kubernetes `Status` answers, body decoding, label selectors."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from bot.yamldoc import MAX_BYTES, load_yaml

MAX_BODY = MAX_BYTES  # the same bound as a YAML file: 256 KiB
JSON_TYPES = ("application/json",)
YAML_TYPES = ("application/yaml", "application/x-yaml", "text/yaml", "application/apply-patch+yaml")

_REASONS = {400: "BadRequest", 401: "Unauthorized", 403: "Forbidden", 404: "NotFound", 409: "Conflict",
            413: "RequestEntityTooLarge", 415: "UnsupportedMediaType", 422: "Invalid"}


def status_response(code: int, message: str, *, causes: list[dict] | None = None,
                    details: dict | None = None, reason: str | None = None) -> web.Response:
    """A `Status` object, as the Kubernetes API answers every failure."""
    body: dict[str, Any] = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                            "message": message, "reason": reason or _REASONS[code], "code": code}
    if causes is not None or details:
        body["details"] = {**(details or {}), **({"causes": causes} if causes is not None else {})}
    return web.json_response(body, status=code)


class BodyError(Exception):
    def __init__(self, response: web.Response) -> None:
        super().__init__(response.text)
        self.response = response


async def read_body(request: web.Request) -> dict:
    """The request body as a mapping, from JSON or YAML; raises BodyError with the answer to give."""
    media = request.content_type
    if media not in JSON_TYPES + YAML_TYPES:
        raise BodyError(status_response(415, f"unsupported media type {media!r}; send application/json "
                                             "or application/yaml"))
    raw = await _read_bounded(request)
    if media in JSON_TYPES:
        value = _decode_json(raw)
    else:
        doc, problems = load_yaml(raw)
        if problems or doc is None:
            first = problems[0] if problems else None
            where = f" (line {first.line}, column {first.column})" if first else ""
            raise BodyError(status_response(400, f"the body is not valid YAML{where}: "
                                                 f"{first.message if first else 'empty'}"))
        value = doc.value
    if not isinstance(value, dict):
        raise BodyError(status_response(400, "the body must be one object (a mapping with apiVersion, kind, "
                                             "metadata and spec)"))
    return value


async def _read_bounded(request: web.Request) -> bytes:
    too_large = BodyError(status_response(413, f"the body is larger than {MAX_BODY} bytes"))
    if request.content_length is not None and request.content_length > MAX_BODY:
        raise too_large
    chunks, size = [], 0
    while chunk := await request.content.read(64 * 1024):
        size += len(chunk)
        if size > MAX_BODY:
            raise too_large
        chunks.append(chunk)
    return b"".join(chunks)


def _decode_json(raw: bytes) -> Any:
    try:
        return json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise BodyError(status_response(400, "the body is not UTF-8 text")) from None
    except json.JSONDecodeError as exc:
        raise BodyError(status_response(400, f"the body is not valid JSON (line {exc.lineno}, column "
                                             f"{exc.colno}): {exc.msg}")) from None
    except RecursionError:
        raise BodyError(status_response(400, "the body is nested too deeply")) from None


@dataclass(frozen=True)
class Requirement:
    key: str
    op: str  # "=", "!=", "exists", "!exists"
    value: str = ""

    def matches(self, labels: dict) -> bool:
        if self.op == "exists":
            return self.key in labels
        if self.op == "!exists":
            return self.key not in labels
        equal = labels.get(self.key) == self.value
        return equal if self.op == "=" else not equal


def parse_selector(text: str) -> list[Requirement] | str:
    """Kubernetes' equality-based selectors: `a=b`, `a==b`, `a!=b`, `a`, `!a`, comma-separated."""
    found = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        if "!=" in part:
            key, value = part.split("!=", 1)
            op = "!="
        elif "=" in part:
            key, value = part.split("==", 1) if "==" in part else part.split("=", 1)
            op = "="
        elif part.startswith("!"):
            key, value, op = part[1:], "", "!exists"
        else:
            key, value, op = part, "", "exists"
        key, value = key.strip(), value.strip()
        if not key or any(c in key + value for c in " =!()"):
            return f"cannot parse the label selector requirement {part!r}; use `key=value`, `key!=value`, " \
                   "`key` or `!key`, comma-separated"
        found.append(Requirement(key, op, value))
    return found
