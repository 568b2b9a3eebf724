"""A commit of a local git checkout as a `Snapshot`: `ls-tree` for the list, `cat-file --batch` for blobs."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping, Sequence

from bot.index.build import Entry
from bot.plan.git import GitError, git


class GitSnapshot:
    def __init__(self, repo: str, commit: str) -> None:
        self.repo, self.commit = repo, commit
        self._entries: list[Entry] | None = None

    def entries(self) -> Sequence[Entry]:
        if self._entries is None:
            out: list[Entry] = []
            for record in git(self.repo, "ls-tree", "-r", "-l", "-z", self.commit).split(b"\0"):
                if not record:
                    continue
                meta, _, path = record.partition(b"\t")
                mode, kind, blob, size = meta.split()
                # symbolic links name a path, they hold no code; a blob the clone lacks (a partial or
                # shallow fetch: git prints its size as BAD) cannot be read, so it is not indexed
                if kind == b"blob" and mode != b"120000" and size.isdigit():
                    out.append(Entry(path.decode("utf-8", errors="surrogateescape"), blob.decode(), int(size)))
            self._entries = out
        return self._entries

    def read(self, paths: Sequence[str]) -> Mapping[str, bytes]:
        """The blobs of `paths` at the commit, in one `git cat-file --batch` run."""
        by_path = {e.path: e.blob for e in self.entries()}
        wanted = [p for p in paths if p in by_path]
        request = "".join(f"{by_path[p]}\n" for p in wanted).encode()
        try:
            done = subprocess.run(["git", "-C", self.repo, "cat-file", "--batch"], input=request,
                                  capture_output=True, check=True, timeout=120)
        except (subprocess.SubprocessError, OSError) as exc:
            raise GitError(f"`git cat-file --batch` failed: {exc}") from None
        data, pos, out = done.stdout, 0, {}
        for path in wanted:
            end = data.index(b"\n", pos)
            header = data[pos:end].split()
            pos = end + 1
            if len(header) < 3 or header[1] == b"missing":
                continue
            size = int(header[2])
            out[path] = data[pos:pos + size]
            pos += size + 1
        return out
