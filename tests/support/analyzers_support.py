"""Helpers of the analyzer tests: SARIF documents, upload bodies, and the real tools' output."""

from __future__ import annotations

import base64
import gzip
import json
import struct
import subprocess
import zlib
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


def gzip_bomb(size: int, fill: bytes = b"\0", chunk: int = 1024 * 1024) -> bytes:
    """A valid gzip file of `size` bytes of `fill` (`size` a multiple of `chunk`), made in well
    under a second instead of compressing all of it: after a full flush the compressor starts
    afresh, so every chunk's deflate blocks are the same bytes, made once and repeated. The
    trailer's CRC-32 and length are the real ones."""
    chunks, rest = divmod(size, chunk)
    assert rest == 0, "size must be a multiple of chunk"
    data = fill * chunk
    deflate = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = deflate.compress(data) + deflate.flush(zlib.Z_FULL_FLUSH)
    final = zlib.compressobj(9, zlib.DEFLATED, -15).flush()  # an empty last block
    crc = 0
    for _ in range(chunks):
        crc = zlib.crc32(data, crc)
    header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"  # deflate, no name, no time, best compression
    return header + block * chunks + final + struct.pack("<II", crc, size & 0xFFFFFFFF)


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
