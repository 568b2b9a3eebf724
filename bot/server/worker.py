"""`reviewer worker`: a process that runs jobs only (bot/server/core.py `core_app`: the store, the
queue, the timeline, /healthz, the probes and /metrics). It imports neither the console, sign-in
nor the resource API (tests/layers/test_worker_imports.py); its exit codes are `reviewer serve`'s.
"""

from __future__ import annotations

import argparse

from bot.server import process
from bot.server.core import core_app


def run_worker(args: argparse.Namespace) -> int:
    return process.run(args, "worker", core_app)
