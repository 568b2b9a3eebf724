"""A background loop ends when it is cancelled, even if a round swallowed the cancellation
(bot/loops/pause.py): the queue's `stop` awaits its sweep, and once waited for ever on one."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pytest

from bot.loops.pause import pause
from tests.support.server_support import wait_for


async def swallowing_round() -> None:
    """A round that eats a cancellation and returns, as `asyncio.wait_for` can in Python 3.11."""
    try:
        await asyncio.Event().wait()  # runs until it is cancelled
    except asyncio.CancelledError:
        return


async def erroring_round() -> None:
    """A round that turns a cancellation into an error of its own (a library's cleanup failing)."""
    try:
        await asyncio.Event().wait()  # runs until it is cancelled
    except asyncio.CancelledError:
        raise RuntimeError("cleanup failed") from None


def _rounds_reach(rounds: list[int], count: int) -> Callable[[], Awaitable[bool]]:
    async def reached() -> bool:
        return len(rounds) >= count
    return reached


def a_loop(round_: Callable[[], Awaitable[None]], wait: Callable[[float], Awaitable[None]], rounds: list[int],
           at_most: int = 3):
    async def loop() -> None:
        while len(rounds) < at_most:  # a bound, so that a loop that runs on still ends the test
            rounds.append(1)
            try:
                await round_()
            except Exception:  # the server's loops survive a failed round
                pass
            await wait(0.01)
    return loop


@pytest.mark.parametrize("round_", [swallowing_round, erroring_round])
async def test_a_loop_whose_round_swallowed_its_cancellation_still_ends(round_):
    rounds: list[int] = []
    task = asyncio.create_task(a_loop(round_, pause, rounds)())
    await wait_for(_rounds_reach(rounds, 1))  # in its first round
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(asyncio.shield(task), 2)
    assert task.cancelled() and rounds == [1]


@pytest.mark.parametrize("round_", [swallowing_round, erroring_round])
async def test_with_a_plain_sleep_the_same_loop_runs_on(round_):
    """What `pause` is for: with `asyncio.sleep` the cancelled loop starts its next round."""
    rounds: list[int] = []
    task = asyncio.create_task(a_loop(round_, asyncio.sleep, rounds, at_most=2)())
    await wait_for(_rounds_reach(rounds, 1))
    task.cancel()
    await wait_for(_rounds_reach(rounds, 2))  # the cancelled loop starts its next round
    assert not task.done() and len(rounds) == 2
    task.cancel()  # its second round eats this one too; only the bound ends it
    await asyncio.wait_for(task, 2)
    assert len(rounds) == 2 and not task.cancelled()


async def test_pause_sleeps_when_nothing_asked_it_to_stop():
    loop = asyncio.get_running_loop()
    started = loop.time()
    await pause(0.05)
    assert loop.time() - started >= 0.04
