"""The listener `reviewer login` (bot/commands/login.py) opens on 127.0.0.1 for the browser's
answer: `GET /callback?response=…`, the sealed answer only the key it was made with opens."""

from __future__ import annotations

import asyncio
from typing import Any

from aiohttp import web

from bot.auth.sealing import SealError, unseal


class AnswerRefused(Exception):
    """The browser came back with an answer that cannot be opened, or with the server's refusal."""


class LoginListener:
    """`async with LoginListener(key) as listener`: listens on a free port of 127.0.0.1 at
    `listener.url`, until the block ends; `listener.answer` is the opened answer, or AnswerRefused."""

    def __init__(self, key: bytes) -> None:
        self.key = key
        self.answer: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        app = web.Application()
        app.router.add_get("/callback", self.callback)
        self.runner = web.AppRunner(app, access_log=None)
        self.url = ""

    async def __aenter__(self) -> LoginListener:
        await self.runner.setup()
        try:
            site = web.TCPSite(self.runner, "127.0.0.1", 0)
            await site.start()
        except BaseException:
            await self.runner.cleanup()
            raise
        port = self.runner.addresses[0][1]
        self.url = f"http://127.0.0.1:{port}/callback?secret_key={self.key.hex()}"
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.runner.cleanup()

    async def callback(self, request: web.Request) -> web.Response:
        sealed = request.query.get("response", "")
        try:
            answer = unseal(self.key, sealed)
        except SealError as exc:
            if not self.answer.done():
                self.answer.set_exception(AnswerRefused(str(exc)))
            return _page("Sign-in failed", "The answer could not be opened. Run `reviewer login` again.", 400)
        error = answer.get("error")
        if isinstance(error, dict):
            refusal = AnswerRefused(f"the sign-in was refused ({error.get('check')}): {error.get('message')}")
            if not self.answer.done():
                self.answer.set_exception(refusal)
            return _page("Sign-in refused", "The server refused the sign-in; the terminal says why.", 403)
        if not self.answer.done():
            self.answer.set_result(answer)
        return _page("Signed in", "You are signed in. You may close this window and return to the terminal.")


def _page(title: str, text: str, status: int = 200) -> web.Response:
    body = (f"<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{title}</title></head>"
            f"<body><main><h1>{title}</h1><p>{text}</p></main></body></html>")
    return web.Response(text=body, status=status, content_type="text/html",
                        headers={"Content-Security-Policy": "default-src 'none'"})
