"""The process a test starts for a warm command (tests/support/warm_command.py): run as
`python -S -E warm_client.py SOCKET COMMAND ARGS…`, with the standard library only.

It hands the server its arguments, environment, working directory and standard descriptors,
passes on the signals it gets to the command's process, and leaves with the command's exit status
(killed by a signal, it kills itself with the same one). It writes nothing of its own.
"""

import json
import os
import signal
import socket
import sys

PASSED_ON = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2)


def _open(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True


def main() -> None:
    path, argv = sys.argv[1], sys.argv[2:]
    targets = [fd for fd in (0, 1, 2) if _open(fd)]
    body = json.dumps({"argv": argv, "cwd": os.getcwd(), "env": dict(os.environ), "targets": targets}).encode()
    message = len(body).to_bytes(4, "big") + body
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.connect(path)
        sent = socket.send_fds(conn, [message], targets)
        conn.sendall(message[sent:])
        answers = conn.makefile("rb")
        pid = int(answers.readline())
        for number in PASSED_ON:
            signal.signal(number, lambda received, _frame: os.kill(pid, received))
        line = answers.readline()
    code = int(line) if line.strip() else 1  # no status: the server died
    if code < 0:
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    os._exit(code)


main()
