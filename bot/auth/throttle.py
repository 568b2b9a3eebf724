"""Guesses at the break-glass token, throttled per address (docs/operations.md "Reaching it and
signing in").

`REVIEWER_ADMIN_TOKEN` opens everything, and is checked wherever a bearer token or the console's
token form is offered. An address whose attempts failed MAX_FAILURES times within WINDOW seconds is
not checked again until the oldest of those failures is WINDOW old: every attempt from it meanwhile,
the right token included, is refused (429) without being compared, so that a guess learns nothing.
What is kept is bounded: the failures of at most MAX_ADDRESSES addresses, the least recent dropped.
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict, deque
from collections.abc import Callable

MAX_FAILURES = 10
WINDOW = 60.0  # seconds
MAX_ADDRESSES = 10_000


class Throttle:
    def __init__(self, max_failures: int = MAX_FAILURES, window: float = WINDOW,
                 clock: Callable[[], float] = time.monotonic, max_addresses: int = MAX_ADDRESSES) -> None:
        self.max_failures, self.window, self.clock, self.max_addresses = max_failures, window, clock, max_addresses
        self._failures: OrderedDict[str, deque[float]] = OrderedDict()

    def _recent(self, address: str | None) -> deque[float]:
        key = address or "-"
        failures = self._failures.get(key)
        if failures is None:
            return deque()
        now = self.clock()
        while failures and failures[0] <= now - self.window:
            failures.popleft()
        if not failures:
            del self._failures[key]
        return failures

    def wait(self, address: str | None) -> int | None:
        """Whole seconds until `address` may try again; None: it may now."""
        failures = self._recent(address)
        if len(failures) < self.max_failures:
            return None
        return max(1, math.ceil(failures[0] + self.window - self.clock()))

    def failed(self, address: str | None) -> None:
        key = address or "-"
        failures = self._failures.pop(key, None) or deque()
        failures.append(self.clock())
        while len(failures) > self.max_failures:
            failures.popleft()
        self._failures[key] = failures  # now the most recent
        while len(self._failures) > self.max_addresses:
            self._failures.popitem(last=False)
