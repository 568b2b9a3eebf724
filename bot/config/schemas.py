"""The published JSON Schemas (draft 2020-12) of the repository and admin files, and of
`reviewer eval`'s corpus.

They are generated from the same shapes the validator walks, and shipped as files under
`bot/schemas/` for editors (`# yaml-language-server: $schema=...`). Regenerate them with
`python -m bot.config.schemas`; a test fails when a shipped file is stale.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bot.config.admin_schema import ADMIN_CONFIG
from bot.config.corpus_schema import CORPUS
from bot.config.repo_schema import REPO_CONFIG
from bot.shapes import to_json_schema

SCHEMA_DIR = Path(__file__).resolve().parent.parent / "schemas"


def repo_json_schema() -> dict[str, Any]:
    return to_json_schema(REPO_CONFIG, title="Reviewer repository configuration (.reviewer.yaml)")


def admin_json_schema() -> dict[str, Any]:
    return to_json_schema(ADMIN_CONFIG, title="Reviewer administrator configuration")


def eval_corpus_json_schema() -> dict[str, Any]:
    return to_json_schema(CORPUS, title="Reviewer evaluation corpus (corpus.yaml of reviewer eval)")


SHIPPED: dict[str, Callable[[], dict[str, Any]]] = {
    "repo-config": repo_json_schema,
    "admin-config": admin_json_schema,
    "eval-corpus": eval_corpus_json_schema,
}


def render(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def shipped_path(name: str) -> Path:
    return SCHEMA_DIR / f"{name}.json"


def write_schema_files() -> list[Path]:
    SCHEMA_DIR.mkdir(exist_ok=True)
    written = []
    for name, make in SHIPPED.items():
        path = shipped_path(name)
        path.write_text(render(make()), encoding="utf-8")
        written.append(path)
    return written


if __name__ == "__main__":
    for written_path in write_schema_files():
        print(written_path)
