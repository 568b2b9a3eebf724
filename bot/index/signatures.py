"""What a definition's signature says of the calls that fit it (pure): a use with a number of
arguments its parameters cannot take is not a call of it, which tells apart overloads and
same-named functions of other arities."""

from __future__ import annotations

import re


def arity_fits(signature: str, count: int | None) -> bool:
    """Whether a call with `count` arguments fits the parameters a signature declares (varargs,
    defaults and `self` allowed for); unknown counts fit."""
    if count is None or "(" not in signature:
        return True
    inner = signature[signature.find("(") + 1:]
    depth, params, current, has = 0, 0, "", False
    for char in inner:
        if char == ")" and depth == 0:
            break
        if char == "," and depth == 0:
            params += 1
            current = ""
            continue
        depth += 1 if char in "<([{" else -1 if char in ">)]}" else 0
        current += char
        has = has or not char.isspace()
    params += 1 if has else 0
    if re.search(r"\.\.\.|\*|\bvarargs\b", inner.split(")")[0]):
        return True
    required = params - inner.split(")")[0].count("=") - (1 if re.match(r"\s*&?(mut\s+)?self\b", inner) else 0)
    return required <= count <= params
