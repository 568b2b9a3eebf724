"""The progress line of `reviewer review`: on a terminal, redrawn while the model works and erased
when it is done; on anything else (a CI log, a file), not a character of it. The command runs as
its own process with stderr on a pseudo-terminal, as in a shell."""

from __future__ import annotations

import asyncio
import os
import pty
import sys

from tests.support.chat_double import Reply
from tests.support.local_support import admin_file, commit, git, new_repo
from tests.support.review_support import CALC_BASE, CALC_HEAD, PRIMARY


def _repo(tmp_path):
    path = tmp_path / "app"
    new_repo(path, {"src/calc.py": CALC_BASE})
    git(path, "checkout", "-q", "-b", "feature")
    commit(path, {"src/calc.py": CALC_HEAD}, "ratio")
    return path


async def _run(tmp_path, chat, stderr_on_tty: bool) -> tuple[int, str, str]:
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    args = [sys.executable, "-m", "bot", "review", "--repo", str(_repo(tmp_path)), "--base", "main",
            "--admin-config", admin_file(tmp_path, chat), "--fail-on", "never"]
    if not stderr_on_tty:
        done = await asyncio.create_subprocess_exec(*args, env=env, stdout=asyncio.subprocess.PIPE,
                                                    stderr=asyncio.subprocess.PIPE)
        out, err = await done.communicate()
        return done.returncode or 0, out.decode(), err.decode()
    leader, follower = pty.openpty()
    try:
        done = await asyncio.create_subprocess_exec(*args, env=env, stdout=asyncio.subprocess.PIPE, stderr=follower)
        os.close(follower)
        out, _ = await done.communicate()
        err = b""
        while True:  # everything the process wrote to the terminal; EIO once it is closed
            try:
                chunk = os.read(leader, 65536)
            except OSError:
                break
            if not chunk:
                break
            err += chunk
    finally:
        os.close(leader)
    return done.returncode or 0, out.decode(), err.decode()


async def test_a_terminal_sees_the_line_while_the_model_works(tmp_path, chat):
    chat.answer(PRIMARY, Reply(content='{"findings": []}', delay=1.0))
    code, out, err = await _run(tmp_path, chat, stderr_on_tty=True)
    assert code == 0, err
    assert out.startswith("Reviewer: main...HEAD")
    assert err.startswith(f"\r\x1b[2KReviewing 1 file(s) with local/{PRIMARY}: 0 model calls, 0 s")
    assert err.endswith("\r\x1b[2K")  # erased at the end: the terminal is left clean


async def test_a_log_gets_no_progress_line(tmp_path, chat):
    chat.answer(PRIMARY, Reply(content='{"findings": []}', delay=1.0))
    code, out, err = await _run(tmp_path, chat, stderr_on_tty=False)
    assert code == 0, err
    assert out.startswith("Reviewer: main...HEAD")
    assert err == ""
