"""Bounded JSON parsing (bot.documents.jsonbody.parse_json) against bare `json.loads`, in the same run.

What the bound costs on the bodies the server parses most: GitHub's example webhook payloads
(tests/data/webhooks, 3 to 30 KB), one of about 2 MB (a pull_request payload carrying 10,000
labels) and a connector resource as the API receives it. parse_json walks every
container (depth) and integer (length) after json.loads; the aim is a ratio of at most 3.0.

Usage: python bench/jsonbody.py [--runs N]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run from a checkout without installing

from bot.documents.jsonbody import parse_json  # noqa: E402

AIM = 3.0


def best(func: Callable[[], object], runs: int) -> float:
    """The fastest of `runs` timings: the least disturbed by the rest of the machine."""
    timings = []
    for _ in range(runs):
        start = time.perf_counter()
        func()
        timings.append(time.perf_counter() - start)
    return min(timings)


def bodies() -> dict[str, bytes]:
    found = {path.stem: path.read_bytes() for path in sorted((ROOT / "tests" / "data" / "webhooks").glob("*.json"))
             if path.name != "SOURCES.json"}
    large = json.loads(found["pull_request.labeled"])
    large["pull_request"]["labels"] = [dict(large["label"], id=i, name=f"label-{i}") for i in range(10_000)]
    found["pull_request with 10,000 labels"] = json.dumps(large).encode()
    connector = (ROOT / "docs" / "examples" / "connectors" / "okta-oidc.yaml").read_text()
    found["connector (as JSON)"] = json.dumps({"text": connector, "spec": {"redirect_url": ["https://x"] * 20}}).encode()
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    args = parser.parse_args()
    worst = 0.0
    print(f"{'body':34} {'bytes':>9} {'json.loads':>11} {'parse_json':>11} {'ratio':>6}")
    for name, body in bodies().items():
        assert parse_json(body) == json.loads(body), name
        runs = max(5, args.runs // max(1, len(body) // 50_000))
        baseline = best(lambda: json.loads(body), runs)
        ours = best(lambda: parse_json(body), runs)
        worst = max(worst, ours / baseline)
        print(f"{name:34} {len(body):9} {baseline * 1e6:9.0f}us {ours * 1e6:9.0f}us {ours / baseline:6.2f}")
    verdict = "meets" if worst <= AIM else "misses"
    print(f"worst ratio {worst:.2f} ({verdict} the aim of {AIM})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
