"""`reviewer review` on a laptop (issue #35): the first review of a repository builds its index at
the merge base; the next ones find it in $XDG_CACHE_HOME and read only what changed.

A generated repository (bench/index.py's generator, 3,000 files in six languages) and a 5-file
change are reviewed with the model played by the chat-completions double (it answers at once, so
the figures are the review's own work: git, the plan, the index, the analyzers, the engine):

- cold: the first review, with an empty cache (the baseline);
- warm: the same review again, the index cached at the same merge base;
- moved: a review after the default branch moved on by 10 files (the index updated, not rebuilt).

Aim: warm and moved at most 0.35 of cold. Usage: python bench/local_review.py [--files N] [--rounds R]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run from a checkout without installing
sys.path.insert(0, str(ROOT / "bench"))

from index import edit, git, make_repo  # noqa: E402

from bot.commands.cli import main as reviewer  # noqa: E402
from tests.support.chat_double import ChatDouble, findings  # noqa: E402

AIM = 0.35


async def review(repo: str, admin: str, cache: str) -> float:
    os.environ["XDG_CACHE_HOME"] = cache
    started = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()) as out:  # the report itself is not the bench's output
        code = await asyncio.to_thread(reviewer, ["review", "--repo", repo, "--base", "main", "--admin-config",
                                                  admin, "--format", "json", "--fail-on", "never"])
    assert code == 0 and '"status": "completed"' in out.getvalue(), code
    return time.perf_counter() - started


async def run(files: int, rounds: int) -> bool:
    chat = await ChatDouble().start()
    chat.answer("m1", findings())
    with tempfile.TemporaryDirectory(prefix="bench-local-") as tmp:
        repo, rng = os.path.join(tmp, "repo"), random.Random(7)
        os.makedirs(repo)
        make_repo(repo, files, rng)
        git(repo, "checkout", "-q", "-b", "feature")
        edit(repo, [3, 50, 400, 1200, 2500 % files], files, rng, "the change")
        admin = os.path.join(tmp, "admin.yaml")
        Path(admin).write_text(f"providers:\n  local:\n    type: openai\n    baseUrl: {chat.base_url}\n"
                               "defaults:\n  models: {review: local/m1}\n")
        cold, warm, moved = [], [], []
        for r in range(rounds):
            cache = os.path.join(tmp, f"cache{r}")
            cold.append(await review(repo, admin, cache))
            warm.append(await review(repo, admin, cache))
            git(repo, "checkout", "-q", "main")
            edit(repo, list(range(10 + r * 10, 20 + r * 10)), files, rng, f"main moves on {r}")
            git(repo, "checkout", "-q", "feature")
            git(repo, "rebase", "-q", "main")
            moved.append(await review(repo, admin, cache))
    await chat.close()
    base = statistics.median(cold)
    print(f"reviewer review, {files} files, a 5-file change, median of {rounds}:")
    print(f"  cold (index built):            {base:6.2f} s  (baseline)")
    ok = True
    for name, times in (("warm (index cached)", warm), ("moved (index updated)", moved)):
        ratio = statistics.median(times) / base
        ok &= ratio <= AIM
        print(f"  {name + ':':30s} {statistics.median(times):6.2f} s  {ratio:.2f}× cold (aim ≤ {AIM})")
    return ok


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    sys.exit(0 if asyncio.run(run(args.files, args.rounds)) else 1)


if __name__ == "__main__":
    main()
