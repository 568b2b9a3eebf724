"""The HTTP edges of the resource API: Kubernetes `Status` answers (also for the gate's refusals),
body decoding. Label selectors are bot/connectors/selectors.py."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from bot.auth.guard import Denial
from bot.connectors.admission import cause_of, unreadable_yaml
from bot.documents.bounded_read import read_at_most
from bot.documents.jsonbody import JsonBodyError, parse_json
from bot.documents.yamldoc import MAX_BYTES, load_yaml

MAX_BODY = MAX_BYTES  # the same bound as a YAML file: 256 KiB
JSON_TYPES = ("application/json",)
YAML_TYPES = ("application/yaml", "application/x-yaml", "text/yaml", "application/apply-patch+yaml")

_REASONS = {400: "BadRequest", 401: "Unauthorized", 403: "Forbidden", 404: "NotFound", 405: "MethodNotAllowed",
            409: "Conflict", 413: "RequestEntityTooLarge", 415: "UnsupportedMediaType", 422: "Invalid"}


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


class InvalidBody(Exception):
    """A body that decodes but breaks a bound of its format (nesting, integer size, keys): a 422
    whose causes name the place, answered by the caller, which knows the kind and name."""

    def __init__(self, causes: list[dict]) -> None:
        super().__init__("; ".join(c["message"] for c in causes))
        self.causes = causes


async def read_body(request: web.Request) -> dict:
    """The request body as a mapping, from JSON or YAML; raises BodyError with the answer to give,
    or InvalidBody."""
    media = request.content_type
    if media not in JSON_TYPES + YAML_TYPES:
        raise BodyError(status_response(415, f"unsupported media type {media!r}; send application/json "
                                             "or application/yaml"))
    raw = await _read_bounded(request)
    value = _decode_json(raw) if media in JSON_TYPES else _decode_yaml(raw)
    if not isinstance(value, dict):
        raise BodyError(status_response(400, "the body must be one object (a mapping with apiVersion, kind, "
                                             "metadata and spec)"))
    return value


async def _read_bounded(request: web.Request) -> bytes:
    too_large = BodyError(status_response(413, f"the body is larger than {MAX_BODY} bytes"))
    if request.content_length is not None and request.content_length > MAX_BODY:
        raise too_large
    raw = await read_at_most(request.content, MAX_BODY)
    if len(raw) > MAX_BODY:
        raise too_large
    return raw


def _decode_json(raw: bytes) -> Any:
    try:
        return parse_json(raw)
    except JsonBodyError as error:
        if error.code == "syntax":
            raise BodyError(status_response(400, error.message)) from None
        raise InvalidBody([{"field": error.pointer, "reason": error.code, "message": error.message}]) from None


def _decode_yaml(raw: bytes) -> Any:
    doc, problems = load_yaml(raw)
    refusal = unreadable_yaml(doc, problems)
    if refusal:
        raise BodyError(status_response(400, refusal))
    if problems:
        raise InvalidBody([cause_of(p) for p in problems])
    return doc.value if doc is not None else None


def denial_response(denial: Denial) -> web.Response:
    """401 (with the challenge), 403 `Status` (`Forbidden`, `MFARequired`), or 429 with Retry-After."""
    if denial.status == 429:
        response = status_response(429, denial.message, reason=denial.reason)
        response.headers["Retry-After"] = str(denial.retry_after or 1)
        return response
    if denial.status == 401:
        response = status_response(401, "Unauthorized")
        response.headers["WWW-Authenticate"] = "Bearer"
        return response
    return status_response(403, denial.message, reason=denial.reason)
