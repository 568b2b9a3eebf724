"""Cut the webhook example payloads the app handles out of `@octokit/webhooks-examples`.

GitHub's example deliveries, as published in the npm package `@octokit/webhooks-examples`, are what
the GitHub double sends to the app (with ids, repository and pull request adjusted to the double's
state), so the app is tested against the shapes GitHub really delivers.

Run from the repository root (needs `npm`, which reaches the npm registry):

    .venv/bin/python scripts/cut_webhooks.py                   # the pinned version
    .venv/bin/python scripts/cut_webhooks.py --version 7.6.1

It writes `tests/data/webhooks/<event>.<action>.json` (`ping.json` for ping), each example whole,
and `tests/data/webhooks/SOURCES.json`, which says where each file came from. Among several
examples of one action, the first that carries `installation` is taken (a GitHub App's deliveries
always do). The package has no `pull_request.edited` example: that one is derived from the
`opened` example with the fields GitHub documents for `edited` (`action`, and `changes` with the
previous title), and SOURCES.json says so.
"""

from __future__ import annotations

import argparse
import copy
import json
from pathlib import Path

from npm_package import read_json_from_package, repo_root

PACKAGE = "@octokit/webhooks-examples"
PINNED_VERSION = "7.6.1"
MEMBER = "api.github.com/index.json"
OUTPUT = Path("tests/data/webhooks")

WANTED: dict[str, list[str | None]] = {
    "pull_request": ["opened", "synchronize", "reopened", "ready_for_review", "labeled", "unlabeled", "closed"],
    "check_run": ["rerequested"],
    "check_suite": ["requested", "rerequested"],
    "issue_comment": ["created"],
    "pull_request_review_comment": ["created"],
    "pull_request_review": ["submitted"],
    "pull_request_review_thread": ["resolved", "unresolved"],  # what became of a finding (learnings)
    "installation": ["created"],
    "installation_repositories": ["added"],
    "ping": [None],
    "push": [None],
}


def pick(examples: list[dict], action: str | None) -> tuple[int, dict]:
    """The first example of `action` that carries an installation, else the first of `action`."""
    matching = [(i, e) for i, e in enumerate(examples) if e.get("action") == action]
    if not matching:
        raise SystemExit(f"no example with action {action!r}")
    with_installation = [(i, e) for i, e in matching if "installation" in e]
    return (with_installation or matching)[0]


def derive_edited(opened: dict) -> dict:
    """`pull_request.edited` as GitHub documents it: the opened payload, `action: edited`, `changes`."""
    edited = copy.deepcopy(opened)
    edited["action"] = "edited"
    changes = {"title": {"from": opened["pull_request"]["title"] + " (before the edit)"}}
    # GitHub places `changes` right after `action` and `number`.
    return {"action": "edited", "number": edited["number"], "changes": changes,
            **{k: v for k, v in edited.items() if k not in ("action", "number")}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", default=PINNED_VERSION, help=f"{PACKAGE} version (default {PINNED_VERSION})")
    args = parser.parse_args()
    events = {entry["name"]: entry["examples"] for entry in read_json_from_package(PACKAGE, args.version, MEMBER)}
    out = repo_root() / OUTPUT
    out.mkdir(parents=True, exist_ok=True)
    source = f"{PACKAGE}@{args.version} {MEMBER}"
    sources: dict[str, str] = {}
    for event, actions in WANTED.items():
        for action in actions:
            index, example = pick(events[event], action)
            name = f"{event}.{action}.json" if action else f"{event}.json"
            (out / name).write_text(json.dumps(example, indent=1) + "\n")
            sources[name] = f"{source}: {event} example {index}"
    index, opened = pick(events["pull_request"], "opened")
    (out / "pull_request.edited.json").write_text(json.dumps(derive_edited(opened), indent=1) + "\n")
    sources["pull_request.edited.json"] = (
        f"derived from {source}: pull_request example {index} (opened); action and changes set as GitHub documents "
        "for edited, because the package has no edited example"
    )
    (out / "SOURCES.json").write_text(json.dumps(dict(sorted(sources.items())), indent=1) + "\n")
    print(f"wrote {len(sources)} payloads to {OUTPUT}/")


if __name__ == "__main__":
    main()
