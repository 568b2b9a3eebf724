"""A finding's fingerprint: what makes two findings "the same" on one pull request (pure).

Same path, same code, same message — not the same line numbers, which shift with every push
above the finding. The code is the finding's new-file lines as the pull request's diff shows them,
whitespace-normalised; a finding on lines outside the diff has no code to read there, so its line
range stands in. The message is compared case- and whitespace-insensitively, without trailing
punctuation, so that "Division by zero." and "division by zero" are one finding.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping

from bot.reviews.diff import FilePatch
from bot.reviews.findings import Finding

# the review memory's row (bot/store/model.py keeps the shapes the store keeps); named here, where
# findings are fingerprinted and matched against those posted
from bot.store.model import PostedFinding

_SPACE = re.compile(r"\s+")


def as_finding(posted: PostedFinding) -> Finding:
    """A posted finding as a finding again (its lines unknown now), for the tallies of approval and
    conclusion."""
    return Finding(posted.path, 1, 1, posted.severity, posted.category, posted.message)


def normalise_message(message: str) -> str:
    return _SPACE.sub(" ", message).strip().rstrip(".!;:").strip().lower()


def code_of(patch: FilePatch | None, start: int, end: int) -> str:
    """The finding's lines as the diff shows them (whitespace runs made one space, each line
    stripped, blank lines left out, joined by newlines), or "" when none is in the diff."""
    if patch is None:
        return ""
    lines = [_SPACE.sub(" ", line.text).strip() for hunk in patch.hunks for line in hunk.lines
             if line.new_line is not None and start <= line.new_line <= end]
    return "\n".join(line for line in lines if line)


def fingerprint(finding: Finding, patches: Mapping[str, FilePatch], head_sha: str = "") -> PostedFinding:
    """The posted-finding record of `finding` at a head whose pull request diff is `patches`."""
    code = code_of(patches.get(finding.path), finding.start_line, finding.end_line)
    anchor = code or f"lines {finding.start_line}-{finding.end_line}"
    digest = hashlib.sha256("\x00".join([finding.path, anchor, normalise_message(finding.message)]).encode())
    return PostedFinding(digest.hexdigest()[:32], finding.path, finding.severity, finding.category, code,
                         finding.message, head_sha)


def still_standing(earlier: Iterable[PostedFinding], patches: Mapping[str, FilePatch],
                   changed: Iterable[str]) -> list[PostedFinding]:
    """Earlier findings that still hold at a new head reviewed incrementally.

    An incremental review asks the model about the new changes only, so it cannot say again what
    it said about code that has not changed; those findings stand while their code is still in the
    pull request's diff (or, for a finding outside the diff, while its file did not change).
    """
    changed = set(changed)
    out = []
    for found in earlier:
        if found.code:
            current = code_of(patches.get(found.path), 1, 10**9)
            if f"\n{found.code}\n" in f"\n{current}\n":
                out.append(found)
        elif found.path in patches and found.path not in changed:
            out.append(found)
    return out
