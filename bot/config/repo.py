"""`.reviewer.yaml`: loaded with positions, validated to the letter, typed for layering.

Without an admin configuration the file is checked on its own (a model reference for its pattern
alone); with one, a model's provider must be declared and a rule id must not be an admin rule's.
`full_name` (`owner/name`) selects the account whose providers and rule ids also count.
"""

from __future__ import annotations

from dataclasses import dataclass

from bot.config.admin import AdminConfig
from bot.config.crosschecks import duplicate_ids, id_entries, model_entries, taken_ids, undeclared_providers
from bot.config.document import load_checked, sorted_diagnostics
from bot.config.layer import LayerSettings, layer_settings
from bot.config.repo_schema import REPO_CONFIG
from bot.documents.diagnostics import Diagnostic
from bot.documents.yamldoc import YamlDocument


@dataclass(frozen=True)
class RepoConfig:
    path: str  # the file's path in the repository (`.reviewer.yaml`)
    document: YamlDocument
    settings: LayerSettings


def load_repo_config(text: str | bytes, path: str, admin: AdminConfig | None = None,
                     full_name: str | None = None) -> tuple[RepoConfig | None, list[Diagnostic]]:
    """The repository file at `path`, or None and every error when it is invalid."""
    doc, data, problems = load_checked(text, REPO_CONFIG, "the repository configuration")
    if doc is None:
        return None, problems
    ids = id_entries(data)
    problems += duplicate_ids(ids, doc)
    if admin is not None:
        problems += _against_admin(data, doc, ids, admin, full_name)
    if problems:
        return None, sorted_diagnostics(problems)
    return RepoConfig(path, doc, layer_settings(data, doc, path, "repository")), []


def _against_admin(data: dict, doc: YamlDocument, ids: list[tuple[str, str]], admin: AdminConfig,
                   full_name: str | None) -> list[Diagnostic]:
    account = admin.account(full_name)
    out = taken_ids(ids, doc, admin.rules_by_id(full_name), "admin-id-collision",
                    "a repository rule must not reuse an administrator's rule id; choose another")
    if account is not None:
        scope = f"the instance or the account `{account.login}`"
    else:
        scope = "the instance"
    hint = ""
    if account is None and not full_name and admin.accounts:
        hint = "; an account's providers count when the repository's full name (owner/name) is given"
    out += undeclared_providers(model_entries(data), doc, admin.declared_providers(full_name), scope, hint)
    return out
