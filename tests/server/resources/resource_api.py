"""What the resource API's tests share: a clock they move, and a condition read from an object's status."""

from __future__ import annotations

import datetime


class Clock:
    def __init__(self) -> None:
        self.now = datetime.datetime(2024, 5, 1, 10, 0, 0, tzinfo=datetime.UTC)

    def __call__(self) -> datetime.datetime:
        return self.now

    def tick(self) -> None:
        self.now += datetime.timedelta(minutes=1)


def condition(obj: dict, type_: str) -> dict:
    return next(c for c in obj["status"]["conditions"] if c["type"] == type_)
