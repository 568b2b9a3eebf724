"""The admin file's `reviews`: noise caps and the walkthrough, layered instance → account → repositories."""

from bot.config.admin import AdminConfig, load_admin_config
from bot.config.admin_schema import SEVERITIES
from bot.config.model import ReviewLimits
from bot.reviews.findings import SEVERITIES as FINDING_SEVERITIES
from bot.reviews.ledger import DEFAULT_MAX_INLINE
from tests.support.config_examples import ROOT

TEXT = (ROOT / "valid" / "admin-reviews.yaml").read_text()


def limits(full_name, text=TEXT):
    admin, found = load_admin_config(text, "/etc/reviewer/admin.yaml")
    assert found == []
    return admin.review_limits(full_name)


def test_without_the_section_the_defaults_hold():
    assert AdminConfig.empty().review_limits("octo/app") == ReviewLimits(
        10, "nit", True, {"maxInlineComments": "default", "inlineSeverityFloor": "default", "walkthrough": "default"})
    assert limits("octo/app", "providers: {}\n").max_inline_comments == 10 == DEFAULT_MAX_INLINE  # the ledger's too


def test_the_instance_then_the_account_then_the_first_matching_repository_entry():
    other = limits("someone/app")
    assert (other.max_inline_comments, other.inline_severity_floor, other.walkthrough) == (15, "nit", True)
    assert other.sources["maxInlineComments"] == "instance" and other.origins["maxInlineComments"].line == 4
    plain = limits("octo/tool")  # only the catch-all `*` entry matches
    assert (plain.max_inline_comments, plain.inline_severity_floor, plain.walkthrough) == (10, "minor", True)
    assert plain.sources == {"maxInlineComments": "account", "inlineSeverityFloor": "account", "walkthrough": "instance"}
    assert plain.origins["inlineSeverityFloor"].pointer == "/accounts/octo/reviews/repositories/*/inlineSeverityFloor"
    legacy = limits("OCTO/Legacy-Billing")  # logins and names case-insensitive; the first match wins over `*`
    assert (legacy.max_inline_comments, legacy.inline_severity_floor, legacy.walkthrough) == (10, "important", False)
    app = limits("octo/app")
    assert (app.max_inline_comments, app.inline_severity_floor) == (0, "nit")
    assert app.origins["maxInlineComments"].line == 13


def test_an_owner_alone_gets_the_account_without_repository_entries():
    owner = limits("octo")
    assert (owner.max_inline_comments, owner.inline_severity_floor) == (10, "nit")
    assert limits(None).max_inline_comments == 15


def test_the_admin_files_severities_are_the_findings():
    assert SEVERITIES == FINDING_SEVERITIES
