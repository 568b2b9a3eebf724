"""`python -m bot COMMAND …` for the tests that run one command many times (`doctor`, `upload-sarif`).

Each run is still a process of its own, with the caller's arguments, environment, working
directory, standard streams (the caller's very file descriptors: pipes, a file, a terminal),
exit status and signals. What it skips is Python's start and the import of the command: the
process is forked from an interpreter that imported `bot.commands.cli` and the command's module
once for this test process (0.2 to 0.6 s of CPU a run otherwise, most of what `doctor` costs).
The app reads no environment at import (its settings are read when a command runs), so the
command sees only its own; what a library made at import stays the server's (aiohttp's verifying
SSL context: no test here speaks TLS). What a warm run cannot show is the start itself: the tests of what a
command imports, of the entry point and of a fresh process's memory run `python -m bot` as it is.

The caller starts tests/support/warm_client.py (Python without site-packages, 30 ms), which
passes its argv, environment, working directory and descriptors 0-2 over a Unix socket to this
module's server, waits for the command's exit status and leaves with it; a signal it gets is
passed on to the command, and if it dies the command is killed.
"""

from __future__ import annotations

import atexit
import importlib
import io
import json
import os
import runpy
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent.parent
CLIENT = Path(__file__).with_name("warm_client.py")
START_TIMEOUT = 60.0  # seconds for a server to import the command and say it is ready


@dataclass
class _Server:
    process: subprocess.Popen[bytes]
    socket: str
    folder: str


_SERVERS: dict[str, _Server] = {}  # command module → its server, for this test process


def warm_bot(command: str) -> list[str]:
    """What stands for `[sys.executable, "-m", "bot"]` in a test's argv when `command` follows."""
    from bot.commands.cli import COMMANDS

    module = COMMANDS[command].split(":")[0]
    server = _SERVERS.get(module) or _start(module)
    return [sys.executable, "-S", "-E", str(CLIENT), server.socket]


def _start(module: str) -> _Server:
    folder = tempfile.mkdtemp(prefix="warm-")
    path = os.path.join(folder, "socket")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen([sys.executable, "-m", "tests.support.warm_command", path, module],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=ROOT, env=env)
    assert process.stdout is not None
    selector = selectors.DefaultSelector()
    selector.register(process.stdout, selectors.EVENT_READ)
    ready = selector.select(START_TIMEOUT) and process.stdout.readline() == b"ready\n"
    selector.close()
    if not ready:
        process.kill()
        raise RuntimeError(f"the warm server for {module} did not start (exit {process.wait()})")
    server = _SERVERS[module] = _Server(process, path, folder)
    atexit.register(_stop, server)
    return server


def _stop(server: _Server) -> None:
    """Its standard input closed, the server kills what still runs and leaves."""
    assert server.process.stdin is not None
    server.process.stdin.close()
    try:
        server.process.wait(10)
    except subprocess.TimeoutExpired:
        server.process.kill()
    shutil.rmtree(server.folder, ignore_errors=True)


# The server: `python -m tests.support.warm_command SOCKET MODULE`.

def _serve(path: str, module: str) -> dict[str, Any] | None:
    """Accept runs until the test process goes (None); in a forked child, return its request."""
    importlib.import_module("bot.commands.cli")
    importlib.import_module(module)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(16)
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ, "accept")
    selector.register(sys.stdin, selectors.EVENT_READ, "parent")
    running: dict[int, tuple[int, socket.socket]] = {}  # pidfd → (pid, the client's connection)
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    while True:
        for key, _ in selector.select():
            if key.data == "parent":  # the test process closed our stdin, or died
                for pid, _conn in running.values():
                    os.kill(pid, signal.SIGKILL)
                return None
            if key.data == "accept":
                conn, _ = listener.accept()
                request = _receive(conn)
                pid = os.fork()
                if pid == 0:  # the command's process: none of the server's descriptors stay open in it
                    selector.close()
                    listener.close()
                    for pidfd, (_pid, other) in running.items():
                        os.close(pidfd)
                        other.close()
                    conn.close()
                    return request
                for fd in request["fds"]:
                    os.close(fd)
                conn.sendall(f"{pid}\n".encode())
                pidfd = os.pidfd_open(pid)
                running[pidfd] = (pid, conn)
                selector.register(pidfd, selectors.EVENT_READ, ("exit", pidfd))
                selector.register(conn, selectors.EVENT_READ, ("gone", pidfd))
            elif key.data[0] == "exit":
                pidfd = key.data[1]
                pid, conn = running.pop(pidfd)
                _, status = os.waitpid(pid, 0)
                selector.unregister(pidfd)
                os.close(pidfd)
                if conn.fileno() in selector.get_map():  # not when the client went first
                    selector.unregister(conn)
                try:
                    conn.sendall(f"{os.waitstatus_to_exitcode(status)}\n".encode())
                except OSError:
                    pass  # the client is gone already
                conn.close()
            else:  # the client went before the command ended (killed on a timeout): so does the command
                pid, conn = running[key.data[1]]
                selector.unregister(conn)
                os.kill(pid, signal.SIGKILL)


def _receive(conn: socket.socket) -> dict[str, Any]:
    data, fds, _, _ = socket.recv_fds(conn, 1 << 20, 3)
    size, body = int.from_bytes(data[:4], "big"), data[4:]
    while len(body) < size:
        chunk = conn.recv(size - len(body))
        if not chunk:
            raise ConnectionError("the client went before its request was whole")
        body += chunk
    request: dict[str, Any] = json.loads(body)
    request["fds"] = fds
    return request


def _become(request: dict[str, Any]) -> None:
    """The forked child: the caller's descriptors, directory, environment and arguments, then the
    command as `python -m bot` runs it (its SystemExit ends this interpreter the usual way)."""
    for target, fd in zip(request["targets"], request["fds"], strict=True):
        os.dup2(fd, target)
    for fd in request["fds"]:
        if fd not in (0, 1, 2):
            os.close(fd)
    for target in {0, 1, 2} - set(request["targets"]):
        os.close(target)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    sys.stdin, sys.stdout, sys.stderr = (_stream(0, "r"), _stream(1, "w"), _stream(2, "w"))
    sys.path[0] = os.getcwd()  # as `python -m` puts the working directory first
    sys.argv = ["-m", *request["argv"]]
    runpy.run_module("bot", run_name="__main__", alter_sys=True)


def _stream(fd: int, mode: str) -> Any:
    """A standard stream as Python makes it at start: line-buffered on a terminal (stderr always),
    errors shown with backslashes on stderr."""
    try:
        os.fstat(fd)
    except OSError:
        return None
    raw = io.FileIO(fd, mode, closefd=False)
    encoding = os.environ.get("PYTHONIOENCODING", "").partition(":")[0] or sys.__stdout__.encoding or "utf-8"
    if mode == "r":
        return io.TextIOWrapper(io.BufferedReader(raw), encoding=encoding)
    return io.TextIOWrapper(io.BufferedWriter(raw), encoding=encoding,
                            errors="backslashreplace" if fd == 2 else "strict",
                            line_buffering=fd == 2 or raw.isatty())


if __name__ == "__main__":
    child = _serve(sys.argv[1], sys.argv[2])
    if child is not None:
        _become(child)
