"""`load_admin_config` and `AdminConfig`: providers, accounts, and the admin file's own errors."""

from bot.config.admin import DEFAULT_TIMEOUT, AdminConfig, load_admin_config
from tests.support.config_examples import ROOT

TEXT = (ROOT / "valid" / "admin-instance-and-account.yaml").read_text()


def load(text):
    admin, found = load_admin_config(text, "/etc/reviewer/admin.yaml")
    assert (admin is None) == bool(found)
    return admin, found


def test_providers_are_typed_and_account_ones_shadow_the_instance_ones():
    admin, _ = load(TEXT)
    openai = admin.providers["openai"]
    assert (openai.base_url, openai.api_key, openai.timeout, openai.source) == (
        "https://api.openai.com/v1", "env://OPENAI_API_KEY", DEFAULT_TIMEOUT, "instance")
    octo = admin.declared_providers("octo/app")
    assert sorted(octo) == ["local", "openai"] and octo["local"].timeout == 300.0
    other = admin.declared_providers("other-org/x")
    assert other["openai"].base_url == "https://proxy.other.example/v1" and other["openai"].source == "account"
    assert sorted(admin.declared_providers(None)) == ["openai"]


def test_accounts_are_found_by_owner_case_insensitively():
    admin, _ = load(TEXT)
    assert admin.account("OCTO/app").login == "octo"
    assert admin.account("octo").login == "octo"
    assert admin.account("nobody/app") is None and admin.account(None) is None
    assert [g.pattern for g in admin.account("octo").disabled_repositories] == ["legacy-*", "{sandbox,scratch}"]


def test_rules_by_id_holds_the_instance_and_the_owners_account():
    admin, _ = load(TEXT)
    assert sorted(admin.rules_by_id("octo/app")) == ["no-secrets", "octo-style"]
    assert sorted(admin.rules_by_id("someone/app")) == ["no-secrets"]
    rule = admin.rules_by_id("octo/app")["octo-style"]
    assert (rule.source, rule.file, rule.origin.file, rule.origin.line) == (
        "account", "STYLE.md", "/etc/reviewer/admin.yaml", 20)


def test_the_empty_admin_config_declares_nothing():
    empty = AdminConfig.empty()
    assert empty.declared_providers("octo/app") == {} and empty.rules_by_id("octo/app") == {}
    assert empty.account("octo/app") is None and empty.defaults.rules == ()


def test_an_empty_admin_file_is_valid():
    admin, found = load("# nothing yet\n")
    assert found == [] and admin.providers == {} and admin.accounts == {}


def test_a_literal_api_key_is_refused_without_being_repeated():
    key = "sk-live-0123456789abcdef"
    _, found = load(f"providers:\n  p:\n    type: openai\n    baseUrl: https://x.example\n    apiKey: {key}\n")
    [diag] = found
    assert diag.code == "secret-reference" and key not in diag.message and "env://VAR" in diag.message


def test_a_secret_reference_the_store_cannot_resolve_is_refused():
    _, found = load("providers:\n  p:\n    type: openai\n    baseUrl: https://x.example\n"
                    "    apiKey: secret://My_Keys/openai\n")
    [diag] = found
    assert (diag.code, diag.pointer, diag.line) == ("secret-reference", "/providers/p/apiKey", 5)
    assert "lowercase RFC 1123 name" in diag.message


def test_an_account_rule_reusing_an_instance_id_names_the_instance_rule():
    text = ("defaults:\n  rules:\n    - id: a\n      rule: x\naccounts:\n  octo:\n    rules:\n"
            "      - id: a\n        rule: y\n")
    [diag] = load(text)[1]
    assert (diag.code, diag.pointer, diag.line) == ("duplicate-id", "/accounts/octo/rules/0/id", 8)
    assert "the instance's rule `defaults.rules[0]` at /etc/reviewer/admin.yaml:3" in diag.message


def test_instance_models_need_instance_providers():
    text = ("providers:\n  p: {type: openai, baseUrl: 'https://x.example'}\n"
            "accounts:\n  octo:\n    providers:\n      q: {type: openai, baseUrl: 'https://y.example'}\n"
            "defaults:\n  models: {review: q/m}\n")
    [diag] = load(text)[1]
    assert (diag.code, diag.pointer) == ("undeclared-provider", "/defaults/models/review")
    assert "not declared by the instance (declared: p)" in diag.message


def test_index_limits_are_read_and_bad_ones_reported_at_their_place():
    admin, problems = load_admin_config("index:\n  maxFiles: 10\n  maxFileBytes: 2048\n", "admin.yaml")
    assert problems == [] and admin is not None
    assert (admin.index_limits.max_files, admin.index_limits.max_file_bytes) == (10, 2048)
    assert admin.index_limits.max_repo_bytes == AdminConfig.empty().index_limits.max_repo_bytes
    admin, problems = load_admin_config("index:\n  maxFiles: 0\n  maxBytes: 5\n", "admin.yaml")
    assert admin is None
    assert [(p.line, p.column, p.pointer, p.code) for p in problems] == [
        (2, 13, "/index/maxFiles", "minimum"), (3, 3, "/index/maxBytes", "unknown-property")]


PRICED = """\
providers:
  openai:
    type: openai
    baseUrl: https://api.openai.com/v1
    price: {input: 2.5, output: 10}
    models:
      gpt-4o-mini: {price: {input: 0.15, output: 0.6}}
  local: {type: openai, baseUrl: 'http://127.0.0.1:8080/v1'}
eval:
  judge: openai/gpt-4o-mini
"""


def test_prices_per_million_tokens_a_models_own_first_and_the_eval_judge():
    admin, problems = load_admin_config(PRICED, "admin.yaml")
    assert problems == [] and admin is not None
    openai, local = admin.providers["openai"], admin.providers["local"]
    assert (openai.price_of("gpt-4o").input, openai.price_of("gpt-4o").output) == (2.5, 10.0)
    assert (openai.price_of("gpt-4o-mini").input, openai.price_of("gpt-4o-mini").output) == (0.15, 0.6)
    assert openai.price_of("gpt-4o").cost(1_000_000, 500_000) == 7.5
    assert local.price_of("anything") is None
    assert admin.judge == "openai/gpt-4o-mini" and AdminConfig.empty().judge is None


def test_bad_prices_and_judges_are_reported_at_their_place():
    text = ("providers:\n  p:\n    type: openai\n    baseUrl: 'https://x.example'\n"
            "    price: {input: -1}\n"
            "    models:\n      m: {price: {input: 1, output: 'cheap'}}\n"
            "eval:\n  judge: q/m\n  jury: 3\n")
    admin, problems = load_admin_config(text, "admin.yaml")
    assert admin is None
    assert [(p.line, p.column, p.pointer, p.code) for p in problems] == [
        (5, 12, "/providers/p/price", "required"), (5, 20, "/providers/p/price/input", "minimum"),
        (7, 37, "/providers/p/models/m/price/output", "type"),
        (9, 10, "/eval/judge", "undeclared-provider"), (10, 3, "/eval/jury", "unknown-property")]
    assert "provider `q` of model `q/m` is not declared by the instance (declared: p)" in problems[3].message
    _, [bad] = load_admin_config("eval: {judge: gpt-4o}\n", "admin.yaml")
    assert (bad.pointer, bad.code) == ("/eval/judge", "pattern")


TOOLED = """\
providers:
  openai: {type: openai, baseUrl: 'https://api.openai.com/v1', tools: {maxRounds: 2, maxBytes: 8000}}
  local: {type: openai, baseUrl: 'http://127.0.0.1:8080/v1', tools: false}
  plain: {type: openai, baseUrl: 'http://127.0.0.1:8081/v1'}
accounts:
  octo:
    providers:
      mine: {type: openai, baseUrl: 'http://127.0.0.1:8082/v1', tools: {enabled: false}}
"""


def test_tools_are_on_by_default_and_switched_off_or_bounded_per_provider():
    admin, problems = load_admin_config(TOOLED, "admin.yaml")
    assert problems == [] and admin is not None
    openai, local, plain = (admin.providers[n].tools for n in ("openai", "local", "plain"))
    assert (openai.enabled, openai.max_rounds, openai.max_bytes) == (True, 2, 8000)
    assert not local.enabled
    assert (plain.enabled, plain.max_rounds, plain.max_bytes) == (True, 4, 24_000)
    assert not admin.declared_providers("octo/app")["mine"].tools.enabled


def test_bad_tool_settings_are_reported_at_their_place():
    text = ("providers:\n  p:\n    type: openai\n    baseUrl: 'https://x.example'\n"
            "    tools: {maxRounds: 0, maxBytes: 10, rounds: 3}\n"
            "  q: {type: openai, baseUrl: 'https://y.example', tools: 'yes'}\n"
            "  r: {type: openai, baseUrl: 'https://z.example', tools: {maxRounds: 11, enabled: 1}}\n")
    admin, problems = load_admin_config(text, "admin.yaml")
    assert admin is None
    assert [(p.line, p.column, p.pointer, p.code) for p in problems] == [
        (5, 24, "/providers/p/tools/maxRounds", "minimum"), (5, 37, "/providers/p/tools/maxBytes", "minimum"),
        (5, 41, "/providers/p/tools/rounds", "unknown-property"),
        (6, 58, "/providers/q/tools", "type"),
        (7, 70, "/providers/r/tools/maxRounds", "maximum"), (7, 83, "/providers/r/tools/enabled", "type")]
    assert "must be a boolean or a mapping" in problems[3].message


VERIFYING = """\
providers:
  openai: {type: openai, baseUrl: 'https://api.openai.com/v1'}
  local: {type: openai, baseUrl: 'http://127.0.0.1:8080/v1', verify: false}
defaults:
  verify: true
accounts:
  octo:
    providers:
      mine: {type: openai, baseUrl: 'http://127.0.0.1:8082/v1'}
      theirs: {type: openai, baseUrl: 'http://127.0.0.1:8083/v1', verify: false}
"""


def test_verify_is_set_per_provider_over_the_defaults():
    admin, problems = load_admin_config(VERIFYING, "admin.yaml")
    assert problems == [] and admin is not None
    assert admin.providers["openai"].verify and not admin.providers["local"].verify
    octo = admin.declared_providers("octo/app")
    assert octo["mine"].verify and not octo["theirs"].verify
    plain, _ = load_admin_config("providers:\n  p: {type: openai, baseUrl: 'https://x.example'}\n", "admin.yaml")
    assert plain is not None and not plain.providers["p"].verify  # off unless asked for


def test_a_bad_verify_is_reported_at_its_place():
    text = ("providers:\n  p: {type: openai, baseUrl: 'https://x.example', verify: 'yes'}\n"
            "defaults:\n  verify: 1\n  verfy: true\n")
    admin, problems = load_admin_config(text, "admin.yaml")
    assert admin is None
    assert [(p.line, p.column, p.pointer, p.code) for p in problems] == [
        (2, 59, "/providers/p/verify", "type"), (4, 11, "/defaults/verify", "type"),
        (5, 3, "/defaults/verfy", "unknown-property")]
    assert "did you mean `verify`" in problems[2].message
