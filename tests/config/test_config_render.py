"""`render_effective`: the effective configuration as the admin API shows it, in the file's own names."""

from __future__ import annotations

import json
import textwrap

from bot.config.admin import load_admin_config
from bot.config.layering import effective_config
from bot.config.model import EffectiveConfig
from bot.config.render import api_key_kind, render_effective
from bot.config.repo import load_repo_config

ADMIN = textwrap.dedent("""\
    providers:
      openai: {type: openai, baseUrl: 'https://api.openai.com/v1', apiKey: 'secret://openai/api-key'}
    defaults:
      feedback: minimal
      filterExpr: '!pr.draft'
      ignore: ['**/*.lock']
      rules:
        - id: no-secrets
          rule: Never commit credentials.
    accounts:
      octo:
        providers:
          local: {type: openai, baseUrl: 'http://127.0.0.1:8000/v1', apiKey: 'env://LOCAL_KEY', timeout: 300}
        context:
          - path: docs/org.md
            description: How the organisation works.
    """)

REPO = textwrap.dedent("""\
    models:
      review: openai/gpt-4o
      fallback: local/llama
    comments:
      inline: false
      summaryTemplate: .github/summary.md.j2
    approve: true
    filterExpr: 'pr.headRef != "wip"'
    ignore: ['docs/**']
    rules:
      - id: no-print
        rule: Use logging, not print().
        paths: ['src/**/*.py']
        whenExpr: 'pr.baseRef == "main"'
      - id: migrations
        file: docs/migrations.md
    agentFiles: false
    """)


def effective(repo: str | None = REPO, full_name: str = "octo/app") -> EffectiveConfig:
    admin, problems = load_admin_config(ADMIN, "/etc/reviewer/admin.yaml")
    assert problems == []
    config = None
    if repo is not None:
        config, problems = load_repo_config(repo, ".reviewer.yaml", admin, full_name)
        assert problems == []
    return effective_config(admin, config, full_name)


def test_every_field_in_the_files_own_names():
    rendered = render_effective(effective())
    assert list(rendered) == ["enabled", "disabledBy", "models", "feedback", "comments", "requireSuggestedFix",
                              "approve", "filterExpr", "ignore", "rules", "context", "agentFiles", "providers"]
    assert rendered["enabled"] is True and rendered["disabledBy"] is None
    assert rendered["models"] == {"review": "openai/gpt-4o", "fallback": "local/llama"}
    assert rendered["feedback"] == "minimal"
    assert rendered["comments"] == {"inline": False, "summaryTemplate": ".github/summary.md.j2", "inlineTemplate": None}
    assert rendered["requireSuggestedFix"] is False and rendered["approve"] is True and rendered["agentFiles"] is False
    json.dumps(rendered)  # JSON-ready as it is


def test_list_entries_name_their_layer_and_place_in_layering_order():
    rendered = render_effective(effective())
    assert [(e["expr"], e["source"]) for e in rendered["filterExpr"]] == [
        ("!pr.draft", "instance"), ('pr.headRef != "wip"', "repository")]
    assert rendered["filterExpr"][1]["origin"] == {"file": ".reviewer.yaml", "line": 8, "column": 13}
    assert [(g["pattern"], g["source"]) for g in rendered["ignore"]] == [("**/*.lock", "instance"),
                                                                          ("docs/**", "repository")]
    assert rendered["ignore"][0]["origin"]["file"] == "/etc/reviewer/admin.yaml"
    assert rendered["rules"] == [
        {"id": "no-secrets", "source": "instance", "rule": "Never commit credentials.", "file": None, "paths": [],
         "whenExpr": None, "origin": {"file": "/etc/reviewer/admin.yaml", "line": 8, "column": 7}},
        {"id": "no-print", "source": "repository", "rule": "Use logging, not print().", "file": None,
         "paths": ["src/**/*.py"], "whenExpr": 'pr.baseRef == "main"',
         "origin": {"file": ".reviewer.yaml", "line": 11, "column": 5}},
        {"id": "migrations", "source": "repository", "rule": None, "file": "docs/migrations.md", "paths": [],
         "whenExpr": None, "origin": {"file": ".reviewer.yaml", "line": 15, "column": 5}},
    ]
    assert [(c["path"], c["source"], c["paths"]) for c in rendered["context"]] == [("docs/org.md", "account", [])]


def test_providers_show_the_kind_of_key_never_the_reference():
    rendered = render_effective(effective())
    assert rendered["providers"] == {
        "local": {"type": "openai", "baseUrl": "http://127.0.0.1:8000/v1", "timeout": 300.0, "apiKey": "env",
                  "source": "account"},
        "openai": {"type": "openai", "baseUrl": "https://api.openai.com/v1", "timeout": 120.0, "apiKey": "secret",
                   "source": "instance"},
    }
    text = json.dumps(rendered)
    assert "openai/api-key" not in text and "LOCAL_KEY" not in text


def test_an_account_outside_the_file_gets_the_instance_alone():
    rendered = render_effective(effective(repo=None, full_name="someone/else"))
    assert list(rendered["providers"]) == ["openai"] and rendered["context"] == []
    assert rendered["models"] == {"review": None, "fallback": None} and rendered["approve"] is False


def test_a_disabled_repository_says_who_disabled_it():
    rendered = render_effective(effective(repo="enabled: false\n"))
    assert rendered["enabled"] is False
    assert rendered["disabledBy"] == "the repository's configuration sets `enabled: false` (.reviewer.yaml:1)"


def test_api_key_kinds():
    assert api_key_kind("secret://openai/api-key") == "secret"
    assert api_key_kind("env://OPENAI_API_KEY") == "env"
    assert api_key_kind("sk-live-1234") == "<redacted>"  # never valid in an admin file; never shown either
    assert api_key_kind(None) is None
