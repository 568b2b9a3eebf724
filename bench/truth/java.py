"""Java's own rules: a member imported statically is used bare (bench/context_truth.py says the rules)."""

from __future__ import annotations

import re

from truth.model import Tag


def static_import(text: str, target: Tag) -> bool:
    """Whether a Java file imports the member statically (`import static a.b.Util.name;` or `.*`)."""
    owner = target.scope.split(".")[-1]
    return re.search(rf"^import\s+static\s+[\w.]*\b{re.escape(owner)}\.({re.escape(target.name)}|\*)\s*;",
                     text, re.M) is not None
