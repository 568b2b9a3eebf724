"""Where a JavaScript or TypeScript import that is not relative leads inside the repository (pure):
a workspace package by the name its package.json gives (`@scope/core` → packages/core, to the
file its `source`, `types`, `module` or `main` names, or its sources' index), and a path alias of a
tsconfig.json or jsconfig.json (`"paths": {"@/*": ["./src/*"]}`, `baseUrl`). A package from
outside the repository has no candidate: its names are none of the repository's definitions.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

_CONFIGS = ("tsconfig.json", "jsconfig.json")
_ENTRY_FIELDS = ("source", "types", "typings", "module", "main")
_BUILT = re.compile(r"(^|/)(dist|lib|build|esm|cjs|out)(/|$)")
_COMMENT = re.compile(r'("(?:\\.|[^"\\])*")|//[^\n]*|/\*.*?\*/', re.S)


@dataclass
class Packages:
    packages: dict[str, tuple[str, list[str]]] = field(default_factory=dict)  # name → (directory, entry stems)
    aliases: list[tuple[str, str, list[str]]] = field(default_factory=list)  # (config dir, pattern, targets)
    bases: list[str] = field(default_factory=list)  # baseUrl directories


def read_packages(paths: Iterable[str], text: Callable[[str], str | None]) -> Packages:
    """The workspace packages and path aliases the repository's package.json and tsconfig files declare."""
    out = Packages()
    for path in sorted(paths):
        name = posixpath.basename(path)
        if "node_modules/" in path or name not in ("package.json", *_CONFIGS):
            continue
        data = _load(text(path))
        directory = posixpath.dirname(path)
        if name == "package.json" and isinstance(data.get("name"), str):
            out.packages[data["name"]] = (directory, _entries(directory, data))
        elif name in _CONFIGS and isinstance(data.get("compilerOptions"), dict):
            options = data["compilerOptions"]
            base = _join(directory, options["baseUrl"]) if isinstance(options.get("baseUrl"), str) else directory
            if isinstance(options.get("baseUrl"), str):
                out.bases.append(base)
            for pattern, targets in (options.get("paths") or {}).items():
                if isinstance(targets, list):
                    out.aliases.append((directory, pattern, [_join(base, t) for t in targets if isinstance(t, str)]))
    return out


def candidates(packages: Packages, importer: str, source: str) -> list[str]:
    """The paths (without an extension, or files) a bare import of `source` may name, best first."""
    out: list[str] = []
    for directory, pattern, targets in packages.aliases:
        if directory and not importer.startswith(directory + "/"):
            continue
        head, star, tail = pattern.partition("*")
        if star and source.startswith(head) and source.endswith(tail) and len(source) >= len(head) + len(tail):
            middle = source[len(head):len(source) - len(tail)]
            out += [t.replace("*", middle, 1) for t in targets]
        elif not star and source == pattern:
            out += targets
    name, rest = _split(source)
    if name in packages.packages:
        directory, entries = packages.packages[name]
        out += [_join(directory, rest), _join(directory, "src/" + rest)] if rest else entries
    out += [_join(base, source) for base in packages.bases]
    return out


def _split(source: str) -> tuple[str, str]:
    parts = source.split("/")
    count = 2 if source.startswith("@") else 1
    return "/".join(parts[:count]), "/".join(parts[count:])


def _entries(directory: str, data: dict) -> list[str]:
    values = [data[f] for f in _ENTRY_FIELDS if isinstance(data.get(f), str)]
    exports = data.get("exports")
    root = exports.get(".") if isinstance(exports, dict) else exports
    while isinstance(root, dict):  # {"import": {"types": …, "default": …}}
        root = next((v for v in root.values() if isinstance(v, str | dict)), None)
    if isinstance(root, str):
        values.append(root)
    out = []
    for value in values:
        path = re.sub(r"(\.d)?\.(m|c)?(j|t)sx?$", "", _join(directory, value))
        out += [path, _BUILT.sub(r"\1src\3", path, count=1)]
    return [*dict.fromkeys(out), _join(directory, "src/index"), _join(directory, "index")]


def _join(directory: str, path: str) -> str:
    joined = posixpath.normpath(posixpath.join(directory, path))
    return "" if joined == "." else joined


def _load(text: str | None) -> dict:
    """JSON, or JSON with comments and trailing commas (a tsconfig.json); {} when neither."""
    if not text:
        return {}
    for attempt in (text, re.sub(r",(\s*[}\]])", r"\1", _COMMENT.sub(lambda m: m.group(1) or "", text))):
        try:
            data = json.loads(attempt)
        except ValueError:
            continue
        return data if isinstance(data, dict) else {}
    return {}
