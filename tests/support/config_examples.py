"""The configuration examples under tests/data/config, and the expectations written in them.

Each example may start with comment directives:
  `# admin: FILE`         validate against that admin file (beside the examples)
  `# full-name: O/N`      the repository's full name (selects the account)
  `# kind: admin-config`  the example is an admin file (else a repository file)
  `# expect: L:C PTR CODE` one expected error (`""` for the root pointer); an invalid example lists
                         every error it must produce, in order.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from bot.config.admin import AdminConfig, load_admin_config
from bot.config.repo import load_repo_config
from bot.documents.diagnostics import Diagnostic

ROOT = Path(__file__).parent.parent / "data" / "config"
VALID = sorted((ROOT / "valid").glob("*.yaml"))
INVALID = sorted((ROOT / "invalid").glob("*.yaml"))

_DIRECTIVE = re.compile(r"^# (admin|full-name|kind|expect): (.+)$")


@dataclass(frozen=True)
class Example:
    path: Path
    text: str
    admin_file: str | None
    full_name: str | None
    expected: list[tuple[int, int, str, str]]
    kind: str = "repo-config"

    @property
    def is_admin(self) -> bool:
        return self.kind == "admin-config"

    def admin(self) -> AdminConfig | None:
        if self.admin_file is None:
            return None
        admin, errors = load_admin_config((ROOT / self.admin_file).read_text(), self.admin_file)
        assert errors == [], errors
        return admin

    def validate(self) -> list[Diagnostic]:
        if self.is_admin:
            return load_admin_config(self.text, self.path.name)[1]
        return load_repo_config(self.text, self.path.name, self.admin(), self.full_name)[1]


def example(path: Path) -> Example:
    text = path.read_text()
    found: dict[str, list[str]] = {"admin": [], "full-name": [], "kind": [], "expect": []}
    for line in text.splitlines():
        match = _DIRECTIVE.match(line)
        if match:
            found[match.group(1)].append(match.group(2).strip())
    expected = []
    for entry in found["expect"]:
        place, pointer, code = entry.split(" ")
        line, column = place.split(":")
        expected.append((int(line), int(column), "" if pointer == '""' else pointer, code))
    return Example(path, text, (found["admin"] or [None])[0], (found["full-name"] or [None])[0], expected,
                   (found["kind"] or ["repo-config"])[0])


def outcome(diags: list[Diagnostic]) -> list[tuple[int, int, str, str]]:
    return [(d.line, d.column, d.pointer, d.code) for d in diags]
