"""Issue #21 item 4: the pure review feature in bot/reviews, its I/O in bot/pipeline.

`MOVES` maps each old module to its new one. `python scripts/rename_modules.py` rewrites the imports
and the mentions of the old modules (dotted `bot.engine.findings`, paths `bot/engine/findings.py`,
`from bot.engine import decisions`) in bot/, tests/, bench/, scripts/, docs/, README.md and
.importlinter; `--move` also moves the files with `git mv`, so that their history follows. On a
branch made before the move, merge first (git carries the moves), then run it without `--move` to
rewrite what the branch added.
"""

from __future__ import annotations

import argparse
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

MOVES: dict[str, str] = {
    # pure parts of a review, out of the engine (which keeps what talks to model providers)
    "bot.engine.diff": "bot.reviews.diff",
    "bot.engine.findings": "bot.reviews.findings",
    "bot.engine.fingerprints": "bot.reviews.fingerprints",
    "bot.engine.shaping": "bot.reviews.shaping",
    "bot.engine.decisions": "bot.reviews.decisions",
    "bot.engine.overlap": "bot.reviews.overlap",
    "bot.engine.outcome": "bot.reviews.output",
    "bot.engine.markdown": "bot.reviews.markdown",
    "bot.engine.scope": "bot.reviews.scope",
    # the check-run report's text
    "bot.report.checkrun": "bot.reviews.checkrun",
    "bot.report.budget": "bot.reviews.checkrun_budget",
    # the summary comment's walkthrough is part of the review, not of the learnings
    "bot.learnings.walkthrough": "bot.reviews.walkthrough",
    # one name per concept: a follow-up (pure reading in bot/reviews, the model's answer in
    # bot/engine, the I/O in bot/pipeline); the GitHub endpoints it uses are comments
    "bot.reviews.conversation": "bot.reviews.followup",
    "bot.github.conversation": "bot.github.comments",
}
# Test files that follow their module (moved by `--move` only; nothing imports them).
TEST_MOVES: dict[str, str] = {
    "tests/reviews/test_reviews_conversation.py": "tests/reviews/test_reviews_followup.py",
}
TREES = ("bot", "tests", "bench", "scripts", "docs")
FILES = ("README.md", ".importlinter")
SUFFIXES = (".py", ".md", ".toml", ".cfg", ".yml", ".yaml", ".txt", ".json")
_FROM = re.compile(r"^(?P<indent>[ \t]*)from (?P<pkg>[\w.]+) import (?P<names>[\w, ]+?)[ \t]*$", re.M)


def _path(module: str) -> str:
    return module.replace(".", "/") + ".py"


def _from_package(match: re.Match[str]) -> str:
    """`from bot.engine import decisions, overlap`: each moved module from its new package."""
    indent, pkg = match["indent"], match["pkg"]
    by_package: dict[str, list[str]] = {}
    for name in (n.strip() for n in match["names"].split(",") if n.strip()):
        base, _, alias = name.partition(" as ")
        target = MOVES.get(f"{pkg}.{base.strip()}")
        if target is None:
            by_package.setdefault(pkg, []).append(name)
            continue
        new_pkg, _, new_base = target.rpartition(".")
        kept_alias = alias.strip() or (base.strip() if new_base != base.strip() else "")
        by_package.setdefault(new_pkg, []).append(f"{new_base} as {kept_alias}" if kept_alias else new_base)
    if list(by_package) == [pkg]:
        return match[0]
    return "\n".join(f"{indent}from {p} import {', '.join(sorted(names))}" for p, names in sorted(by_package.items()))


def rewrite(text: str) -> str:
    text = _FROM.sub(_from_package, text)
    for old, new in MOVES.items():
        text = re.sub(rf"(?<![\w.]){re.escape(old)}(?!\w)", new, text)
        text = re.sub(rf"(?<![\w/.]){re.escape(_path(old))}", _path(new), text)
    return text


def files() -> list[Path]:
    found = [ROOT / f for f in FILES if (ROOT / f).is_file()]
    for tree in TREES:
        found += [p for p in sorted((ROOT / tree).rglob("*")) if p.is_file() and p.suffix in SUFFIXES
                  and "node_modules" not in p.parts and p.resolve() != Path(__file__).resolve()]
    return found


def move() -> None:
    for old, new in [(_path(o), _path(n)) for o, n in MOVES.items()] + list(TEST_MOVES.items()):
        if (ROOT / old).exists():
            subprocess.run(["git", "mv", old, new], cwd=ROOT, check=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--move", action="store_true", help="also `git mv` the modules (once, on the first branch)")
    args = parser.parse_args()
    if args.move:
        move()
    changed = 0
    for path in files():
        text = path.read_text(encoding="utf-8")
        new = rewrite(text)
        if new != text:
            path.write_text(new, encoding="utf-8")
            changed += 1
    print(f"{changed} file(s) rewritten")


if __name__ == "__main__":
    main()
