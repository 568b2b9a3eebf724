"""The definitions of a tree: universal-ctags' tags of the kinds a reviewer opens, corrected and
completed by each language's own rules (bench/context_truth.py says them)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

from truth import javascript, rust
from truth.model import DEFINITION_KINDS, FUNCTION_KINDS, WORD, Tag, language
from truth.python import python_tags
from truth.text import ALIAS, IMPORT, extent, strip_file


def tags_of(root: Path, paths: list[str]) -> list[Tag]:
    """Definitions in `paths` under `root`: ctags, plus each language's own (JavaScript's member
    assignments and anonymous default exports among them)."""
    listing = root / ".ctags-files"
    listing.write_text("\n".join(paths))
    out = subprocess.run(["ctags", "--output-format=json", "--fields=+neKZS", "-L", str(listing), "-f", "-"],
                         cwd=root, capture_output=True, text=True, check=True).stdout
    texts: dict[str, list[str]] = {}
    stripped: dict[str, list[str]] = {}

    def code(path: str) -> list[str]:
        if path not in stripped:
            stripped[path] = strip_file("\n".join(texts[path]), language(path))
        return stripped[path]
    found: dict[tuple[str, int, str], Tag] = {}
    for row in out.split("\n"):  # not splitlines(): a pattern may hold U+2028 or a form feed
        if not row:
            continue
        tag = json.loads(row)
        path, name, kind = tag["path"], tag["name"], tag["kind"]
        lang = language(path)
        if lang is None or kind not in DEFINITION_KINDS[lang] or name.startswith("AnonymousFunction") \
                or not WORD.fullmatch(name):
            continue
        if lang == "rust" and kind == "typedef" and (tag.get("scopeKind") == "implementation" or re.match(
                r"^\s+type\s", (root / path).read_text(errors="replace").split("\n")[tag["line"] - 1])):
            continue  # `type Error = Error;` in an impl: an associated type, not a definition to open
        lines = texts.setdefault(path, (root / path).read_text(errors="replace").split("\n"))
        text = lines[tag["line"] - 1]
        if IMPORT.match(text) or ALIAS.match(text) or (lang == "python" and kind == "variable" and tag.get("scope")):
            continue
        if lang in ("javascript", "typescript") and (kind == "property" or (
                kind in ("variable", "constant") and tag.get("scope"))):
            continue  # an object literal's key, or a variable that is not the module's
        if lang in ("javascript", "typescript") and (name in ("exports", "module") or (
                kind == "class" and not re.search(r"\bclass\b", text)) or (
                kind in ("variable", "constant") and text[:1].isspace())):
            continue  # CommonJS's own objects; a variable indented inside a block
        if lang in ("python", "javascript", "typescript") and kind in ("variable", "constant") \
                and tag.get("scopeKind") in FUNCTION_KINDS | {"function"}:
            continue  # a local
        key = (path, tag["line"], name)
        if key not in found or (kind in FUNCTION_KINDS and found[key].kind not in FUNCTION_KINDS):
            member = javascript.JS_MEMBER.match(text) if lang == "javascript" else None
            found[key] = Tag(name, path, tag["line"], extent(code(path), tag["line"], lang, kind), kind,
                             member.group(1) if member else (tag.get("scope") or "").replace("::", "."),
                             "object" if member else tag.get("scopeKind") or "")
    for path in paths:
        if language(path) == "python":
            text = (root / path).read_text(errors="replace")
            python = python_tags(path, text)
            if python is not None:
                found = {k: v for k, v in found.items() if k[0] != path}
                found.update({(t.path, t.line, t.name): t for t in python})
        if language(path) == "rust":
            lines = texts.setdefault(path, (root / path).read_text(errors="replace").split("\n"))
            rust.extra_tags(path, lines, found, code)
        if language(path) in ("javascript", "typescript"):  # functions ctags leaves out (nested ones in TS)
            lines = texts.setdefault(path, (root / path).read_text(errors="replace").split("\n"))
            javascript.region_tags(path, found, code)
            javascript.export_tags(path, lines, found, code)
        if language(path) != "javascript":
            continue
        lines = texts.setdefault(path, (root / path).read_text(errors="replace").split("\n"))
        javascript.member_tags(path, lines, found, code)
    return sorted(found.values(), key=lambda t: (t.path, t.line))
