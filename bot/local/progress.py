"""The progress line of a local review: `Reviewing 3 files with local/m1: 2 model calls, 12 s`
on stderr, redrawn in place while the model works and erased when it is done; nothing at all
unless stderr is a terminal (a CI log or a redirected stream gets no control characters)."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable
from typing import IO

from bot.engine.usage import Usage
from bot.loops.pause import pause

INTERVAL = 0.5  # seconds between redraws


def _line(label: str, usage: Usage, seconds: float) -> str:
    calls = usage.calls
    return f"{label}: {calls} model call{'' if calls == 1 else 's'}, {seconds:.0f} s"


@contextlib.asynccontextmanager
async def progress(stream: IO[str], label: str, usage: Usage,
                   clock: Callable[[], float] = time.monotonic) -> AsyncIterator[None]:
    """Shows the line while the block runs, if `stream` is a terminal."""
    if not stream.isatty():
        yield
        return
    started = clock()

    def draw() -> None:
        stream.write(f"\r\x1b[2K{_line(label, usage, clock() - started)}")
        stream.flush()

    async def redraw() -> None:
        while True:  # ends when cancelled: the review is done
            await pause(INTERVAL)
            draw()

    draw()
    task = asyncio.create_task(redraw())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        stream.write("\r\x1b[2K")
        stream.flush()
