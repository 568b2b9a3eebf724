"""Java's own rules: a member imported statically is used bare; a file's package is its `package`
line, not its directory (bench/context_truth.py says the rules)."""

from __future__ import annotations

import re

from truth.model import Tag


def static_import(text: str, target: Tag) -> bool:
    """Whether a Java file imports the member statically (`import static a.b.Util.name;` or `.*`)."""
    owner = target.scope.split(".")[-1]
    return re.search(rf"^import\s+static\s+[\w.]*\b{re.escape(owner)}\.({re.escape(target.name)}|\*)\s*;",
                     text, re.M) is not None


def java_package(text: str) -> str:
    """The package a Java file declares (`package a.b;`), "" for the default package."""
    match = re.search(r"^\s*package\s+([\w.]+)\s*;", text, re.M)
    return match.group(1) if match else ""
