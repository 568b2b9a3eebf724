"""The administrator's file: loaded, validated to the letter, and typed for layering.

Decisions (docs/configuration.md leaves them open):
- An account may declare a provider with the same name as an instance provider; for that
  account's repositories the account's declaration wins (its own endpoint or key), the way every
  later layer replaces an earlier one.
- Logins are case-insensitive, as on GitHub: `Octo` and `octo` are one account (two spellings in
  the file is a `duplicate-key`), and `disabledRepositories` globs match names case-insensitively.
- A rule id is unique within a layer (`duplicate-id`), and an account rule may not reuse an
  instance rule's id (`duplicate-id`, naming the instance rule): both would meet in one review.
  Two accounts may use the same id; they never meet.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from bot.config.admin_schema import ADMIN_CONFIG
from bot.config.budgets import BudgetLimits, read_budgets
from bot.config.crosschecks import duplicate_ids, id_entries, model_entries, taken_ids, undeclared_providers
from bot.config.document import load_checked, sorted_diagnostics
from bot.config.layer import LayerSettings, layer_settings, origin_at
from bot.config.model import (
    Glob,
    IndexLimits,
    Layer,
    Price,
    Provider,
    ReviewLayer,
    ReviewLimits,
    Rule,
    ToolSettings,
    frozen_mapping,
)
from bot.documents.diagnostics import Diagnostic
from bot.documents.pointers import escape_token, human_pointer
from bot.documents.yamldoc import YamlDocument
from bot.expr.globs import glob_match
from bot.secrets.references import referenced_names

DEFAULT_TIMEOUT = 120.0


@dataclass(frozen=True)
class Account:
    login: str  # as written in the file
    settings: LayerSettings
    providers: Mapping[str, Provider] = field(default_factory=frozen_mapping)
    disabled_repositories: tuple[Glob, ...] = ()
    reviews: ReviewLayer | None = None  # `reviews`, without its `repositories`
    review_repositories: tuple[tuple[Glob, ReviewLayer], ...] = ()  # `reviews.repositories`, in file order
    budgets: BudgetLimits = BudgetLimits()  # the account's own `budgets`


@dataclass(frozen=True)
class AdminConfig:
    path: str
    document: YamlDocument | None
    data: Mapping[str, Any]
    providers: Mapping[str, Provider]  # the instance's
    defaults: LayerSettings
    accounts: Mapping[str, Account]  # lowercased login → account
    index_limits: IndexLimits = IndexLimits()
    judge: str | None = None  # `eval.judge`: the model that confirms `reviewer eval`'s matches
    # The secrets (NAMEs of `secret://NAME/KEY`) the file references anywhere, at instance or account
    # level: model keys and the like, which no connector may ever read (bot/connectors/field_checks.py).
    secret_names: frozenset[str] = frozenset()
    reviews: ReviewLayer | None = None  # the instance's `reviews`
    budgets: BudgetLimits = BudgetLimits()  # the instance's `budgets`, every account's unless it sets its own

    @classmethod
    def empty(cls) -> AdminConfig:
        """No admin file: no providers, no instance or account settings."""
        return cls("", None, frozen_mapping(), frozen_mapping(), LayerSettings.empty("instance"), frozen_mapping())

    def account(self, full_name_or_owner: str | None) -> Account | None:
        """The account of `owner` or `owner/name` (case-insensitive), if the file configures it."""
        if not full_name_or_owner:
            return None
        return self.accounts.get(full_name_or_owner.split("/", 1)[0].lower())

    def declared_providers(self, full_name_or_owner: str | None = None) -> dict[str, Provider]:
        """The instance's providers, with the account's added over them."""
        account = self.account(full_name_or_owner)
        return {**self.providers, **(account.providers if account else {})}

    def review_limits(self, full_name: str | None = None) -> ReviewLimits:
        """The noise caps and walkthrough switch of a repository's reviews: each key from the last of
        the instance's `reviews`, its account's, and the first of the account's `reviews.repositories`
        whose glob matches the repository's name (case-insensitive, as `disabledRepositories`)."""
        account = self.account(full_name)
        layers = [self.reviews, account.reviews if account else None]
        if account is not None and full_name and "/" in full_name:
            name = full_name.split("/", 1)[1].lower()
            layers.append(next((layer for glob, layer in account.review_repositories
                                if glob_match(glob.pattern.lower(), name)), None))
        values: dict[str, Any] = {}
        sources = dict.fromkeys(REVIEW_KEYS, "default")
        origins = {}
        for layer in (layer for layer in layers if layer is not None):
            for key, value in layer.values.items():
                values[key], sources[key], origins[key] = value, layer.source, layer.origins[key]
        default = ReviewLimits()
        return ReviewLimits(values.get("maxInlineComments", default.max_inline_comments),
                            values.get("inlineSeverityFloor", default.inline_severity_floor),
                            values.get("walkthrough", default.walkthrough),
                            frozen_mapping(sources), frozen_mapping(origins))

    def budgets_for(self, full_name_or_owner: str | None) -> BudgetLimits:
        """The budgets of a repository's account: its own keys over the instance's."""
        account = self.account(full_name_or_owner)
        return self.budgets.over(account.budgets) if account is not None else self.budgets

    def rules_by_id(self, full_name_or_owner: str | None = None) -> dict[str, Rule]:
        """Every admin rule a repository of this owner is layered on, by id."""
        account = self.account(full_name_or_owner)
        rules = self.defaults.rules + (account.settings.rules if account else ())
        return {rule.id: rule for rule in rules}


def load_admin_config(text: str | bytes, path: str) -> tuple[AdminConfig | None, list[Diagnostic]]:
    """The admin file at `path`, or None and every error when it is invalid."""
    doc, data, problems = load_checked(text, ADMIN_CONFIG, "the admin configuration")
    if doc is None:
        return None, problems
    problems += _cross_checks(data, doc, path)
    if problems:
        return None, sorted_diagnostics(problems)
    return _build(data, doc, path), []


def _cross_checks(data: Mapping[str, Any], doc: YamlDocument, path: str) -> list[Diagnostic]:
    providers = _names(data.get("providers"))
    defaults = _mapping(data.get("defaults"))
    instance_ids = id_entries(defaults, "/defaults")
    out = duplicate_ids(instance_ids, doc)
    out += undeclared_providers(model_entries(defaults, "/defaults"), doc, providers, "the instance")
    judge = _mapping(data.get("eval")).get("judge")
    if isinstance(judge, str) and "/" in judge.strip("/"):
        out += undeclared_providers([(judge, "/eval/judge")], doc, providers, "the instance")
    instance_rules = {rule_id: _named_rule(rule_id, pointer, doc, path) for rule_id, pointer in reversed(instance_ids)}
    accounts = _mapping(data.get("accounts"))
    out += _logins_twice(accounts, doc)
    for login, account in accounts.items():
        if isinstance(account, dict):
            out += _account_checks(login, account, doc, instance_rules, providers)
    return out


def _account_checks(login: str, account: dict, doc: YamlDocument, instance_rules: dict[str, Rule],
                    instance_providers: set[str]) -> list[Diagnostic]:
    base = f"/accounts/{escape_token(login)}"
    ids = id_entries(account, base)
    out = duplicate_ids(ids, doc)
    out += taken_ids(ids, doc, instance_rules, "duplicate-id",
                     "an account rule must have an id of its own, since both apply to the account's repositories")
    declared = instance_providers | _names(account.get("providers"))
    out += undeclared_providers(model_entries(account, base), doc, declared, f"the instance or the account `{login}`")
    return out


def _mapping(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def _names(providers: Any) -> set[str]:
    return set(_mapping(providers))


def _named_rule(rule_id: str, id_pointer: str, doc: YamlDocument, path: str) -> Rule:
    """Enough of an instance rule to name it in a collision message (the file may be invalid)."""
    return Rule(rule_id, "instance", None, None, (), None, origin_at(doc, path, id_pointer.rsplit("/", 1)[0]))


def _logins_twice(accounts: dict, doc: YamlDocument) -> list[Diagnostic]:
    """Logins are case-insensitive: `Octo` after `octo` is the same key written twice."""
    first: dict[str, str] = {}
    out = []
    for login in accounts:
        seen = first.setdefault(login.lower(), login)
        if seen != login:
            pointer = f"/accounts/{escape_token(login)}"
            line, column = doc.locate(pointer, key=True)
            first_line = doc.locate(f"/accounts/{escape_token(seen)}", key=True)[0]
            out.append(Diagnostic(line, column, pointer, "duplicate-key",
                                  f"{human_pointer(pointer)}: account `{login}` is already configured as `{seen}` "
                                  f"at line {first_line}; logins are case-insensitive, keep one entry"))
    return out


def _providers(data: Any, source: str, verify: bool = False) -> dict[str, Provider]:
    """`verify`: the instance's `defaults.verify`, for a provider that does not set its own."""
    return {name: Provider(name, spec["type"], spec["baseUrl"], spec.get("apiKey"),
                           float(spec.get("timeout", DEFAULT_TIMEOUT)), source,  # type: ignore[arg-type]
                           frozen_mapping({model: int(limits["contextTokens"])
                                           for model, limits in (spec.get("models") or {}).items()
                                           if "contextTokens" in (limits or {})}),
                           _price(spec.get("price")),
                           frozen_mapping({model: _price(limits["price"])
                                           for model, limits in (spec.get("models") or {}).items()
                                           if "price" in (limits or {})}),
                           _tools(spec.get("tools")), bool(spec.get("verify", verify)))
            for name, spec in (data or {}).items()}


def _tools(data: Any) -> ToolSettings:
    """`tools: false`, `tools: true` or `tools: {enabled, maxRounds, maxBytes}` (validated)."""
    if isinstance(data, bool):
        return ToolSettings(enabled=data)
    if not isinstance(data, dict):
        return ToolSettings()
    default = ToolSettings()
    return ToolSettings(bool(data.get("enabled", default.enabled)), int(data.get("maxRounds", default.max_rounds)),
                        int(data.get("maxBytes", default.max_bytes)))


def _price(data: Any) -> Price | None:
    return Price(float(data["input"]), float(data["output"])) if data else None


def _build(data: Mapping[str, Any], doc: YamlDocument, path: str) -> AdminConfig:
    verify = bool(_mapping(data.get("defaults")).get("verify", False))
    accounts = {}
    for login, account in (data.get("accounts") or {}).items():
        base = f"/accounts/{escape_token(login)}"
        settings = layer_settings(account, doc, path, "account", base)
        disabled = tuple(Glob(pattern, "account", origin_at(doc, path, f"{base}/disabledRepositories/{i}"))
                         for i, pattern in enumerate(account.get("disabledRepositories", ())))
        reviews = account.get("reviews")
        repositories = tuple(
            (Glob(pattern, "account", origin_at(doc, path, f"{base}/reviews/repositories/{escape_token(pattern)}")),
             _review_layer(entry, doc, path, "account", f"{base}/reviews/repositories/{escape_token(pattern)}"))
            for pattern, entry in ((reviews or {}).get("repositories") or {}).items())
        accounts[login.lower()] = Account(login, settings, frozen_mapping(_providers(account.get("providers"), "account", verify)),
                                          disabled, _review_layer(reviews, doc, path, "account", f"{base}/reviews")
                                          if isinstance(reviews, Mapping) else None, repositories,
                                          read_budgets(account.get("budgets"), doc, path, f"{base}/budgets",
                                                       f"accounts.{login}.budgets"))
    return AdminConfig(path, doc, data, frozen_mapping(_providers(data.get("providers"), "instance", verify)),
                       layer_settings(data.get("defaults"), doc, path, "instance", "/defaults"), frozen_mapping(accounts),
                       _index_limits(data.get("index") or {}), judge=(data.get("eval") or {}).get("judge"),
                       secret_names=referenced_names(data),
                       reviews=_review_layer(data["reviews"], doc, path, "instance", "/reviews")
                       if isinstance(data.get("reviews"), Mapping) else None,
                       budgets=read_budgets(data.get("budgets"), doc, path, "/budgets", "budgets"))


REVIEW_KEYS = ("maxInlineComments", "inlineSeverityFloor", "walkthrough")


def _review_layer(data: Mapping[str, Any], doc: YamlDocument, path: str, source: Layer, base: str) -> ReviewLayer:
    """The keys of a `reviews` mapping (already valid) with where each is written."""
    keys = [key for key in REVIEW_KEYS if key in data]
    return ReviewLayer(source, frozen_mapping({key: data[key] for key in keys}),
                       frozen_mapping({key: origin_at(doc, path, f"{base}/{key}") for key in keys}))


def _index_limits(data: Mapping[str, Any]) -> IndexLimits:
    default = IndexLimits()
    return IndexLimits(data.get("maxFileBytes", default.max_file_bytes),
                       data.get("maxRepositoryBytes", default.max_repo_bytes),
                       data.get("maxFiles", default.max_files))

