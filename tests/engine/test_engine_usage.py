"""What a review asked of its models (bot/engine/usage.py), counted through the real client against
the chat double, and the findings an outcome says it posts."""

from bot.engine.usage import Usage
from tests.support.chat_double import Reply, failing, findings
from tests.support.engine_support import finding, make_plan, review

pytest_plugins = ("tests.support.engine_fixtures",)

BUG = finding()
NIT = finding(startLine=2, endLine=2, severity="nit", category="style", message="Sort the imports.")
DOCS = finding(path="docs/guide.md", startLine=1, endLine=1, severity="minor", category="docs",
               message="Say what the guide is for.")


async def test_calls_and_tokens_are_counted_per_model_a_failed_call_included(double, session):
    double.answer("primary-model", failing(500, "overloaded"))
    double.answer("fallback-model", findings(BUG, usage=(1200, 80)))
    used = Usage()
    outcome = await review(double, session, usage=used)
    assert outcome.status == "completed" and outcome.fallback_used
    primary, fallback = used.models["local/primary-model"], used.models["local/fallback-model"]
    assert (primary.calls, primary.answered, primary.prompt_tokens, primary.answer_tokens) == (1, 0, 0, 0)
    assert (fallback.calls, fallback.answered, fallback.prompt_tokens, fallback.answer_tokens) == (1, 1, 1200, 80)
    assert (used.calls, used.prompt_tokens, used.answer_tokens, used.tool_rounds) == (2, 1200, 80, 0)


async def test_an_answer_without_token_counts_is_unreported_not_guessed(double, session):
    double.answer("primary-model", findings(BUG))
    used = Usage()
    await review(double, session, usage=used)
    primary = used.models["local/primary-model"]
    assert (primary.calls, primary.answered, primary.unreported, primary.prompt_tokens) == (1, 1, 1, 0)


async def test_a_request_sent_again_without_response_format_is_a_second_call(double, session):
    double.answer("primary-model", Reply(content='{"findings": []}', rejects_response_format=True, usage=(50, 5)))
    used = Usage()
    await review(double, session, usage=used)
    primary = used.models["local/primary-model"]
    assert (primary.calls, primary.answered, primary.prompt_tokens, primary.answer_tokens) == (2, 1, 50, 5)


async def test_the_outcome_lists_what_it_posts_inline_or_in_the_summary(double, session):
    double.answer("primary-model", findings(BUG, NIT, DOCS))
    outcome = await review(double, session)
    assert [f.message for f in outcome.findings] == [BUG["message"], NIT["message"], DOCS["message"]]
    assert len(outcome.inline) == 2  # the nit is kept to the summary, and still listed
    minimal = await review(double, session, make_plan(feedback="minimal"))
    assert [f.message for f in minimal.findings] == [BUG["message"]]  # the others are not posted
