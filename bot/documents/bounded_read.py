"""Reading an HTTP body up to a bound, whole.

`StreamReader.read(n)` returns what has arrived so far, up to `n` bytes, not `n` bytes: a body
that comes in several chunks (a large ID token, a long group list) read that way is cut at its
first chunk and then fails to parse, far from the cause. Every bounded read of a body goes here.
"""

from __future__ import annotations

import aiohttp

CHUNK = 64 * 1024


async def read_at_most(content: aiohttp.StreamReader, limit: int) -> bytes:
    """The body, whole, when it is at most `limit` bytes; else its first `limit + 1` bytes (so that
    the caller, comparing the length, knows it was over), the rest left unread."""
    chunks: list[bytes] = []
    size = 0
    while size <= limit and (chunk := await content.read(min(CHUNK, limit + 1 - size))):
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)
