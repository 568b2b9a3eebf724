"""Copy the SARIF 2.1.0 JSON Schema out of a published npm package into tests/data/sarif/.

`reviewer review --format sarif` must write what GitHub's code scanning upload takes; its test
validates the output against the OASIS SARIF 2.1.0 schema (the final, `rtm.5`, revision), which
Microsoft ships in the MIT-licensed npm package `@microsoft/jest-sarif` (its matchers validate
against it). Run from the repository root (needs `npm`, which reaches the npm registry):

    .venv/bin/python scripts/cut_sarif_schema.py                 # the pinned version
    .venv/bin/python scripts/cut_sarif_schema.py --version 1.0.0-beta.0

It writes `tests/data/sarif/sarif-schema-2.1.0.json` unchanged (JSON Schema draft-04).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from npm_package import read_json_from_package, repo_root

PACKAGE = "@microsoft/jest-sarif"
PINNED_VERSION = "1.0.0-beta.0"
MEMBER = "lib/schemas/sarif-2.1.0-rtm.5.json"
OUTPUT = Path("tests/data/sarif/sarif-schema-2.1.0.json")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", default=PINNED_VERSION, help=f"{PACKAGE} version (default {PINNED_VERSION})")
    args = parser.parse_args()
    schema = read_json_from_package(PACKAGE, args.version, MEMBER)
    out = repo_root() / OUTPUT
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(schema, indent=1) + "\n")
    (out.parent / "SOURCE.txt").write_text(f"{OUTPUT.name}: {PACKAGE}@{args.version} {MEMBER} (MIT licence)\n")
    print(f"wrote {OUTPUT}")


if __name__ == "__main__":
    main()
