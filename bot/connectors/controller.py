"""The connector controller: every stored connector's status kept true to the world it depends on.

A PUT reconciles a connector once, but what it depends on moves without a PUT: a missing secret is
added to the secret store, the admin file starts to reference a connector's secret (then the
connector may no longer read it), a descriptor URL's document changes. So, as a Kubernetes
controller would, the server reconciles every stored connector again when the secret store or the
admin file's secrets change (both watched cheaply: the store's mtimes and sizes, as the admin file
reload watches its file) and on a timer, and moves the conditions.

Several processes may share one store (PostgreSQL): each runs this, and a status is written only
when it changes, conditionally on the `resourceVersion` read (a write in between wins, and the next
round looks again). Processes that see the same world compute the same conditions, so the first
writes and the others find nothing to do; no two of them fight over a status.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from bot.connectors.conditions import SUCCESSFULLY_RECONCILED, observe, transition
from bot.connectors.descriptor_fetch import DescriptorSource, Fetched, fetch_descriptors, kept_descriptors
from bot.connectors.field_checks import ConnectorSecrets
from bot.connectors.kinds import KINDS, SAML, ConnectorKind
from bot.connectors.problem import Problem
from bot.connectors.reconcile import reconcile
from bot.loops.pause import pause
from bot.store.model import Conflict, ConnectorStore

log = logging.getLogger("reviewer.connectors")

RESYNC_SECONDS = 300.0  # every connector is reconciled again at least this often
Stamp = frozenset[tuple[str, int, int]]


def _utc_now() -> datetime:
    return datetime.now(UTC)


def rfc3339(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class Reconciler:
    """What a connector is checked against (secrets, the admin file's secrets, descriptors, the
    public URL), for the resource API's PUT, the console's apply and the background rounds alike:
    one set of inputs, so that a PUT and the next round never disagree."""

    store: ConnectorStore
    secrets: ConnectorSecrets
    descriptors: DescriptorSource = field(default_factory=DescriptorSource)
    public_url: str | None = None
    clock: Callable[[], datetime] = _utc_now
    rounds: int = field(default=0, init=False)  # background rounds ended so far: what a wait on "the
    # next rounds saw this" counts (a test proving that no round rewrites a status)

    async def fetched(self, kind: ConnectorKind, doc: dict) -> dict[str, Fetched]:
        """What a write is checked with: its SAML descriptors, fetched afresh (before the store's
        transaction, as each fetch takes up to its timeout)."""
        return await fetch_descriptors(doc, self.descriptors) if kind is SAML else {}

    def checked(self, kind: ConnectorKind, doc: dict, fetched: dict[str, Fetched]) -> list[Problem]:
        """Every problem of `doc` in this world."""
        return reconcile(kind, doc, self.secrets, fetched, self.public_url)

    async def resync(self) -> int:
        """Reconciles every stored connector again; the number whose status moved."""
        moved = 0
        for kind in KINDS:
            items, _ = await self.store.list(kind.kind)
            for obj in items:
                moved += await self._again(kind, obj)
        return moved

    async def _again(self, kind: ConnectorKind, obj: dict) -> bool:
        fetched = await kept_descriptors(obj, self.descriptors) if kind is SAML else {}
        if fetched is None:
            return False  # a descriptor this process cannot have now: its status stays as applied
        status = obj.get("status") or {}
        metadata = obj["metadata"]
        problems = self.checked(kind, obj, fetched)
        conditions = transition(status.get("conditions"), observe(problems), metadata["generation"],
                                rfc3339(self.clock()))
        if conditions == status.get("conditions"):
            return False
        updated = {**obj, "status": {**status, "conditions": conditions}}
        try:
            await self.store.put(kind.kind, metadata["name"], str(metadata["resourceVersion"]),
                                 lambda previous: copy.deepcopy(updated))
        except Conflict:
            return False  # written meanwhile (a PUT, another process): the next round looks again
        reconciled = next(c for c in conditions if c["type"] == SUCCESSFULLY_RECONCILED)
        log.info("connector status moved: %s/%s reconciled=%s (%s)", kind.plural, metadata["name"],
                 reconciled["status"], reconciled["reason"])
        return True

    def stamp(self) -> tuple[Stamp, frozenset[str]]:
        """What the background rounds watch: the secret store's entries and the admin file's secrets."""
        return store_stamp(self.secrets.root), self.secrets.admin_secrets()

    async def watch(self, check_every: float, resync_every: float = RESYNC_SECONDS) -> None:
        """Reconciles everything at start, whenever `stamp()` changes (looked at every
        `check_every` seconds) and at least every `resync_every` seconds; never ends by itself."""
        seen: tuple[Stamp, frozenset[str]] | None = None
        last = -math.inf
        failing = False
        while True:
            try:
                now = time.monotonic()
                stamp = await asyncio.to_thread(self.stamp)
                if stamp != seen or now - last >= resync_every:
                    await self.resync()
                    seen, last = stamp, now
                if failing:
                    log.info("connector reconcile rounds work again")
                failing = False
            except Exception as exc:  # a store outage or a bug must not end the watch: the next round retries
                if not failing:  # once per outage, not once per round
                    log.warning("connector reconcile round failed (%s); retrying every %gs",
                                exc.__class__.__name__, check_every, exc_info=True)
                failing = True
            self.rounds += 1
            await pause(check_every)


def store_stamp(root: str | None) -> Stamp:
    """(path, mtime, size) of the store's directory, each secret's directory and each of its keys,
    symlinks followed (a mounted Kubernetes secret swaps its `..data` link on update)."""
    if not root:
        return frozenset()
    found: set[tuple[str, int, int]] = set()
    _stat_into(found, root, "")
    for name in _listing(root):
        path = os.path.join(root, name)
        _stat_into(found, path, name)
        if os.path.isdir(path):
            for key in _listing(path):
                _stat_into(found, os.path.join(path, key), f"{name}/{key}")
    return frozenset(found)


def _listing(path: str) -> list[str]:
    try:
        return os.listdir(path)
    except OSError:
        return []


def _stat_into(found: set[tuple[str, int, int]], path: str, shown: str) -> None:
    try:
        stat = os.stat(path)
    except OSError:
        return
    found.add((shown, stat.st_mtime_ns, stat.st_size))
