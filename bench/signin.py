"""What a session costs the API: GET of the connector list with a session against the break-glass
admin token, on the same server in the same run.

The admin token is checked in memory; a session is looked up in the sign-in store (a hash, one
SQLite read on a worker thread) and its roles turned into permissions on every request. The
server runs in this process on 127.0.0.1 (`reviewer serve`'s app, its queue idle); 16 keep-alive
connections send a bounded number of requests; token and session alternate for a few rounds and
the best of each is compared (the machine is shared). Printed: requests a second and the ratio.

Usage: python bench/signin.py [--requests N] [--rounds R]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run from a checkout without installing

from aiohttp import ClientSession, TCPConnector, web  # noqa: E402

from bot.auth.sessions import Session, create_session  # noqa: E402
from bot.server.app import make_app  # noqa: E402
from bot.server.settings import load_settings  # noqa: E402
from bot.server.signin.routes import SIGNIN_STORE  # noqa: E402

TOKEN = "bench-admin-token-0123456789abcdef"
PATH = "/apis/resources.service.dev/v3/oidcconnectors"


async def nothing(job) -> None:
    return None


async def load(url: str, headers: dict[str, str], requests: int, connections: int = 16) -> float:
    """Requests a second for `requests` GETs over `connections` keep-alive connections."""
    async with ClientSession(connector=TCPConnector(limit=connections), headers=headers) as http:
        remaining = requests

        async def worker() -> None:
            nonlocal remaining
            while remaining > 0:
                remaining -= 1
                async with http.get(url) as response:
                    await response.read()
                    assert response.status == 200, response.status

        start = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(connections)))
        return requests / (time.perf_counter() - start)


async def main(requests: int, rounds: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        settings = load_settings({"GITHUB_WEBHOOK_SECRET": "bench", "REVIEWER_ADMIN_TOKEN": TOKEN,
                                  "REVIEWER_DATABASE_URL": f"sqlite:///{tmp}/reviewer.db"})
        app = make_app(settings, lambda context: nothing)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", 0).start()
        url = f"http://127.0.0.1:{runner.addresses[0][1]}{PATH}"
        now = time.time()
        token = await create_session(app[SIGNIN_STORE], Session("bench@example.com", "bench", ["admin"], now,
                                                                now + 3600))
        try:
            await load(url, {"Authorization": f"Bearer {TOKEN}"}, 200)  # warm up
            best = {"admin token": 0.0, "session": 0.0}
            for _ in range(rounds):
                best["admin token"] = max(best["admin token"],
                                          await load(url, {"Authorization": f"Bearer {TOKEN}"}, requests))
                best["session"] = max(best["session"], await load(url, {"Authorization": f"Bearer {token}"},
                                                                  requests))
        finally:
            await runner.cleanup()
    for name, rate in best.items():
        print(f"{name:12} {rate:8.0f} requests/s")
    print(f"session / admin token: {best['session'] / best['admin token']:.2f}x the throughput")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    asyncio.run(main(args.requests, args.rounds))
