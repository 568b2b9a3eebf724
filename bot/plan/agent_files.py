"""Agent instruction files: `AGENTS.md` at the root and in every directory above a reviewed path,
`CLAUDE.md` where a directory has no `AGENTS.md`; shallowest first.

The planner only knows which files exist, so the shared size budget of docs/plan.md is enforced in
two parts: here a cap on how many files are named (MAX_AGENT_FILES, the shallowest kept, a note
for the rest), and in the engine a cap on the bytes it reads.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

NAMES = ("AGENTS.md", "CLAUDE.md")  # in order of preference within one directory
MAX_AGENT_FILES = 20


def _directories(paths: Sequence[str]) -> set[str]:
    """Every directory above each path, the root ("") included."""
    found = {""}
    for path in paths:
        directory = path.rpartition("/")[0]
        while directory not in found:
            found.add(directory)
            directory = directory.rpartition("/")[0]
    return found


def _depth(directory: str) -> int:
    return directory.count("/") + 1 if directory else 0


def agent_files(paths: Sequence[str], tree: Collection[str]) -> tuple[list[str], int]:
    """(the agent files to give the reviewer, how many more there were past the cap)."""
    chosen: list[str] = []
    for directory in sorted(_directories(paths), key=lambda d: (_depth(d), d)):
        prefix = f"{directory}/" if directory else ""
        for name in NAMES:
            if prefix + name in tree:
                chosen.append(prefix + name)
                break
    return chosen[:MAX_AGENT_FILES], max(0, len(chosen) - MAX_AGENT_FILES)
