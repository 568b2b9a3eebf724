"""What one layer (instance defaults, an account, a repository file) wrote, typed and placed.

Built from a value that already passed validation, so it trusts the shape. Every entry carries its
`Origin` (file, pointer, line, column): a plan can say where a rule came from, and a missing
referenced file is reported at the reference.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from bot.config.model import ContextEntry, Expr, Glob, Layer, Origin, Rule
from bot.documents.pointers import join_pointer
from bot.documents.yamldoc import YamlDocument

# The single-valued fields, by the dotted names used in `EffectiveConfig.sources`.
SCALAR_FIELDS = (
    "enabled", "models.review", "models.fallback", "feedback", "comments.inline",
    "comments.summaryTemplate", "comments.inlineTemplate", "requireSuggestedFix", "approve", "agentFiles",
)


@dataclass(frozen=True, slots=True)
class LayerSettings:
    source: Layer
    file: str
    scalars: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))  # only those set
    origins: Mapping[str, Origin] = field(default_factory=lambda: MappingProxyType({}))
    filter_expr: Expr | None = None
    ignore: tuple[Glob, ...] = ()
    rules: tuple[Rule, ...] = ()
    context: tuple[ContextEntry, ...] = ()

    @classmethod
    def empty(cls, source: Layer, file: str = "") -> LayerSettings:
        return cls(source, file)


def origin_at(doc: YamlDocument, file: str, pointer: str) -> Origin:
    line, column = doc.locate(pointer)
    return Origin(file, pointer, line, column)


class _Placer:
    """Origins for pointers of one document."""

    def __init__(self, doc: YamlDocument, file: str) -> None:
        self.doc, self.file = doc, file

    def __call__(self, pointer: str) -> Origin:
        return origin_at(self.doc, self.file, pointer)


def layer_settings(data: Mapping[str, Any] | None, doc: YamlDocument, file: str, source: Layer,
                   base: str = "") -> LayerSettings:
    """`data` is the validated mapping found at pointer `base` of `doc` (None: nothing set)."""
    data = data or {}
    place = _Placer(doc, file)
    scalars: dict[str, Any] = {}
    origins: dict[str, Origin] = {}
    for dotted in SCALAR_FIELDS:
        value = _dig(data, dotted)
        if value is not None:
            scalars[dotted] = value
            origins[dotted] = place(base + "/" + dotted.replace(".", "/"))
    filter_expr = None
    if "filterExpr" in data:
        filter_expr = Expr(data["filterExpr"], source, place(f"{base}/filterExpr"))
    ignore = tuple(Glob(pattern, source, place(f"{base}/ignore/{i}"))
                   for i, pattern in enumerate(data.get("ignore", ())))
    rules = tuple(_rule(item, source, place, f"{base}/rules/{i}") for i, item in enumerate(data.get("rules", ())))
    context = tuple(ContextEntry(item["path"], item["description"], tuple(item.get("paths", ())), source,
                                 place(f"{base}/context/{i}/path"))
                    for i, item in enumerate(data.get("context", ())))
    return LayerSettings(source, file, MappingProxyType(scalars), MappingProxyType(origins),
                         filter_expr, ignore, rules, context)


def _dig(data: Mapping[str, Any], dotted: str) -> Any:
    value: Any = data
    for part in dotted.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return None
        value = value[part]
    return value


def _rule(item: Mapping[str, Any], source: Layer, place: _Placer, pointer: str) -> Rule:
    when = None
    if "whenExpr" in item:
        when = Expr(item["whenExpr"], source, place(join_pointer(pointer, "whenExpr")))
    file_origin = place(join_pointer(pointer, "file")) if "file" in item else None
    return Rule(item["id"], source, item.get("rule"), item.get("file"), tuple(item.get("paths", ())),
                when, place(pointer), file_origin)
