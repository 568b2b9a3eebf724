"""Whether a declared model provider answers, asked once before work that needs it: `reviewer
doctor` (one line a provider) and `reviewer eval` (which stops before its cases when one does not).

The question is `GET {baseUrl}/models` with the provider's key: OpenAI, vLLM, llama.cpp's server
and Ollama all serve it, it costs no tokens, and it says apart a server that is down, one that
refuses the key, and one that answers. A server that answers but lists no models (404, 405) is
reachable, which is all this asks; the key is then unchecked and the answer says so. Nothing of
the key appears in an answer: a provider's words are cut and scrubbed as the engine's are.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import aiohttp

from bot.config.model import Provider
from bot.documents.jsonbody import JsonBodyError, parse_json
from bot.engine.api_keys import ApiKeyError, resolve_api_key
from bot.secrets.redaction import redact, register_secret

TIMEOUT = 10.0  # seconds, at most: a provider's own `timeout` when shorter
MAX_BYTES = 1024 * 1024  # of the model list read


@dataclass(frozen=True)
class ProviderAnswer:
    """`level` is "ok" (it answers), "warn" (it answers, but something is off) or "fail" (work
    that needs it cannot be done); `detail` says what was found, never a key."""

    level: str
    detail: str


async def ask_provider(provider: Provider, session: aiohttp.ClientSession, *, secrets_dir: str | Path | None,
                       environ: Mapping[str, str]) -> ProviderAnswer:
    url = provider.base_url.rstrip("/") + "/models"
    headers = {"Accept": "application/json"}
    key = None
    if provider.api_key:
        try:
            key = resolve_api_key(provider.api_key, environ=environ, secrets_dir=secrets_dir)
        except ApiKeyError as exc:
            return ProviderAnswer("fail", f"apiKey {exc}")
        register_secret(key)
        headers["Authorization"] = f"Bearer {key}"
    timeout = aiohttp.ClientTimeout(total=min(TIMEOUT, provider.timeout))
    try:
        async with session.get(url, headers=headers, timeout=timeout) as response:
            status, body = response.status, await response.content.read(MAX_BYTES)
    except TimeoutError:
        return ProviderAnswer("fail", f"no answer from {url} within {timeout.total:g} s")
    except aiohttp.ClientError as exc:
        return ProviderAnswer("fail", f"no answer from {url}: {_cause(exc)}")
    return _read(url, status, body, key)


def _read(url: str, status: int, body: bytes, key: str | None) -> ProviderAnswer:
    if status in (401, 403):
        return ProviderAnswer("fail", f"{url} answered {status}: the provider refused the apiKey "
                                      f"({'none was sent' if key is None else 'check the secret it names'})")
    if status in (404, 405):
        return ProviderAnswer("warn", f"answers at {url.removesuffix('/models')}, but lists no models ({status}); "
                                      "the apiKey was not checked")
    if status != 200:
        return ProviderAnswer("fail", f"{url} answered {status}: {_excerpt(body, key)}")
    try:
        data = parse_json(body)
    except (JsonBodyError, ValueError):
        return ProviderAnswer("fail", f"{url} answered 200, but not with JSON: is baseUrl the API's (…/v1)?")
    models = data.get("data") if isinstance(data, dict) else None
    count = f"{len(models)} model(s) listed" if isinstance(models, list) else "it answers"
    return ProviderAnswer("ok", f"{url.removesuffix('/models')}: {count}")


def _cause(exc: aiohttp.ClientError) -> str:
    if isinstance(exc, aiohttp.ClientConnectorError) and exc.os_error is not None:
        error = exc.os_error
        return os.strerror(error.errno) if isinstance(error.errno, int) and error.errno > 0 else str(error)
    return type(exc).__name__


def _excerpt(body: bytes, key: str | None, limit: int = 200) -> str:
    text = " ".join(body.decode("utf-8", "replace").split())
    if key:
        text = text.replace(key, "[REDACTED]")
    text = redact(text)
    return (text[:limit] + "…") if len(text) > limit else (text or "(empty body)")
