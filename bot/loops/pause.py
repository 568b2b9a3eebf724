"""A loop's pause between rounds that always honours a request to stop.

Every background loop of the server catches `Exception` so that one failed round (a store outage,
a bug) never ends it, and then sleeps until the next round. A cancellation is not an `Exception`,
so it ends the loop, unless a library swallows it: in Python 3.11 `asyncio.wait_for` (which
psycopg_pool's waits use) can return normally, or raise its own error, when the cancellation
arrives as the awaited thing completes, leaving the task marked as cancelling and running on.
Such a loop then never ends, and whoever awaits it at shutdown (the queue's `stop`) waits for
ever. `pause` checks the task's own record of the request (`Task.cancelling()`) before sleeping.
"""

from __future__ import annotations

import asyncio


async def pause(seconds: float) -> None:
    """Sleep `seconds`; CancelledError instead when this task was asked to stop, even if the
    request was swallowed on the way."""
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError("stopped: the task was cancelled during its last round")
    await asyncio.sleep(seconds)
