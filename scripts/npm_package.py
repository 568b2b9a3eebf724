"""Fetch one file out of a published npm package, for the scripts that cut GitHub's descriptions.

Shared by `cut_openapi.py`, `cut_webhooks.py` and `cut_graphql.py`. It uses the ordinary npm client (`npm pack`), so it
reaches whatever registry npm is configured for, and it pins the version so that a re-run cuts
the same bytes unless someone asks for a newer release.
"""

from __future__ import annotations

import json
import subprocess
import tarfile
import tempfile
from pathlib import Path


def read_json_from_package(package: str, version: str, member: str) -> object:
    """`npm pack package@version` into a temporary directory and load `package/<member>` as JSON."""
    return json.loads(read_text_from_package(package, version, member))


def read_text_from_package(package: str, version: str, member: str) -> str:
    """`npm pack package@version` into a temporary directory and read `package/<member>` as text."""
    with tempfile.TemporaryDirectory(prefix="npm-cut-") as tmp:
        result = subprocess.run(
            ["npm", "pack", f"{package}@{version}", "--silent", "--pack-destination", tmp],
            check=True,
            capture_output=True,
            text=True,
        )
        tarball = Path(tmp) / result.stdout.strip().splitlines()[-1]
        with tarfile.open(tarball, "r:gz") as archive:
            handle = archive.extractfile(f"package/{member}")
            if handle is None:
                raise SystemExit(f"{package}@{version} has no file {member}")
            return handle.read().decode("utf-8")


def repo_root() -> Path:
    return Path(__file__).resolve().parent.parent
