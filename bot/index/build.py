"""Building and updating one repository's index from a snapshot of its default branch.

`plan_update` is pure: from what the store holds (path → blob id) and what the snapshot lists, it
decides what to read, what to drop and what to skip (ignored, over a limit, and why). `sync` is the
edge that reads the changed blobs, parses them and writes them. Because files are keyed by blob id,
a full build and an incremental update are one code path: a push reads only the paths whose blob
changed, and a rename or move is a removal plus an addition of the same text. What is stored of a
blob is what this version's parser reads of it, so the stored key is the blob id with the
reader's version (`READER`): after an upgrade whose parser reads more (module bindings, anonymous
exports, annotation types), every file is read again at the next update, not only those a push
changed.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from bot.config.model import IndexLimits
from bot.expr.globs import compiled_globs
from bot.index.languages import is_binary_name
from bot.index.parse import parse_symbols
from bot.index.store import IndexStore
from bot.store.index.model import FileSymbols, StoredFile

# The version of what parsing stores of a file; raised whenever the parser or the uses it records
# change, so that indexes built before are read again rather than answering with what an older
# parser saw.
READER = "r3"

Limits = IndexLimits  # what an administrator lets one repository's index hold
DEFAULT_LIMITS = Limits()


@dataclass(frozen=True, slots=True)
class Entry:
    path: str
    blob: str
    size: int


class Snapshot(Protocol):
    """A commit of the repository: its file list, and its blobs read on demand."""

    @property
    def commit(self) -> str: ...

    def entries(self) -> Sequence[Entry]: ...
    def read(self, paths: Sequence[str]) -> Mapping[str, bytes]: ...


@dataclass(frozen=True, slots=True)
class UpdatePlan:
    read: tuple[Entry, ...]
    remove: tuple[str, ...]
    skipped: tuple[tuple[str, str], ...]  # (path, reason)
    kept: int  # files already indexed at the same blob


def plan_update(stored: Mapping[str, str], entries: Iterable[Entry], limits: Limits,
                ignore: Sequence[str] = ()) -> UpdatePlan:
    """What to read, remove and skip to bring `stored` to `entries`, within `limits`.

    Files are taken in path order until the file count or the repository size runs out, so the
    same snapshot always gives the same index."""
    globs = compiled_globs(tuple(ignore)) if ignore else None
    wanted: dict[str, Entry] = {}
    skipped: list[tuple[str, str]] = []
    total = 0
    for entry in sorted(entries, key=lambda e: e.path):
        if globs is not None and globs.any(entry.path):
            skipped.append((entry.path, "ignored"))
        elif is_binary_name(entry.path):
            skipped.append((entry.path, "binary"))
        elif entry.size > limits.max_file_bytes:
            skipped.append((entry.path, f"larger than the {limits.max_file_bytes}-byte file limit"))
        elif len(wanted) >= limits.max_files:
            skipped.append((entry.path, f"past the {limits.max_files}-file limit"))
        elif total + entry.size > limits.max_repo_bytes:
            skipped.append((entry.path, f"past the {limits.max_repo_bytes}-byte repository limit"))
        else:
            wanted[entry.path] = entry
            total += entry.size
    read = tuple(e for p, e in wanted.items() if stored.get(p) != stored_key(e.blob))
    remove = tuple(sorted(p for p in stored if p not in wanted))
    return UpdatePlan(read, remove, tuple(skipped), len(wanted) - len(read))


def stored_key(blob: str) -> str:
    """What the store keeps of a file's blob id: the id and the version of the reader that parsed it."""
    return f"{blob}+{READER}"


def decode_text(data: bytes) -> str | None:
    """The text of a blob, or None for a binary one (a NUL byte early on, as git decides)."""
    if b"\0" in data[:8000]:
        return None
    return data.decode("utf-8", errors="replace")


@dataclass
class BuildReport:
    """What a build did, for logs, the check run and `reviewer context`."""

    commit: str
    indexed: int = 0  # files in the index afterwards
    read: int = 0
    removed: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)
    pending: int = 0  # files the snapshot did not hand over yet (a paced build): read next time
    seconds: float = 0.0

    def to_json(self) -> dict:
        reasons: dict[str, int] = {}
        for _, reason in self.skipped:
            reasons[reason] = reasons.get(reason, 0) + 1
        return {"commit": self.commit, "indexed": self.indexed, "read": self.read, "removed": self.removed,
                "pending": self.pending, "skipped": len(self.skipped), "skippedReasons": reasons,
                "seconds": round(self.seconds, 3)}

    def line(self) -> str:
        text = f"{self.indexed} files indexed at {self.commit[:7]} ({self.read} read, {self.removed} removed)"
        if self.skipped:
            reasons = self.to_json()["skippedReasons"]
            text += "; skipped " + ", ".join(f"{n} {r}" for r, n in sorted(reasons.items()))
        if self.pending:
            text += f"; {self.pending} still to read"
        return text


READ_BATCH = 200


def sync(store: IndexStore, snapshot: Snapshot, limits: Limits = DEFAULT_LIMITS,
         ignore: Sequence[str] = ()) -> BuildReport:
    """Bring the store to `snapshot`: read and parse the changed blobs, drop what went away."""
    started = time.monotonic()
    store.lock()  # before reading what is stored: another process's build may be writing it
    plan = plan_update(store.blobs(), snapshot.entries(), limits, ignore)
    report = BuildReport(snapshot.commit, removed=len(plan.remove), skipped=list(plan.skipped))
    store.remove(plan.remove)
    indexed = plan.kept
    for start in range(0, len(plan.read), READ_BATCH):
        batch = plan.read[start:start + READ_BATCH]
        blobs = snapshot.read([e.path for e in batch])
        stored = []
        for entry in batch:
            if entry.path not in blobs:  # not handed over (paced): left unstored, so read next time
                report.pending += 1
                continue
            text = decode_text(blobs[entry.path])
            if text is None:  # kept empty, so that the next update does not read it again
                report.skipped.append((entry.path, "binary"))
                stored.append(StoredFile(entry.path, "", FileSymbols(None), stored_key(entry.blob), entry.size))
                continue
            stored.append(StoredFile(entry.path, text, parse_symbols(entry.path, text), stored_key(entry.blob),
                                     entry.size))
            indexed += 1
        store.put(stored)
        report.read += len(stored)
    report.indexed = indexed
    report.seconds = time.monotonic() - started
    store.finish(snapshot.commit, report.to_json())
    return report
