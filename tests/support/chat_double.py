"""A local OpenAI-compatible chat-completions server for the engine's tests.

It serves `POST /v1/chat/completions` (and the model list, `GET /v1/models`) on 127.0.0.1 over real HTTP, answers each model from a
script (the last reply of a model's script repeats), and records every request it receives,
headers included, so a test can check what the engine sent. Replies mimic what real servers do:
OpenAI's error objects, a 400 from a server without structured output when `response_format` is
sent, a 500, an answer slower than the client's timeout.

Tools (OpenAI's function calling): a scripted reply may call tools (`asks`); the double then
checks the conversation the client sends back as OpenAI does — every tool call answered by a
`role: "tool"` message naming its id, right after the assistant message that made it, and no
tool message for a call it never made — and answers a request that breaks it with OpenAI's 400
(recorded in `violations`). A request that offers no tools, or says `tool_choice: "none"`, cannot
be answered with tool calls: the script's tool-calling replies are passed over to the next
answer, as a real model answers when it may not call tools (unless `ignores_tool_choice`, a
hostile server's way). `rejects_tools` answers 400 to a request with `tools`, as Ollama does for
a model without tool support.
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
    tool_calls: tuple[tuple[str, Any], ...] = ()  # (name, arguments: an object, or a string sent as it is)
    rejects_tools: bool = False  # answer 400 while the request has tools (not consumed)
    ignores_tool_choice: bool = False  # call tools even when the request says it may not


def asks(*calls: tuple[str, Any], ignores_tool_choice: bool = False, usage: tuple[int, int] | None = None) -> Reply:
    """A reply that calls tools: `asks(("read", {"path": "a.py"}), ("search", {"text": "x"}))`."""
    return Reply(tool_calls=tuple(calls), ignores_tool_choice=ignores_tool_choice, usage=usage)


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
    violations: list[str] = field(default_factory=list)  # tool conversations OpenAI would refuse
    issued: set[str] = field(default_factory=set)  # ids of the tool calls it made
    listings: int = 0  # `GET /v1/models` requests (kept apart from the completions in `requests`)

    def answer(self, model: str, *replies: Reply) -> None:
        self.script[model] = list(replies)

    def answer_when(self, model: str, text: str, reply: Reply) -> None:
        """Answer `model`'s requests that mention `text` with `reply`, every time."""
        self.routes.setdefault(model, []).append((text, reply))

    async def start(self) -> ChatDouble:
        self._closing = asyncio.Event()
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._completions)
        app.router.add_get("/v1/models", self._models)
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

    async def _models(self, request: web.Request) -> web.Response:
        """OpenAI's model list (`GET /v1/models`): the scripted and routed models, under the same key."""
        self.listings += 1
        if self.api_key is not None and request.headers.get("Authorization") != f"Bearer {self.api_key}":
            return _error(401, "Incorrect API key provided")
        names = sorted({*self.script, *self.routes})
        return web.json_response({"object": "list", "data": [{"id": name, "object": "model", "owned_by": "double"}
                                                              for name in names]})

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
        while len(replies) > 1 and _passed_over(replies[0], body):  # it may not call tools: it answers
            replies.pop(0)
        reply = replies[0]
        problem = self._tool_problem(body)
        if problem is not None:
            self.violations.append(problem)
            return _error(400, problem)
        if reply.delay:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._closing.wait(), reply.delay)
        if reply.rejects_tools and "tools" in body:
            return _error(400, f"registry.ollama.ai/library/{body.get('model')} does not support tools")  # not consumed
        if reply.rejects_response_format and "response_format" in body:
            return _error(400, "response_format is not supported by this server")  # not consumed
        if len(replies) > 1:
            replies.pop(0)
        if reply.status != 200:
            return _error(reply.status, reply.error)
        message: dict[str, Any] = {"role": "assistant", "content": reply.content}
        calls = reply.tool_calls if not _passed_over(reply, body) else ()
        if calls:
            message["tool_calls"] = [self._call(name, arguments) for name, arguments in calls]
        answer: dict[str, Any] = {
            "id": "chatcmpl-double",
            "object": "chat.completion",
            "model": body.get("model"),
            "choices": [{"index": 0, "finish_reason": "tool_calls" if calls else "stop", "message": message}],
        }
        if reply.usage is not None:
            prompt, completion = reply.usage
            answer["usage"] = {"prompt_tokens": prompt, "completion_tokens": completion,
                               "total_tokens": prompt + completion}
        return web.json_response(answer)


    def _call(self, name: str, arguments: Any) -> dict:
        call_id = f"call_{len(self.issued) + 1}"
        self.issued.add(call_id)
        text = arguments if isinstance(arguments, str) else json.dumps(arguments)
        return {"id": call_id, "type": "function", "function": {"name": name, "arguments": text}}

    def _tool_problem(self, body: dict) -> str | None:
        """What OpenAI would refuse in the conversation's tool messages, or None."""
        waiting: list[str] = []  # ids of the last assistant message's calls not answered yet
        for index, message in enumerate(body.get("messages") or []):
            role = message.get("role") if isinstance(message, dict) else None
            if role == "tool":
                call_id = message.get("tool_call_id")
                if call_id not in waiting:
                    return (f"Invalid parameter: messages[{index}]: messages with role 'tool' must be a response "
                            f"to a preceding message with 'tool_calls' (no call {call_id!r} to answer)")
                if not isinstance(message.get("content"), str):
                    return f"Invalid parameter: messages[{index}].content must be a string"
                waiting.remove(call_id)
                continue
            if waiting:
                return ("An assistant message with 'tool_calls' must be followed by tool messages responding to "
                        f"each 'tool_call_id'. The following tool_call_ids did not have response messages: "
                        f"{', '.join(waiting)}")
            if role == "assistant" and message.get("tool_calls"):
                waiting = [c.get("id") for c in message["tool_calls"]]
                unknown = [i for i in waiting if i not in self.issued]
                if unknown:
                    return f"Invalid parameter: messages[{index}]: tool call ids never issued: {unknown}"
        if waiting:
            return f"the tool calls {', '.join(waiting)} were not answered"
        return None

    def tool_messages(self, model: str) -> list[dict]:
        """Every `role: "tool"` message the model's last request sent back."""
        last = self.requests_for(model)[-1].body
        return [m for m in last.get("messages", []) if m.get("role") == "tool"]


def _passed_over(reply: Reply, body: dict) -> bool:
    """Whether `reply` calls tools that the request does not let it call (and it obeys)."""
    forbidden = not body.get("tools") or body.get("tool_choice") == "none"
    return bool(reply.tool_calls) and forbidden and not reply.ignores_tool_choice


def _routed(routes: list[tuple[str, Reply]], body: Any) -> Reply | None:
    text = "\n".join(str(m.get("content", "")) for m in body.get("messages", []) if isinstance(m, dict))
    return next((reply for needle, reply in routes if needle in text), None)


def _error(status: int, message: str) -> web.Response:
    return web.json_response(
        {"error": {"message": message, "type": "invalid_request_error", "code": None}}, status=status
    )
