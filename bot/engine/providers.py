"""Model providers: the engine's one I/O edge.

A provider is anything with one async method, `complete(model, messages, schema) -> str`, so a new
protocol is one class; one that can offer tools (lookups the model asks for before it answers,
bot/engine/tool_loop.py) also has `chat(model, messages, schema, tools, tool_choice) -> Completion`. `type: openai` is the OpenAI-compatible chat-completions protocol that
OpenAI, Azure-style gateways, vLLM, llama.cpp's server and Ollama all speak.

Every failure is a `ProviderError` whose message is safe to show: it names the provider and what
went wrong, and the API key is cut out of anything a provider echoes back — before the echo is
shortened, so that a key straddling the cut cannot leave its prefix behind. Every key resolved
is registered with the log redactor (`bot.secrets.redaction`), which scrubs it from every log line.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import aiohttp

from bot import telemetry
from bot.config.model import Provider
from bot.documents.bounded_read import read_at_most
from bot.documents.jsonbody import parse_json
from bot.engine.api_keys import ApiKeyError, resolve_api_key
from bot.engine.usage import Usage, reported_tokens
from bot.secrets.redaction import REDACTED, redact, register_secret

log = logging.getLogger("reviewer.engine.providers")

MAX_RESPONSE_BYTES = 4 * 1024 * 1024
EXCERPT_CHARACTERS = 300  # of a provider's error message, once redacted
_SCHEMA_REJECTED = (400, 422)  # how servers without structured output refuse `response_format`


MAX_TOOL_CALLS = 8  # of one answer; more are not read (the tool loop answers fewer still)
# Characters of a tool call's id, name or arguments kept: the calls are sent back with the next
# request, so a model cannot fill its own context with them; cut arguments do not parse.
_TOOL_FIELD = 2_048


class ProviderError(Exception):
    """A call that gave no answer. The message is safe to log and to post."""


_NO_TOKENS: tuple[int | None, int | None] = (None, None)


class ProviderTimeout(ProviderError):
    """No answer within the provider's `timeout`."""


class ToolsRefused(ProviderError):
    """The provider refused a request for its `tools` (a 400 or 422 whose message names them)."""


@dataclass(frozen=True, slots=True)
class ToolCall:
    id: str
    name: str
    arguments: str  # JSON text as the model wrote it; checked by whoever runs the tool


@dataclass(frozen=True, slots=True)
class Completion:
    """An answer: text, or tool calls (only read when the request offered tools), or both."""

    text: str | None
    tool_calls: tuple[ToolCall, ...] = ()

    def message(self) -> dict:
        """The assistant message to send back before the tool answers: the calls as we read them
        (ids, names and arguments cut to size), not as the provider sent them."""
        return {"role": "assistant", "content": self.text,
                "tool_calls": [{"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                               for c in self.tool_calls]}


FINDINGS_SCHEMA_NAME = "review_findings"  # the `json_schema` name a review's answer is asked under


class ModelClient(Protocol):
    async def complete(self, model: str, messages: list[dict], schema: dict | None,
                       schema_name: str = FINDINGS_SCHEMA_NAME) -> str:
        """The model's answer text; raises ProviderError."""
        ...

    async def chat(self, model: str, messages: list[dict], schema: dict | None, tools: list[dict] | None = None,
                   tool_choice: str = "auto", schema_name: str = FINDINGS_SCHEMA_NAME) -> Completion:
        """The model's answer, tool calls included; raises ProviderError (ToolsRefused)."""
        ...


def split_model_ref(ref: str) -> tuple[str, str]:
    """`<provider>/<model>` → (provider, model); the model part may itself contain `/`."""
    provider, sep, model = ref.partition("/")
    if not sep or not provider or not model:
        raise ProviderError(f"model {ref!r} is not a <provider>/<model> reference")
    return provider, model


class OpenAIChatClient:
    """`POST {baseUrl}/chat/completions`, asking for JSON through `response_format` when given a
    schema. A provider that refuses `response_format` (400/422) is asked again without it, and
    not asked with it again by this client: the prompt states the format either way."""

    def __init__(
        self,
        provider: Provider,
        session: aiohttp.ClientSession,
        *,
        secrets_dir: str | Path | None = None,
        environ: Mapping[str, str] | None = None,
        usage: Usage | None = None,
    ) -> None:
        self._provider = provider
        self._session = session
        self._secrets_dir = secrets_dir
        self._environ = os.environ if environ is None else environ
        self._schema_supported = True
        self._usage = usage

    async def complete(self, model: str, messages: list[dict], schema: dict | None,
                       schema_name: str = FINDINGS_SCHEMA_NAME) -> str:
        completion = await self.chat(model, messages, schema, schema_name=schema_name)
        if completion.text is None:
            raise self._error("the completion has no text content", None)
        return completion.text

    async def chat(self, model: str, messages: list[dict], schema: dict | None, tools: list[dict] | None = None,
                   tool_choice: str = "auto", schema_name: str = FINDINGS_SCHEMA_NAME) -> Completion:
        """One request; with `tools`, the model may answer with calls to them (`tool_choice`:
        `auto`, or `none` to have it answer); `schema` is asked for under `schema_name`. Raises
        ToolsRefused when the provider refuses them.
        Traced and counted (bot.telemetry): the provider, model, outcome and tokens, never the
        messages or the key."""
        name = self._provider.name
        with telemetry.span(f"model {name}/{model}", gen_ai__operation__name="chat", gen_ai__provider__name=name,
                            gen_ai__request__model=model, tools=len(tools or ())) as span:
            outcome, tokens = "error", _NO_TOKENS
            try:
                completion, tokens = await self._chat(model, messages, schema, tools, tool_choice, schema_name)
                outcome = "ok"
                return completion
            except ToolsRefused:
                outcome = "refused"
                raise
            except ProviderTimeout:
                outcome = "timeout"
                raise
            finally:
                price, (prompt, answer) = self._provider.price_of(model), tokens
                money = price.cost(prompt, answer) if price is not None and prompt is not None and answer is not None \
                    else None
                telemetry.model_call(telemetry.ModelCall(name, model, outcome, *tokens, money=money), span)

    async def _chat(self, model: str, messages: list[dict], schema: dict | None, tools: list[dict] | None,
                    tool_choice: str, schema_name: str) -> tuple[Completion, tuple[int | None, int | None]]:
        key = self._api_key()
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if key:
            headers["Authorization"] = f"Bearer {key}"
        body: dict[str, Any] = {"model": model, "messages": messages}
        if schema is not None and self._schema_supported:
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": schema_name, "schema": schema},
            }
        if tools:
            body["tools"], body["tool_choice"] = tools, tool_choice
        ref = f"{self._provider.name}/{model}"
        status, payload = await self._post(body, headers, key, ref)
        if status in _SCHEMA_REJECTED and tools and "tool" in _excerpt(payload, key).lower():
            raise ToolsRefused(redact(_without(
                f"provider {self._provider.name!r} refused tools: HTTP {status}: {_excerpt(payload, key)}", key)))
        if status in _SCHEMA_REJECTED and "response_format" in body:
            log.info("provider %s refused response_format (HTTP %s); asking without it",
                     self._provider.name, status)
            self._schema_supported = False
            del body["response_format"]
            status, payload = await self._post(body, headers, key, ref)
        if status != 200:
            raise self._error(f"HTTP {status}: {_excerpt(payload, key)}", key)
        data = self._completion(payload, key)
        tokens = reported_tokens(data)
        if self._usage is not None:
            self._usage.answered(ref, *tokens)
        calls = self._tool_calls(data) if tools else ()
        return Completion(self._content(data, key) if not calls else self._text(data), calls), tokens

    def _api_key(self) -> str | None:
        if not self._provider.api_key:
            return None  # a local server (llama.cpp, Ollama) usually needs none
        try:
            key = resolve_api_key(self._provider.api_key, environ=self._environ, secrets_dir=self._secrets_dir)
        except ApiKeyError as exc:
            raise ProviderError(f"provider {self._provider.name!r}: apiKey {exc}") from None
        register_secret(key)
        return key

    async def _post(self, body: dict, headers: dict, key: str | None, ref: str) -> tuple[int, bytes]:
        url = self._provider.base_url.rstrip("/") + "/chat/completions"
        timeout = aiohttp.ClientTimeout(total=self._provider.timeout)
        if self._usage is not None:
            self._usage.sent(ref)
        try:
            async with self._session.post(url, json=body, headers=headers, timeout=timeout) as resp:
                return resp.status, await _read_bounded(resp)
        except TimeoutError:  # aiohttp raises asyncio.TimeoutError, the same class since 3.11
            raise ProviderTimeout(str(self._error(f"no answer within {self._provider.timeout:g} s (timeout)", key))) \
                from None
        except aiohttp.ClientError as exc:
            raise self._error(f"request failed ({type(exc).__name__}: {exc})", key) from None

    def _completion(self, payload: bytes, key: str | None) -> Any:
        try:
            return parse_json(payload)
        except ValueError:
            raise self._error("the response is not a chat completion", key) from None

    def _content(self, data: Any, key: str | None) -> str:
        try:
            data["choices"][0]["message"]
        except (LookupError, TypeError):
            raise self._error("the response is not a chat completion", key) from None
        content = self._text(data)
        if content is None:
            raise self._error("the completion has no text content", key)
        return content

    @staticmethod
    def _text(data: Any) -> str | None:
        """The message's text (content parts joined), None when it has none."""
        try:
            content = data["choices"][0]["message"]["content"]
        except (LookupError, TypeError):
            return None
        if isinstance(content, list):  # content parts: keep the text ones
            content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
        return content if isinstance(content, str) and content.strip() else None

    @staticmethod
    def _tool_calls(data: Any) -> tuple[ToolCall, ...]:
        """The message's tool calls, each cut to size; a call without an id gets one (its answer
        must name it), one without a name keeps an empty one (it is answered with an error)."""
        try:
            calls = data["choices"][0]["message"].get("tool_calls")
        except (LookupError, TypeError, AttributeError):
            return ()
        out = []
        for index, call in enumerate(calls[:MAX_TOOL_CALLS] if isinstance(calls, list) else ()):
            function = call.get("function") if isinstance(call, dict) else None
            function = function if isinstance(function, dict) else {}
            arguments = function.get("arguments", "")
            if not isinstance(arguments, str):  # some servers send the object itself
                arguments = json.dumps(arguments)
            call_id = call.get("id") if isinstance(call, dict) else None
            out.append(ToolCall(
                call_id[:_TOOL_FIELD] if isinstance(call_id, str) and call_id else f"call_{index}",
                str(function.get("name", ""))[:_TOOL_FIELD], arguments[:_TOOL_FIELD]))
        return tuple(out)

    def _error(self, what: str, key: str | None) -> ProviderError:
        return ProviderError(redact(_without(f"provider {self._provider.name!r}: {what}", key)))


async def _read_bounded(resp: aiohttp.ClientResponse) -> bytes:
    body = await read_at_most(resp.content, MAX_RESPONSE_BYTES)
    if len(body) > MAX_RESPONSE_BYTES:
        raise aiohttp.ClientPayloadError(f"response larger than {MAX_RESPONSE_BYTES} bytes")
    return body


def _without(text: str, key: str | None) -> str:
    return text.replace(key, REDACTED) if key else text


def _excerpt(payload: bytes, key: str | None, limit: int = EXCERPT_CHARACTERS) -> str:
    """The provider's own error message where it gives one (OpenAI's `error.message`), the key
    cut out first and then shortened: shortened first, a key straddling the cut would survive
    in part, out of reach of any later replacement."""
    text = payload.decode("utf-8", errors="replace")
    try:
        data = parse_json(text)
        if isinstance(data, dict) and isinstance(data.get("error"), dict):
            text = str(data["error"].get("message", text))
        elif isinstance(data, dict) and isinstance(data.get("error"), str):
            text = data["error"]
    except ValueError:
        pass
    text = _without(" ".join(text.split()), key)
    return (text[:limit] + "…") if len(text) > limit else (text or "(empty body)")


CLIENT_TYPES = {"openai": OpenAIChatClient}


def make_client(
    provider: Provider,
    session: aiohttp.ClientSession,
    *,
    secrets_dir: str | Path | None = None,
    environ: Mapping[str, str] | None = None,
    usage: Usage | None = None,
) -> ModelClient:
    """`usage`, when given, counts every request the client sends and the tokens of each answer."""
    factory = CLIENT_TYPES.get(provider.type)
    if factory is None:
        raise ProviderError(
            f"provider {provider.name!r}: type {provider.type!r} is not supported "
            f"(supported: {', '.join(sorted(CLIENT_TYPES))})"
        )
    return factory(provider, session, secrets_dir=secrets_dir, environ=environ, usage=usage)
