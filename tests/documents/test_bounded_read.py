"""A bounded read takes the whole body when it arrives in many chunks, and stops one byte past
its bound when it is too large (over real HTTP: a server that sends its body in pieces)."""

from __future__ import annotations

import asyncio

import aiohttp
from aiohttp import web

from bot.documents.bounded_read import read_at_most


async def _chunked_server(pieces: list[bytes]) -> tuple[web.AppRunner, str]:
    async def handler(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse()
        await response.prepare(request)
        for piece in pieces:
            await response.write(piece)
            await asyncio.sleep(0.01)  # each piece arrives on its own
        await response.write_eof()
        return response

    app = web.Application()
    app.router.add_get("/", handler)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    return runner, f"http://127.0.0.1:{runner.addresses[0][1]}/"


async def _read(pieces: list[bytes], limit: int) -> bytes:
    runner, url = await _chunked_server(pieces)
    try:
        async with aiohttp.ClientSession() as http, http.get(url) as response:
            return await read_at_most(response.content, limit)
    finally:
        await runner.cleanup()


async def test_a_body_in_many_pieces_is_read_whole():
    pieces = [bytes([65 + n]) * 1000 for n in range(20)]
    assert await _read(pieces, 20_000) == b"".join(pieces)


async def test_a_body_over_the_bound_is_read_one_byte_past_it():
    body = await _read([b"x" * 700] * 10, 5000)
    assert len(body) == 5001


async def test_an_empty_body_is_empty():
    assert await _read([], 10) == b""
