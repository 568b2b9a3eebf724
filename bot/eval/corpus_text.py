"""A corpus written out as `corpus.yaml` text, for the tools that make one (`reviewer eval import`,
scripts/eval_repos.py): a case a few lines, an item one line when it has one description, every
string that YAML could read as something else quoted, so that `load_corpus` reads back exactly
what was written.

A case is a plain mapping in the corpus's own shape (`id`, `repo`, `base`, `head`, optional `tags`,
`must_find`, optional `must_not` and `config`), with an optional `note`: a comment on its id line.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

_PLAIN = re.compile(r"[A-Za-z_/.][A-Za-z0-9_./+-]*")
_COMMIT = re.compile(r"[0-9a-f]{40}")
_WORDS = {"true", "false", "null", "yes", "no", "on", "off", "y", "n", ".inf", ".nan"}
# Characters JSON's escaping leaves as they are that YAML does not read back as themselves in a
# double-quoted scalar: DEL, the C1 controls, surrogates, U+FFFE and U+FFFF are not allowed in a
# document; NEL and the line and paragraph separators are line breaks, folded into a space.
_ESCAPED = re.compile("[\x7f-\x9f\u2028\u2029\ud800-\udfff\ufffe\uffff]")


def quote(text: str) -> str:
    """`text` as a YAML double-quoted scalar (JSON's escapes are YAML's)."""
    return _ESCAPED.sub(lambda m: f"\\u{ord(m[0]):04x}", json.dumps(text, ensure_ascii=False))


def scalar(text: str) -> str:
    """Plain where YAML reads it back as this very string (a path, an id, a commit), else quoted."""
    if _COMMIT.fullmatch(text) and re.search(r"[a-df]", text):
        return text
    if _PLAIN.fullmatch(text) and text.lower() not in _WORDS:
        return text
    return quote(text)


def _flow(values: Sequence[str]) -> str:
    return "[" + ", ".join(quote(v) for v in values) + "]"


def _place(place: Mapping[str, Any]) -> list[str]:
    about = place.get("about")
    lines = place.get("lines")
    head = [f"path: {scalar(place['path'])}"] + ([f"lines: [{lines[0]}, {lines[1]}]"] if lines else [])
    several: list[str] = about if isinstance(about, list) and len(about) > 1 else []
    if about is not None and not several:
        head.append(f"about: {quote(about[0] if isinstance(about, list) else about)}")
    if place.get("tags"):
        head.append(f"tags: {_flow(place['tags'])}")
    if not several:
        return ["      - {" + ", ".join(head) + "}"]
    out = [f"      - {head[0]}", *(f"        {part}" for part in head[1:]), "        about:"]
    return out + [f"          - {quote(text)}" for text in several]


def render(cases: Sequence[Mapping[str, Any]], header: str = "") -> str:
    """The text of corpus.yaml: `header` (comment lines, each starting with `#`), then the cases."""
    out = [header.rstrip("\n")] if header else []
    out.append("cases:")
    for case in cases:
        note = f"  # {case['note']}" if case.get("note") else ""
        out += [f"  - id: {scalar(case['id'])}{note}", f"    repo: {scalar(case['repo'])}",
                f"    base: {scalar(case['base'])}", f"    head: {scalar(case['head'])}"]
        if case.get("config"):
            out.append(f"    config: {scalar(case['config'])}")
        if case.get("tags"):
            out.append(f"    tags: {_flow(case['tags'])}")
        out.append("    must_find:" + ("" if case["must_find"] else " []"))
        for item in case["must_find"]:
            out += _place(item)
        if case.get("must_not"):
            out.append("    must_not:")
            for place in case["must_not"]:
                out += _place(place)
    return "\n".join(out) + "\n"
