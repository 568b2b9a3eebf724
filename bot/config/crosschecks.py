"""Rules that relate one value to others: unique rule ids, ids taken by an administrator's rule,
a model's provider declared by the instance or the account.

They read the raw mapping and skip whatever is malformed (the shape check reports that), so that a
file with a structural error still gets every other error reported in the same run.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from bot.config.model import Rule
from bot.documents.diagnostics import Diagnostic
from bot.documents.pointers import human_pointer
from bot.documents.yamldoc import YamlDocument

LAYER_NAMES = {"instance": "the instance's", "account": "the account's", "repository": "the repository's"}


def id_entries(data: Mapping[str, Any], base: str = "") -> list[tuple[str, str]]:
    """(rule id, pointer of that id) for every rule with a string id."""
    rules = data.get("rules")
    if not isinstance(rules, list):
        return []
    return [(item["id"], f"{base}/rules/{index}/id") for index, item in enumerate(rules)
            if isinstance(item, dict) and isinstance(item.get("id"), str)]


def _at(doc: YamlDocument, pointer: str, code: str, message: str) -> Diagnostic:
    line, column = doc.locate(pointer)
    return Diagnostic(line, column, pointer, code, f"{human_pointer(pointer)}: {message}")


def duplicate_ids(entries: list[tuple[str, str]], doc: YamlDocument) -> list[Diagnostic]:
    """The second use of an id is the error; the message points back at the first."""
    first: dict[str, str] = {}
    out = []
    for rule_id, pointer in entries:
        if rule_id in first:
            line = doc.locate(first[rule_id])[0]
            out.append(_at(doc, pointer, "duplicate-id",
                           f"duplicate rule id `{rule_id}`; it is already used at line {line} "
                           f"({human_pointer(first[rule_id])}); each rule needs its own id"))
        else:
            first[rule_id] = pointer
    return out


def taken_ids(entries: list[tuple[str, str]], doc: YamlDocument, taken: Mapping[str, Rule], code: str,
              reason: str) -> list[Diagnostic]:
    """Ids already used by a rule of an earlier layer (`taken`), reported with that rule's place."""
    out = []
    for rule_id, pointer in entries:
        rule = taken.get(rule_id)
        if rule is not None:
            where = f"{rule.origin.file}:{rule.origin.line}" if rule.origin.file else f"line {rule.origin.line}"
            out.append(_at(doc, pointer, code,
                           f"rule id `{rule_id}` is already used by {LAYER_NAMES.get(rule.source, 'an')} rule "
                           f"{human_pointer(rule.origin.pointer)} at {where}; {reason}"))
    return out


def model_entries(data: Mapping[str, Any], base: str = "") -> list[tuple[str, str]]:
    """(model reference, pointer) for each well-formed `models.*` value."""
    models = data.get("models")
    if not isinstance(models, dict):
        return []
    return [(value, f"{base}/models/{key}") for key, value in models.items()
            if key in ("review", "fallback") and isinstance(value, str) and "/" in value.strip("/")]


def undeclared_providers(entries: list[tuple[str, str]], doc: YamlDocument, declared: Collection[str],
                         scope: str, hint: str = "") -> list[Diagnostic]:
    out = []
    for model, pointer in entries:
        provider = model.split("/", 1)[0]
        if provider in declared:
            continue
        known = f"declared: {', '.join(sorted(declared))}" if declared else "no provider is declared"
        out.append(_at(doc, pointer, "undeclared-provider",
                       f"provider `{provider}` of model `{model}` is not declared by {scope} ({known}){hint}"))
    return out
