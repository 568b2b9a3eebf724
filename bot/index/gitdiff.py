"""A local `git diff` as GitHub's per-file entries (`filename`, `status`, `patch`, and a rename's
`previous_filename`), so that the offline command reads a change exactly as the server reads a
pull request's files."""

from __future__ import annotations

from bot.plan.git import git


def _path(raw: str) -> str:
    """A path of a `---`/`+++`/`rename to` line: C-quoted when it holds a quote, a backslash or a
    control character; else as is, with the tab git appends to a name that holds a space."""
    if raw.endswith("\t"):
        raw = raw[:-1]
    if raw.startswith('"') and raw.endswith('"'):
        data = raw[1:-1].encode("utf-8").decode("unicode_escape").encode("latin-1")
        return data.decode("utf-8", errors="surrogateescape")
    return raw


def diff_entries(repo: str, base: str, head: str) -> list[dict]:
    """Each changed file of `base..head` with its hunks, statuses as GitHub names them."""
    out = git(repo, "diff", "--no-color", "--no-ext-diff", "--no-textconv", "--src-prefix=a/", "--dst-prefix=b/", "-M",
              "-U3", base, head).decode("utf-8", errors="replace")
    entries: list[dict] = []
    current: dict | None = None
    in_hunks = False
    for line in out.splitlines():
        if line.startswith("diff --git "):
            current = {"filename": None, "status": "modified", "patch": []}
            entries.append(current)
            in_hunks = False
            continue
        if current is None:
            continue
        if line.startswith("@@"):
            in_hunks = True
        if in_hunks:
            current["patch"].append(line)
        elif line.startswith("new file mode"):
            current["status"] = "added"
        elif line.startswith("deleted file mode"):
            current["status"] = "removed"
        elif line.startswith("rename from "):
            current["previous_filename"] = _path(line[len("rename from "):])
        elif line.startswith("rename to "):
            current["status"], current["filename"] = "renamed", _path(line[len("rename to "):])
        elif line.startswith("+++ ") and line != "+++ /dev/null":
            current["filename"] = _path(line[4:])[2:]  # without "b/"
        elif line.startswith("--- ") and line != "--- /dev/null" and current["filename"] is None:
            current["filename"] = _path(line[4:])[2:]  # without "a/": a deleted file
    return [{**e, "patch": "\n".join(e["patch"])} for e in entries if e["filename"]]
