"""Budgets: read from the admin file (errors at their place), counted in the store on both backends
(a claim is atomic: never past the limit however many ask at once), and enforced by the pipeline
end to end: a review past a budget is not sent to a model and its check run is `neutral`, naming
the budget, its reset and the admin file key that sets it, with the plan still shown."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from datetime import UTC, datetime

from bot.config.admin import load_admin_config
from bot.engine.usage import Usage
from bot.pipeline.budgets import REVIEW_ESTIMATE, Exceeded, Reservation, admit, day_reset, month_reset, periods, settle
from bot.store.budgets import RESERVATION_TTL, budget_store
from tests.app.test_app_analyzers import AWS_KEY
from tests.support.app_support import running_app
from tests.support.chat_double import Reply, findings
from tests.support.followup_support import say
from tests.support.review_support import (
    API_KEY,
    BUG,
    KEY_VAR,
    PRIMARY,
    admin_yaml,
    config_pull,
    reviewed,
    run_text,
    shown,
)

BUDGETED = """\
budgets:
  reviewsPerDay: 100
  tokensPerMonth: 5000000
accounts:
  octo:
    budgets:
      reviewsPerDay: 2
  other: {}
"""


def test_budgets_are_read_with_the_key_that_sets_each_and_an_account_overrides_key_by_key():
    admin, problems = load_admin_config(BUDGETED, "admin.yaml")
    assert problems == [] and admin is not None
    octo = admin.budgets_for("Octo/app")
    assert octo.reviews_per_day is not None and octo.tokens_per_month is not None
    assert (octo.reviews_per_day.value, octo.reviews_per_day.key_path, octo.reviews_per_day.origin.line) == (
        2, "accounts.octo.budgets.reviewsPerDay", 7)
    assert (octo.tokens_per_month.value, octo.tokens_per_month.key_path) == (5_000_000, "budgets.tokensPerMonth")
    other = admin.budgets_for("other/x")
    assert other.reviews_per_day is not None and other.reviews_per_day.key_path == "budgets.reviewsPerDay"
    assert admin.budgets_for("nobody") == admin.budgets
    empty, _ = load_admin_config("{}\n", "admin.yaml")
    assert empty is not None and not empty.budgets_for("octo/app").any


def test_bad_budgets_are_reported_at_their_place():
    text = "budgets:\n  reviewsPerDay: -1\n  reviewsPerWeek: 3\naccounts:\n  octo:\n    budgets: {tokensPerMonth: lots}\n"
    admin, problems = load_admin_config(text, "admin.yaml")
    assert admin is None
    assert [(p.line, p.pointer, p.code) for p in problems] == [
        (2, "/budgets/reviewsPerDay", "minimum"), (3, "/budgets/reviewsPerWeek", "unknown-property"),
        (6, "/accounts/octo/budgets/tokensPerMonth", "type")]


def test_a_reviews_per_day_past_what_the_store_can_count_is_refused_at_its_place():
    """A careless `reviewsPerDay: 10000000000000000000` (past SQLite's 64-bit integers) would make
    every claim of a review fail on SQLite, so every review of every account with it: it is an
    error of the admin file instead, naming the field and the bound."""
    text = "budgets:\n  reviewsPerDay: 10000000000000000000\n"
    admin, problems = load_admin_config(text, "admin.yaml")
    assert admin is None
    assert [(p.line, p.pointer, p.code) for p in problems] == [(2, "/budgets/reviewsPerDay", "maximum")]
    assert "must be at most" in problems[0].message


async def test_the_largest_reviews_per_day_is_counted_on_both_backends(database_url):
    admin, problems = load_admin_config("budgets: {reviewsPerDay: 1000000000}\n", "admin.yaml")
    assert problems == [] and admin is not None
    now = datetime(2026, 11, 27, 12, tzinfo=UTC).timestamp()
    assert await admit(budget_store(database_url), admin.budgets_for("octo/app"), "octo", now) is None


def test_periods_and_resets_are_utc_days_and_calendar_months():
    moment = datetime(2026, 12, 31, 23, 59, tzinfo=UTC).timestamp()
    assert periods(moment) == ("2026-12-31", "2026-12")
    assert day_reset(moment) == datetime(2027, 1, 1, tzinfo=UTC)
    assert month_reset(moment) == datetime(2027, 1, 1, tzinfo=UTC)
    assert month_reset(datetime(2026, 2, 10, tzinfo=UTC).timestamp()) == datetime(2026, 3, 1, tzinfo=UTC)


async def test_claims_never_pass_the_limit_however_many_ask_at_once(database_url):
    budgets = budget_store(database_url)
    claims = await asyncio.gather(*(budgets.claim_review("Octo", "2026-11-27", 3) for _ in range(8)))
    assert sorted(c for c in claims if c is not None) == [1, 2, 3] and claims.count(None) == 5
    assert await budgets.claim_review("octo", "2026-11-28", 3) == 1  # a new day starts from nothing
    assert await budgets.claim_review("octo", "2026-11-27", None) == 4  # no limit: counted all the same
    await budgets.add_tokens("OCTO", "2026-11", 1200)
    await budgets.add_tokens("octo", "2026-11", 300)
    spent = await budgets.spent("octo", "2026-11-27", "2026-11")
    assert (spent.reviews_today, spent.tokens_this_month) == (4, 1500)


async def test_admit_refuses_past_either_budget_counting_nothing_then(database_url):
    admin, _ = load_admin_config("budgets: {reviewsPerDay: 1, tokensPerMonth: 1000}\n", "admin.yaml")
    assert admin is not None
    limits, budgets = admin.budgets_for("octo/app"), budget_store(database_url)
    now = datetime(2026, 11, 27, 12, tzinfo=UTC).timestamp()
    held = await admit(budgets, limits, "octo", now)
    assert isinstance(held, Reservation) and held.tokens == REVIEW_ESTIMATE
    await settle(budgets, held, "octo", Usage())  # the review asked nothing in the end
    over = await admit(budgets, limits, "octo", now)
    assert isinstance(over, Exceeded) and (over.budget, over.used, over.reason) == (
        "reviewsPerDay", 1, "budget-reviews-per-day")
    assert over.resets_at == datetime(2026, 11, 28, tzinfo=UTC)
    await budgets.add_tokens("octo", "2026-11", 1000)
    tomorrow = datetime(2026, 11, 28, 1, tzinfo=UTC).timestamp()
    over = await admit(budgets, limits, "octo", tomorrow)
    assert isinstance(over, Exceeded) and (over.budget, over.used, over.limit.key_path) == (
        "tokensPerMonth", 1000, "budgets.tokensPerMonth")
    assert over.resets_at == datetime(2026, 12, 1, tzinfo=UTC)
    assert (await budgets.spent("octo", "2026-11-28", "2026-11")).reviews_today == 0  # the refusal counted nothing


async def test_reviews_at_once_cannot_each_spend_the_months_last_tokens(database_url):
    """Tokens are held before a model is asked and settled after: of ten reviews asking at once
    for a month of 1,000 tokens, one is sent; once it spent 900, one more may pass the limit (the
    month's last review), and then none."""
    admin, _ = load_admin_config("budgets: {tokensPerMonth: 1000}\n", "admin.yaml")
    assert admin is not None
    limits, budgets = admin.budgets_for("octo/app"), budget_store(database_url)
    now = datetime(2026, 11, 27, 12, tzinfo=UTC).timestamp()
    spent = Usage()
    spent.answered("local/m", 850, 50)

    async def at_once() -> int:
        """Ten reviews admitted while none has answered yet, then each one sent settled."""
        held = await asyncio.gather(*(admit(budgets, limits, "octo", now) for _ in range(10)))
        sent = [h for h in held if isinstance(h, Reservation)]
        assert len(sent) + sum(isinstance(h, Exceeded) for h in held) == 10
        for reservation in sent:
            await settle(budgets, reservation, "octo", spent)
        return len(sent)
    assert await at_once() == 1
    assert (await budgets.spent("octo", "2026-11-27", "2026-11")).tokens_this_month == 900
    assert await at_once() == 1
    assert (await budgets.spent("octo", "2026-11-27", "2026-11")).tokens_this_month == 1800
    assert await at_once() == 0


async def test_a_reservation_whose_process_died_counts_no_more_after_its_time(database_url):
    clock = [datetime(2026, 11, 27, 12, tzinfo=UTC).timestamp()]
    budgets = budget_store(database_url, clock=lambda: clock[0])
    assert await budgets.reserve("octo", "2026-11", "lost", 900, 1000) is None
    assert await budgets.reserve("octo", "2026-11", "next", 900, 1000) == 0  # the lost one still counts
    clock[0] += RESERVATION_TTL + 1
    assert await budgets.reserve("octo", "2026-11", "next", 900, 1000) is None


def assert_budget_run(run, budget: str, noun: str, key_path: str) -> None:
    assert run.conclusion == "neutral"
    assert run.output["title"] == f"Not reviewed: the account's budget of 1 {noun} is spent"
    summary = run.output["summary"]
    assert f"(`{budget}`)" in summary and f"in the admin file at `{key_path}`" in summary
    assert "**Resets:** " in summary and " UTC" in summary
    assert "### Files to review (1)" in summary  # the plan still ran, and is shown


async def test_a_review_past_the_days_budget_is_neutral_and_asks_no_model(
        tmp_path, github, github_app, app_private_key, chat, monkeypatch):
    monkeypatch.setenv(KEY_VAR, API_KEY)
    chat.answer(PRIMARY, findings(BUG, usage=(700, 50)))
    admin = admin_yaml(chat) + "accounts:\n  octo-org:\n    budgets: {reviewsPerDay: 1}\n"
    async with running_app(tmp_path, github, github_app, app_private_key, admin_yaml=admin) as world:
        first = await reviewed(world, config_pull(world, "feedback: detailed\n"))
        second = await reviewed(world, config_pull(world, "feedback: detailed\n"))
    assert first.conclusion == "failure" and len(chat.requests) == 1  # the second was never sent
    assert_budget_run(second, "reviewsPerDay", "reviews a day", "accounts.octo-org.budgets.reviewsPerDay")


async def test_a_review_after_the_months_tokens_are_spent_is_neutral(
        tmp_path, github, github_app, app_private_key, chat, monkeypatch):
    monkeypatch.setenv(KEY_VAR, API_KEY)
    chat.answer(PRIMARY, findings(BUG, usage=(700, 50)))
    admin = admin_yaml(chat) + "budgets: {tokensPerMonth: 1}\n"
    async with running_app(tmp_path, github, github_app, app_private_key, admin_yaml=admin) as world:
        first = await reviewed(world, config_pull(world, "feedback: detailed\n"))  # passes the budget: completes
        second = await reviewed(world, config_pull(world, "feedback: detailed\n"))
    assert first.conclusion == "failure" and len(chat.requests) == 1
    assert_budget_run(second, "tokensPerMonth", "tokens a month", "budgets.tokensPerMonth")
    assert "has used 750 of its 1 tokens a month" in second.output["summary"]


async def test_reviews_running_at_once_hold_the_months_tokens_before_they_ask(
        tmp_path, github, github_app, app_private_key, chat, monkeypatch):
    """Four pull requests reviewed at once, the model taking two seconds and 900 tokens a review,
    against 1,000 tokens a month: each used to see nothing spent and ask (3,600 tokens). Held
    before asking, the tokens let one review ask, and at most one more once it spent its 900."""
    monkeypatch.setenv(KEY_VAR, API_KEY)
    chat.answer(PRIMARY, Reply(content=findings(BUG).content, usage=(850, 50), delay=2.0))
    admin = admin_yaml(chat) + "budgets: {tokensPerMonth: 1000}\n"
    async with running_app(tmp_path, github, github_app, app_private_key, admin_yaml=admin) as world:
        pulls = [config_pull(world, "feedback: detailed\n") for _ in range(4)]
        runs = await asyncio.gather(*(reviewed(world, pr) for pr in pulls))
    assert 1 <= len(chat.requests) <= 2, len(chat.requests)
    assert sum(run.conclusion == "neutral" for run in runs) == 4 - len(chat.requests)


async def test_a_question_after_the_months_tokens_are_spent_is_answered_without_a_model(
        tmp_path, github, github_app, app_private_key, chat, monkeypatch):
    monkeypatch.setenv(KEY_VAR, API_KEY)
    chat.answer(PRIMARY, findings(BUG, usage=(700, 50)))
    admin = admin_yaml(chat) + "accounts:\n  octo-org:\n    budgets: {tokensPerMonth: 500}\n"
    async with running_app(tmp_path, github, github_app, app_private_key, admin_yaml=admin) as world:
        pr = config_pull(world, "feedback: detailed\n")
        await reviewed(world, pr)  # 750 tokens: the month's 500 are spent
        world.repo.permissions["alice"] = "write"  # one the app answers
        question = pr.comment("@reviewer why is the division risky?", "alice")
        assert await say(world, "issue_comment", pr, comment=question) == "done"
    answers = [shown(c.body) for c in pr.comments if c.user == world.app.bot and "reviewer:summary" not in c.body]
    assert len(chat.requests) == 1  # the review's; the question was not sent
    assert answers == ["I cannot answer right now: this account's budget of 500 tokens a month is spent. It resets "
                       f"at {month_reset(time.time()).strftime('%Y-%m-%d %H:%M UTC')}; the administrator sets it in "
                       "the admin file at `accounts.octo-org.budgets.tokensPerMonth`."]


async def test_a_review_past_its_budget_still_posts_the_analyzers_findings_and_says_why_no_model_ran(
        tmp_path, github, github_app, app_private_key, chat, monkeypatch, caplog):
    """`reviewsPerDay: 0` (the schema's least value): no review of the account goes to a model, yet
    a cloud key the pull request adds gets its blocking finding (the analyzers spend no budget);
    the check run names the budget as the reason no model ran (not a missing provider), keeps the
    blocking finding's failure, and the key is shown nowhere."""
    caplog.set_level(logging.DEBUG)
    monkeypatch.setenv(KEY_VAR, API_KEY)
    chat.answer(PRIMARY, findings(BUG, usage=(700, 50)))
    admin = admin_yaml(chat) + "accounts:\n  octo-org:\n    budgets: {reviewsPerDay: 0}\n"
    settings = f"import os\n\nAWS_ACCESS_KEY_ID = \"{AWS_KEY}\"\nREGION = os.environ['REGION']\n"
    async with running_app(tmp_path, github, github_app, app_private_key, admin_yaml=admin) as world:
        pr = config_pull(world, "feedback: detailed\n", head={"config/settings.py": settings})
        run = await reviewed(world, pr)
    assert chat.requests == []  # past the budget: no model was asked
    analyzer_reviews = [r for r in pr.reviews if r.user == world.app.bot and r.body.startswith(("<!--", "Analyzers"))]
    comments = [c for r in analyzer_reviews for c in r.comments]
    assert [(c.path, c.line) for c in comments] == [("config/settings.py", 3)]
    assert comments[0].body.startswith("**blocking** · security · `detect-secrets` `aws-access-key`")
    # the analyzers' blocking finding decides the run, which says the budget is why no model ran
    assert run.conclusion == "failure" and "1 blocking" in run.output["title"]
    text = run_text(run)
    assert "budget of 0 reviews a day is spent" in run.output["title"]
    assert "accounts.octo-org.budgets.reviewsPerDay" in text and "`reviewsPerDay`" in text
    assert "no model provider or no model is configured" not in text
    seen = [run_text(run), json.dumps(run.annotations), *(r.body for r in pr.reviews),
            *(c.body for r in pr.reviews for c in r.comments), *(c.body for c in pr.comments)]
    assert all(AWS_KEY not in t for t in seen) and AWS_KEY not in caplog.text
    for stored in tmp_path.glob("reviewer.db*"):
        assert AWS_KEY.encode() not in stored.read_bytes(), stored.name
