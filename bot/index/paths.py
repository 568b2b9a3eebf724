"""What a path says of a file to retrieval: a test's or an example's (the code a reviewer opens
after the primary sources), a built bundle's (a copy of the sources, never what a name means), and
how far two files are in the tree (a definition next to the change ranks first)."""

from __future__ import annotations

import re

_BUILT = re.compile(r"((^|/)dist/.*\.[cm]?[jt]sx?|\.(min|bundle)\.[cm]?js)$")


def is_test(path: str) -> bool:
    parts = path.lower().split("/")
    name = parts[-1]
    folders = {"test", "tests", "spec", "__tests__", "testdata", "example", "examples", "_examples", "bench",
               "benches", "benchmark", "benchmarks", "fuzz", "docs", "website", "perf-testing"}
    return bool(folders & set(parts[:-1])) or name.startswith("test_") or ".test." in name or ".spec." in name \
        or name.endswith(("_test.go", "_test.py", "test.java", "tests.java"))


def distance(a: str, b: str) -> int:
    """How far apart two paths are in the tree: a definition next to the change ranks first."""
    pa, pb = a.split("/")[:-1], b.split("/")[:-1]
    common = 0
    for x, y in zip(pa, pb, strict=False):
        if x != y:
            break
        common += 1
    return len(pa) + len(pb) - 2 * common


def is_built(path: str) -> bool:
    """A bundle a build wrote (`dist/axios.cjs`, `vendor.min.js`): the repository's sources again,
    as one file, so a name's definition there is a copy of one in the sources."""
    return _BUILT.search(path.lower()) is not None
