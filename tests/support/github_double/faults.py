"""Faults a test asks for: the next N answers of a route are errors, rate limits or late.

A fault names a route the way the double's call log does (`"GET /repos/{owner}/{repo}/pulls/{pull_number}"`)
or None for every route, and is used up by the requests it answers.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field


@dataclass
class Fault:
    route: str | None
    status: int | None  # None: no error answer (a pure delay)
    times: int
    headers: dict[str, str] = field(default_factory=dict)
    message: str = ""
    delay: float = 0.0  # seconds before answering (or before handling, for a pure delay)
    applied: bool = False  # the request is carried out, then answered with the error (a lost answer)
    released: asyncio.Event = field(default_factory=asyncio.Event)  # set: a held request goes on at once

    def release(self) -> None:
        """Let every request this delay holds (and every later one) go on now: a test ends a delay
        when what it waits for has happened, the delay staying the bound."""
        self.released.set()

    def body(self) -> dict:
        return {"message": self.message, "documentation_url": "https://docs.github.com/rest", "status": str(self.status)}


def server_error(route: str | None, status: int, times: int, applied: bool = False) -> Fault:
    return Fault(route, status, times, message="Server Error" if status == 500 else "Bad Gateway", applied=applied)


def secondary_rate_limit(route: str | None, retry_after: int | None, times: int, status: int = 403) -> Fault:
    headers = {"retry-after": str(retry_after)} if retry_after is not None else {}
    return Fault(route, status, times, headers, message=(
        "You have exceeded a secondary rate limit. Please wait a few minutes before you try again."))


def primary_rate_limit(route: str | None, reset_in: int, times: int, status: int = 403) -> Fault:
    reset = int(time.time()) + reset_in
    return Fault(route, status, times, {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(reset)},
                 message="API rate limit exceeded for installation.")


def bad_credentials(route: str | None, times: int) -> Fault:
    return Fault(route, 401, times, message="Bad credentials")


class Faults:
    def __init__(self) -> None:
        self.pending: list[Fault] = []

    def add(self, fault: Fault) -> Fault:
        self.pending.append(fault)
        return fault

    def take(self, route: str) -> Fault | None:
        """The first pending fault for this route (or for every route), used once."""
        for fault in self.pending:
            if fault.route in (None, route) and fault.times > 0:
                fault.times -= 1
                if fault.times == 0:
                    self.pending.remove(fault)
                return fault
        return None
