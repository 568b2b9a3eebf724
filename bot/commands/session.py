"""Where `reviewer login` keeps the terminal's session (`$XDG_CONFIG_HOME/reviewer/session.json`,
default `~/.config`, mode 0600), and how it writes it. A module of its own so that the commands
that only read the session (`upload-sarif`, the admin client of `learnings`) do not import the
login's listener and its sealing (aiohttp's server, cryptography: about 50 ms a start)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any


def session_file(environ: dict[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    base = env.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "reviewer" / "session.json"


def save_session(path: Path, record: dict[str, Any]) -> None:
    """Written 0600 from the start (never world-readable for a moment)."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        json.dump(record, handle)
    os.chmod(path, 0o600)
