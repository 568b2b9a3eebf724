"""What a mined `reviewer eval` case must be, read from the audit scripts/eval_repos.py writes beside
corpus.yaml (commit, tree and blob ids, digests of comments; no code of the mined repositories):
`mine` refuses a case that breaks a rule, and the tests check the committed corpus with the same
rules, offline.

A `fix` case must hand over nothing of the fix but its source change: the head's tree is the fix's
parent's, whole (so no test, changelog or document of the fix is in it); the base differs from the
parent only in the fix's source files; no comment the fix added is in the base or the head; the
head's message names no fix or revert. A `change` case is a real commit reviewed against its parent.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

TELLING = re.compile(r"\b(revert\w*|fix\w*|bug\w*|regression)\b", re.IGNORECASE)


def problems(case_id: str, base: str, head: str, audit: Mapping[str, Any]) -> list[str]:
    """Every way the audited case (pinned at base..head in corpus.yaml) breaks the rules above, as
    sentences naming the case."""
    out: list[str] = []
    if (audit.get("base"), audit.get("head")) != (base, head):
        out.append(f"the audit pins {audit.get('base')}..{audit.get('head')}, corpus.yaml {base}..{head}")
    if audit.get("headParent") != [audit.get("base")]:
        out.append(f"the head's parent is {audit.get('headParent')}, not the base")
    if audit.get("kind") == "fix":
        out += _fix_problems(audit)
    elif audit.get("kind") != "change":
        out.append(f"unknown kind {audit.get('kind')!r}")
    return [f"{case_id}: {p}" for p in out]


def _fix_problems(audit: Mapping[str, Any]) -> list[str]:
    out = []
    if audit["baseParent"] != [audit["parent"]]:
        out.append("the base is not made on the fix's parent")
    if audit["headTree"] != audit["parentTree"]:
        out.append("the head's tree is not the fix's parent's: it carries something of the fix")
    message = audit["headMessage"]
    if TELLING.search(message) or not message.startswith("Update "):
        out.append(f"the head's message gives the answer away: {message!r}")
    for path, file in audit["files"].items():
        if file["head"] != file["parent"]:
            out.append(f"{path} at the head is not the parent's")
        if file["role"] != "source":
            if file["base"] != file["parent"]:
                out.append(f"{path} (not source: a test, a changelog) is the fix's at the base")
            continue
        comments = file["comments"]  # per side, those the parent did not hold
        added = set(comments["fix"])
        for side in ("base", "head"):
            kept = added & set(comments[side])
            if kept:
                out.append(f"{path} at the {side} holds {len(kept)} comment(s) the fix added")
    if not any(f["role"] == "source" and f["base"] != f["parent"] for f in audit["files"].values()):
        out.append("the base has none of the fix's source change")
    return out
