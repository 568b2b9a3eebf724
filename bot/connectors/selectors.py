"""Kubernetes' equality-based label selectors, as the resource API's `labelSelector` reads them."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Requirement:
    key: str
    op: str  # "=", "!=", "exists", "!exists"
    value: str = ""

    def matches(self, labels: dict) -> bool:
        if self.op == "exists":
            return self.key in labels
        if self.op == "!exists":
            return self.key not in labels
        equal = labels.get(self.key) == self.value
        return equal if self.op == "=" else not equal


def parse_selector(text: str) -> list[Requirement] | str:
    """Kubernetes' equality-based selectors: `a=b`, `a==b`, `a!=b`, `a`, `!a`, comma-separated."""
    found = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        if "!=" in part:
            key, value = part.split("!=", 1)
            op = "!="
        elif "=" in part:
            key, value = part.split("==", 1) if "==" in part else part.split("=", 1)
            op = "="
        elif part.startswith("!"):
            key, value, op = part[1:], "", "!exists"
        else:
            key, value, op = part, "", "exists"
        key, value = key.strip(), value.strip()
        if not key or any(c in key + value for c in " =!()"):
            return f"cannot parse the label selector requirement {part!r}; use `key=value`, `key!=value`, " \
                   "`key` or `!key`, comma-separated"
        found.append(Requirement(key, op, value))
    return found
