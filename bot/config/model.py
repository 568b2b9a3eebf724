"""The effective configuration: what the planner, the server and the engine consume.

It is the result of layering instance → account → repository (see `bot.config.layering`), already
validated. Every entry remembers which layer wrote it (`source`) and where (`Origin`), so that a
plan can say why a rule applies and a missing referenced file can be reported at its reference.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

Layer = Literal["default", "instance", "account", "repository"]
Feedback = Literal["detailed", "standard", "minimal"]

REPO_CONFIG_NAMES = (".reviewer.yaml", ".reviewer.yml")


@dataclass(frozen=True, slots=True)
class Origin:
    """Where a value was written: the file (repository path or admin file path) and position."""

    file: str
    pointer: str
    line: int
    column: int


@dataclass(frozen=True, slots=True)
class Expr:
    """A CEL expression (`filterExpr` or `whenExpr`) with the layer and place that wrote it."""

    text: str
    source: Layer
    origin: Origin


@dataclass(frozen=True, slots=True)
class Glob:
    pattern: str
    source: Layer
    origin: Origin


@dataclass(frozen=True, slots=True)
class Rule:
    id: str
    source: Layer
    rule: str | None  # exactly one of rule / file is set
    file: str | None
    paths: tuple[str, ...]  # empty: the rule applies to every file under review
    when_expr: Expr | None
    origin: Origin  # the rule object; `file_origin` the `file` value, for missing-file errors
    file_origin: Origin | None = None


@dataclass(frozen=True, slots=True)
class ContextEntry:
    path: str
    description: str
    paths: tuple[str, ...]
    source: Layer
    origin: Origin  # the `path` value, for missing-file errors


@dataclass(frozen=True, slots=True)
class Models:
    review: str | None = None
    fallback: str | None = None

    def to_json(self) -> dict:
        return {"review": self.review, "fallback": self.fallback}


@dataclass(frozen=True, slots=True)
class Comments:
    inline: bool = True
    summary_template: str | None = None
    inline_template: str | None = None
    summary_template_origin: Origin | None = None
    inline_template_origin: Origin | None = None

    def to_json(self) -> dict:
        return {"inline": self.inline, "summaryTemplate": self.summary_template,
                "inlineTemplate": self.inline_template}


@dataclass(frozen=True, slots=True)
class Price:
    """What a provider charges per million tokens (the admin file's `price`), in one currency."""

    input: float
    output: float

    def cost(self, prompt_tokens: int, answer_tokens: int) -> float:
        return (prompt_tokens * self.input + answer_tokens * self.output) / 1_000_000


@dataclass(frozen=True, slots=True)
class ToolSettings:
    """Whether a provider's models may look things up before they answer (the admin file's
    `providers.<name>.tools`), and how far: rounds of lookups and bytes of their answers, per
    model request. On by default: a provider that refuses tools is asked without them."""

    enabled: bool = True
    max_rounds: int = 4
    max_bytes: int = 24_000


@dataclass(frozen=True, slots=True)
class Provider:
    """A model provider declared by the instance or an account (never by a repository)."""

    name: str
    type: str  # "openai": the OpenAI-compatible chat-completions protocol
    base_url: str
    api_key: str | None  # a reference, `secret://NAME/KEY` or `env://VAR`; never a literal key
    timeout: float
    source: Layer
    context_tokens: Mapping[str, int] = field(default_factory=dict)  # model name → its context window
    price: Price | None = None  # of every model of the provider, unless `model_prices` names it
    model_prices: Mapping[str, Price] = field(default_factory=dict)  # model name → its own price
    tools: ToolSettings = ToolSettings()  # lookups its models may ask for before they answer
    verify: bool = False  # re-check its models' findings before posting (its own `verify`, else `defaults.verify`)

    def price_of(self, model: str) -> Price | None:
        return self.model_prices.get(model, self.price)


def frozen_mapping(mapping: Mapping | None = None) -> Mapping:
    """A read-only copy, for the mappings of frozen dataclasses."""
    return MappingProxyType(dict(mapping or {}))


@dataclass(frozen=True, slots=True)
class IndexLimits:
    """What one repository's index may hold (the admin file's `index`, instance level)."""

    max_file_bytes: int = 1_000_000
    max_repo_bytes: int = 200_000_000
    max_files: int = 50_000


@dataclass(frozen=True, slots=True)
class ReviewLayer:
    """What one layer of the admin file's `reviews` sets (`maxInlineComments`, …), and where."""

    source: Layer
    values: Mapping[str, Any] = field(default_factory=frozen_mapping)  # only the keys it sets
    origins: Mapping[str, Origin] = field(default_factory=frozen_mapping)


@dataclass(frozen=True, slots=True)
class ReviewLimits:
    """The noise caps and the walkthrough switch a repository's reviews get (`AdminConfig.review_limits`)."""

    max_inline_comments: int | None = 10  # every source's together (bot/reviews/ledger.py DEFAULT_MAX_INLINE)
    inline_severity_floor: str = "nit"
    walkthrough: bool = True
    # Key (`maxInlineComments`, …) → the layer it came from: "default", "instance" or "account"
    # (an account's `repositories` entry is the account's too; its origin names the entry).
    sources: Mapping[str, str] = field(default_factory=frozen_mapping)
    origins: Mapping[str, Origin] = field(default_factory=frozen_mapping)


@dataclass(frozen=True, slots=True)
class EffectiveConfig:
    enabled: bool = True
    disabled_by: str | None = None  # a sentence saying which layer turned the repository off
    models: Models = Models()
    feedback: Feedback = "standard"
    comments: Comments = Comments()
    require_suggested_fix: bool = False
    approve: bool = False
    filter_exprs: tuple[Expr, ...] = ()  # ANDed, instance first
    ignore: tuple[Glob, ...] = ()
    rules: tuple[Rule, ...] = ()
    context: tuple[ContextEntry, ...] = ()
    agent_files: bool = True
    providers: Mapping[str, Provider] = field(default_factory=frozen_mapping)
    # Dotted field name ("enabled", "models.review", "comments.inline", "rules", …) → the layer
    # the effective value came from; "default" when no layer set it. Lists record every layer
    # that contributed, joined with "+" ("instance+repository").
    sources: Mapping[str, str] = field(default_factory=frozen_mapping)
