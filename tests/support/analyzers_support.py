"""Helpers of the analyzer tests: SARIF documents, upload bodies, and the real tools' output."""

from __future__ import annotations

import base64
import gzip
import json
import subprocess
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent.parent / "data" / "analyzers"
SHA = "0123456789abcdef0123456789abcdef01234567"


def load(name: str) -> dict[str, Any]:
    return json.loads((DATA / name).read_text())


def encode(document: Any) -> str:
    """What GitHub's upload body carries: base64 of gzip of the JSON text."""
    raw = document if isinstance(document, bytes) else json.dumps(document).encode()
    return base64.b64encode(gzip.compress(raw)).decode()


def body(document: Any, **fields: Any) -> dict[str, Any]:
    return {"commit_sha": SHA, "ref": "refs/pull/7/head", "sarif": encode(document), **fields}


def result(uri: str = "src/a.py", line: int = 3, **extra: Any) -> dict[str, Any]:
    return {"ruleId": "R1", "level": "warning", "message": {"text": "something is off"},
            "locations": [{"physicalLocation": {"artifactLocation": {"uri": uri}, "region": {"startLine": line}}}],
            **extra}


def log(*results: dict[str, Any], name: str = "tool", rules: list | None = None, **run: Any) -> dict[str, Any]:
    return {"version": "2.1.0", "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
            "runs": [{"tool": {"driver": {"name": name, "rules": rules or []}}, "results": list(results), **run}]}


def ruff_sarif(directory: Path, files: dict[str, str], ruff: str) -> dict[str, Any]:
    """The real ruff's SARIF for files written under `directory` (its absolute file:// URIs)."""
    for name, text in files.items():
        (directory / name).parent.mkdir(parents=True, exist_ok=True)
        (directory / name).write_text(text)
    out = subprocess.run([ruff, "check", "--isolated", "--no-cache", "--select", "F,E,I,B", "--exit-zero",
                          "--output-format", "sarif", *files], cwd=directory, capture_output=True, check=True)
    return json.loads(out.stdout)
