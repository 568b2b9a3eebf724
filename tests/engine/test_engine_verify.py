"""Verification through run_review against the chat double (bot/engine/verify.py,
bot/reviews/verdict.py): each finding at or above minor checked in a call of its own, answered as
reviewer_verdict; only a refutation citing lines the verifier was shown drops a finding."""

import json

from bot.config.model import Provider
from bot.engine.engine import run_review
from bot.reviews.verdict import MAX_VERIFIED
from tests.support.chat_double import Reply, failing, findings
from tests.support.engine_support import API_KEY, APP_LOGIN, FILES, HEAD, PATCHES, finding, make_plan

pytest_plugins = ("tests.support.engine_fixtures",)

BUG = finding(message="Division by zero raises ZeroDivisionError.")  # src/app.py:24, blocking
INLINE = finding(startLine=5, endLine=6, severity="minor", category="maintainability", message="Inline compute().")
GUIDE = finding(path="docs/guide.md", startLine=1, endLine=2, severity="important", category="security",
                message="The guide shows a token.")
SORT = finding(startLine=2, endLine=2, severity="important", category="style", message="Sort the imports now.")
NIT = finding(startLine=2, endLine=2, severity="nit", category="style", message="Prefer one import a line.")


def verdict(kind: str, reason: str, *evidence: tuple[str, int, int]) -> Reply:
    return Reply(content=json.dumps({"verdict": kind, "reason": reason, "evidence": [
        {"path": p, "startLine": a, "endLine": b} for p, a, b in evidence]}), usage=(300, 20))


def verifying(double, verify: bool = True) -> dict[str, Provider]:
    return {"local": Provider("local", "openai", double.base_url, "env://CHAT_KEY", 10.0, "instance", verify=verify)}


async def review(double, session, providers, **kwargs):
    return await run_review(make_plan(feedback="detailed"), files=FILES, patches=PATCHES, providers=providers,
                            session=session, head_sha=HEAD, app_login=APP_LOGIN, environ={"CHAT_KEY": API_KEY},
                            **kwargs)


def verify_requests(double) -> list[dict]:
    return [r.body for r in double.requests_for("primary-model")
            if "You check one finding" in r.body["messages"][0]["content"]]


async def test_a_refuted_finding_is_not_posted_and_the_others_stay_as_found(double, session):
    double.answer("primary-model", findings(BUG, INLINE, GUIDE, SORT, NIT, usage=(1000, 100)))
    double.answer_when("primary-model", "Division by zero raises", verdict(
        "refuted", "b is 2 on line 23 and a / 0 is never reached: compute() returns before.", ("src/app.py", 22, 24)))
    double.answer_when("primary-model", "Inline compute()", verdict("confirmed", "It is used once.",
                                                                    ("src/app.py", 5, 6)))
    double.answer_when("primary-model", "The guide shows a token", verdict(
        "refuted", "No token there.", ("src/app.py", 100, 101)))  # lines it was never shown
    double.answer_when("primary-model", "Sort the imports now", failing(500, "overloaded"))
    output = await review(double, session, verifying(double))

    assert [f.message for f in output.findings] == [
        "Inline compute().", "The guide shows a token.", "Sort the imports now.", "Prefer one import a line."]
    assert output.counts.refuted == 1 and "1 refuted by a second look at the code, not posted" in output.summary
    assert output.ledger.standing().to_json()["total"] == 4 and output.conclusion != "failure"  # BUG no longer counts
    assert output.verification is not None
    assert (output.verification.confirmed, len(output.verification.refuted), output.verification.unverified,
            output.verification.failed) == (1, 1, 1, 1)
    note = next(n for n in output.notes if n.startswith("Verification by local/primary-model"))
    assert note.startswith("Verification by local/primary-model: 4 finding(s) checked: 1 confirmed; 1 refuted and not "
                           "posted; 1 not verified (it cited src/app.py:100-101, which it was not shown): posted as "
                           "found; 1 not verified, the verifier failed (provider 'local': HTTP 500: overloaded): "
                           "posted as found")
    assert "Division by zero" not in output.summary  # named in the check run only (bot/reviews/checkrun.py)
    sent = verify_requests(double)
    assert len(sent) == 4  # the nit is never worth a call
    assert all(b["response_format"]["json_schema"]["name"] == "reviewer_verdict" for b in sent)
    asked = next(b["messages"][1]["content"] for b in sent if "Division by zero" in b["messages"][1]["content"])
    assert '"message": "Division by zero raises ZeroDivisionError."' in asked
    assert "    24 +    c = a / 0" in asked  # its code, numbered as the review's diff
    # the verifier's calls count in the review's usage: one review call, four verifications
    assert output.cost is not None and (output.cost.calls, output.cost.prompt_tokens) == (5, 1000 + 3 * 300)
    assert output.to_json()["verification"]["refutedFindings"][0]["path"] == "src/app.py"


async def test_a_verdict_that_cites_nothing_or_answers_no_verdict_changes_nothing(double, session):
    double.answer("primary-model", findings(BUG, INLINE))
    double.answer_when("primary-model", "Division by zero raises", verdict("refuted", "Trust me."))
    double.answer_when("primary-model", "Inline compute()", Reply(content="I think it is fine."))
    output = await review(double, session, verifying(double))
    assert [f.message for f in output.findings] == [BUG["message"], INLINE["message"]]
    assert output.conclusion == "failure"  # the blocking finding stands
    assert output.verification is not None and output.verification.unverified == 2
    assert "2 not verified (it cited no line): posted as found" in " ".join(output.notes)


async def test_a_failing_verifier_changes_nothing(double, session):
    double.answer("primary-model", findings(BUG, INLINE))
    double.answer_when("primary-model", "You check one finding", failing(503, "down"))
    checked = await review(double, session, verifying(double))
    plain_double_requests = len(double.requests)
    assert plain_double_requests == 3  # one review, two verifications
    assert checked.verification is not None and checked.verification.failed == 2
    assert [f.message for f in checked.findings] == [BUG["message"], INLINE["message"]]
    assert (checked.conclusion, checked.title) == ("failure", "1 blocking finding(s)")
    assert "2 not verified, the verifier failed (provider 'local': HTTP 503: down): posted as found" in \
        " ".join(checked.notes)


async def test_without_verify_no_finding_is_checked(double, session):
    double.answer("primary-model", findings(BUG, INLINE))
    output = await review(double, session, verifying(double, verify=False))
    assert output.verification is None and len(double.requests) == 1
    assert "Verification" not in " ".join(output.notes) and "refuted" not in output.summary


async def test_at_most_so_many_findings_are_checked_the_most_severe_first(double, session):
    many = [finding(startLine=1, endLine=1, severity="minor", category="other", message=f"Minor {n}.")
            for n in range(MAX_VERIFIED)]
    double.answer("primary-model", findings(*many, BUG))
    double.answer_when("primary-model", "You check one finding", verdict("confirmed", "Yes.", ("src/app.py", 1, 1)))
    output = await review(double, session, verifying(double))
    sent = verify_requests(double)
    assert len(sent) == MAX_VERIFIED and any("Division by zero" in b["messages"][1]["content"] for b in sent)
    assert output.verification is not None and output.verification.skipped == 1
    assert f"1 not checked (at most {MAX_VERIFIED} a review): posted as found" in " ".join(output.notes)
    assert len(output.findings) == MAX_VERIFIED + 1


async def test_a_verification_past_its_time_leaves_the_unchecked_findings_as_found(double, session):
    """Each call is bounded by the provider's timeout, and the whole verification by twice it: with
    seven findings three at a time, the third batch cannot be answered in time whatever the load."""
    many = [finding(startLine=1, endLine=1, severity="minor", category="other", message=f"Minor {n}.")
            for n in range(7)]
    double.answer("primary-model", findings(*many))
    double.answer_when("primary-model", "You check one finding", Reply(content="{}", delay=60))
    provider = {"local": Provider("local", "openai", double.base_url, "env://CHAT_KEY", 1.0, "instance",
                                  verify=True)}
    output = await review(double, session, provider)
    assert output.verification is not None and output.verification.failed == 7
    assert len(output.findings) == 7
    said = " ".join(output.notes)
    assert "the verification ran out of its time (2 s, 2 times the provider's timeout)" in said  # the third batch
    assert "no answer within 1 s (timeout)" in said  # the first
