"""A local OpenAI-compatible chat-completions server for the engine's tests.

It serves `POST /v1/chat/completions` on 127.0.0.1 over real HTTP, answers each model from a
script (the last reply of a model's script repeats), and records every request it receives,
headers included, so a test can check what the engine sent. Replies mimic what real servers do:
OpenAI's error objects, a 400 from a server without structured output when `response_format` is
sent, a 500, an answer slower than the client's timeout.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web
from aiohttp.test_utils import TestServer


@dataclass(frozen=True)
class Reply:
    content: str | None = None  # the assistant message text (status 200)
    status: int = 200
    error: str = ""  # the error message of a non-200 reply
    delay: float = 0.0  # seconds before answering (cut short when the double closes)
    rejects_response_format: bool = False  # answer 400 while the request has response_format
    usage: tuple[int, int] | None = None  # (prompt, completion) tokens reported as `usage`; None: no `usage`


def findings(*items: dict, fenced: bool = False, prose: str = "", usage: tuple[int, int] | None = None) -> Reply:
    text = json.dumps({"findings": list(items)}, indent=2)
    if fenced:
        text = f"{prose}\n```json\n{text}\n```\n"
    return Reply(content=text, usage=usage)


def failing(status: int = 500, error: str = "internal error") -> Reply:
    return Reply(status=status, error=error)


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class ChatDouble:
    api_key: str | None = None  # when set, requests without `Bearer <api_key>` get 401
    script: dict[str, list[Reply]] = field(default_factory=dict)
    requests: list[Recorded] = field(default_factory=list)
    # model → [(text, reply)]: a request whose messages contain the text gets that reply (the first
    # that matches), whatever the order requests come in; else the model's script answers
    routes: dict[str, list[tuple[str, Reply]]] = field(default_factory=dict)

    def answer(self, model: str, *replies: Reply) -> None:
        self.script[model] = list(replies)

    def answer_when(self, model: str, text: str, reply: Reply) -> None:
        """Answer `model`'s requests that mention `text` with `reply`, every time."""
        self.routes.setdefault(model, []).append((text, reply))

    async def start(self) -> ChatDouble:
        self._closing = asyncio.Event()
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._completions)
        self._server = TestServer(app, host="127.0.0.1")
        await self._server.start_server()
        return self

    @property
    def base_url(self) -> str:
        return str(self._server.make_url("/v1"))

    async def close(self) -> None:
        self._closing.set()
        await self._server.close()

    def requests_for(self, model: str) -> list[Recorded]:
        return [r for r in self.requests if isinstance(r.body, dict) and r.body.get("model") == model]

    async def _completions(self, request: web.Request) -> web.Response:
        try:
            body = await request.json()
        except ValueError:
            return _error(400, "the body is not JSON")
        self.requests.append(Recorded(request.path, dict(request.headers), body))
        if self.api_key is not None and request.headers.get("Authorization") != f"Bearer {self.api_key}":
            return _error(401, "Incorrect API key provided")
        routed = _routed(self.routes.get(body.get("model"), []), body)
        replies = [routed] if routed is not None else self.script.get(body.get("model"))
        if not replies:
            return _error(404, f"The model `{body.get('model')}` does not exist")
        reply = replies[0]
        if reply.delay:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._closing.wait(), reply.delay)
        if reply.rejects_response_format and "response_format" in body:
            return _error(400, "response_format is not supported by this server")  # not consumed
        if len(replies) > 1:
            replies.pop(0)
        if reply.status != 200:
            return _error(reply.status, reply.error)
        answer: dict[str, Any] = {
            "id": "chatcmpl-double",
            "object": "chat.completion",
            "model": body.get("model"),
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": reply.content}}],
        }
        if reply.usage is not None:
            prompt, completion = reply.usage
            answer["usage"] = {"prompt_tokens": prompt, "completion_tokens": completion,
                               "total_tokens": prompt + completion}
        return web.json_response(answer)


def _routed(routes: list[tuple[str, Reply]], body: Any) -> Reply | None:
    text = "\n".join(str(m.get("content", "")) for m in body.get("messages", []) if isinstance(m, dict))
    return next((reply for needle, reply in routes if needle in text), None)


def _error(status: int, message: str) -> web.Response:
    return web.json_response(
        {"error": {"message": message, "type": "invalid_request_error", "code": None}}, status=status
    )
