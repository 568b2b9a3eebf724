"""Approvals, dismissals and the check-run conclusion, through run_review and the pure decide()."""

from bot.engine.request import Budgets
from bot.reviews.decisions import decide
from bot.reviews.findings import MAX_FINDINGS, Finding
from tests.support.chat_double import Reply, failing, findings
from tests.support.engine_support import APP_LOGIN, HEAD, finding, make_plan, review

pytest_plugins = ("tests.support.engine_fixtures",)

OLD = "fedcba9876543210fedcba9876543210fedcba98"
MINOR = finding(severity="minor", category="maintainability", message="Name this better.")
BLOCKING = finding()
IMPORTANT = finding(severity="important", category="performance", message="Quadratic.")


def gh_review(review_id, login, state, commit, kind="Bot"):
    return {"id": review_id, "user": {"login": login, "type": kind}, "state": state, "commit_id": commit}


def kinds(outcome):
    return [(d.kind, d.review_id) for d in outcome.decisions]


async def test_a_clean_head_is_approved_once(double, session):
    double.answer("primary-model", findings(MINOR))
    outcome = await review(double, session, make_plan(approve=True))
    [decision] = outcome.decisions
    assert decision.kind == "approve" and decision.commit_id == HEAD
    assert decision.reason == "Reviewer found nothing blocking or important at 0123456."
    assert outcome.conclusion == "success" and outcome.annotations[0].annotation_level == "notice"

    again = await review(double, session, make_plan(approve=True),
                         reviews=[gh_review(7, APP_LOGIN, "APPROVED", HEAD)])
    assert [(d.kind, d.reason) for d in again.decisions] == [("none", "already approved at 0123456")]


async def test_a_new_head_is_approved_even_when_an_older_one_was(double, session):
    double.answer("primary-model", findings())
    outcome = await review(double, session, make_plan(approve=True),
                           reviews=[gh_review(7, APP_LOGIN, "APPROVED", OLD)])
    assert kinds(outcome) == [("approve", None)]


async def test_a_later_blocking_finding_dismisses_only_the_apps_own_approvals(double, session):
    double.answer("primary-model", findings(BLOCKING))
    reviews = [
        gh_review(1, APP_LOGIN, "APPROVED", OLD),
        gh_review(2, "octocat", "APPROVED", OLD, kind="User"),  # a person's approval stays
        gh_review(3, "other-app[bot]", "APPROVED", OLD),  # another app's too
        gh_review(4, APP_LOGIN, "COMMENTED", OLD),
        gh_review(5, APP_LOGIN, "DISMISSED", OLD),
        gh_review(6, APP_LOGIN, "APPROVED", HEAD),
    ]
    outcome = await review(double, session, make_plan(approve=True), reviews=reviews)
    assert kinds(outcome) == [("dismiss", 1), ("dismiss", 6)]
    assert "1 blocking and 0 important" in outcome.decisions[0].reason
    assert outcome.conclusion == "failure" and outcome.title == "1 blocking finding(s)"
    assert outcome.annotations[0].annotation_level == "failure"


async def test_an_important_finding_dismisses_and_warns_without_failing(double, session):
    double.answer("primary-model", findings(IMPORTANT))
    outcome = await review(double, session, make_plan(approve=True),
                           reviews=[gh_review(1, APP_LOGIN, "APPROVED", OLD)])
    assert kinds(outcome) == [("dismiss", 1)]
    assert outcome.conclusion == "success" and outcome.annotations[0].annotation_level == "warning"


async def test_a_failed_review_neither_approves_nor_dismisses(double, session):
    double.answer("primary-model", failing(503, "down"))
    double.answer("fallback-model", Reply(content="???"))
    outcome = await review(double, session, make_plan(approve=True),
                           reviews=[gh_review(1, APP_LOGIN, "APPROVED", OLD)])
    assert kinds(outcome) == [("none", None)] and outcome.conclusion == "failure"


async def test_a_blocking_finding_withheld_for_lacking_a_fix_still_blocks(double, session):
    double.answer("primary-model", findings(BLOCKING))
    outcome = await review(double, session, make_plan(approve=True, requireSuggestedFix=True))
    assert outcome.inline == () and outcome.counts.without_fix == 1
    assert outcome.decisions[0].kind == "none" and outcome.conclusion == "failure"
    assert outcome.title == "1 blocking finding(s) (1 withheld: no suggested fix)"


def f(severity):
    return Finding("a.py", 1, 1, severity, "bug", "m")


def test_decide_is_pure_and_matches_the_bot_login_only():
    own = gh_review(1, "Reviewer-App[bot]", "APPROVED", OLD)
    impostor = gh_review(2, "reviewer-app[bot]", "APPROVED", OLD, kind="User")
    common = dict(head_sha=HEAD, findings=[f("blocking")], reviews=[own, impostor], completed=True)
    assert [d.review_id for d in decide(approve=True, app_login="reviewer-app[bot]", **common)] == [1]
    assert [d.review_id for d in decide(approve=True, app_login="reviewer-app", **common)] == [1]
    # dismissal does not depend on `approve`: a stale approval must not outlive a problem
    assert [d.kind for d in decide(approve=False, app_login="reviewer-app[bot]", **common)] == ["dismiss"]


def test_decide_without_approve_or_completion_does_nothing():
    clean = dict(head_sha=HEAD, app_login=APP_LOGIN, findings=[f("minor")], reviews=[])
    off = decide(completed=True, approve=False, **clean)
    assert [(d.kind, d.reason) for d in off] == [("none", "approve is off")]
    [skip] = decide(completed=False, approve=True, **clean)
    assert skip.kind == "none" and "did not complete" in skip.reason


async def test_findings_past_the_limit_withhold_the_approval(double, session):
    double.answer("primary-model", findings(*[MINOR] * (MAX_FINDINGS + 1)))
    outcome = await review(double, session, make_plan(approve=True))
    assert [(d.kind, d.reason) for d in outcome.decisions] == [
        ("none", f"approval withheld: 1 finding past the limit of {MAX_FINDINGS} was not read")]
    assert outcome.title == "Nothing blocking or important; not approved: the review is incomplete"
    assert outcome.conclusion == "success" and outcome.gaps


async def test_a_diff_cut_for_its_size_withholds_the_approval(double, session):
    double.answer("primary-model", findings())
    outcome = await review(double, session, make_plan(approve=True), budgets=Budgets(diff=200))
    [decision] = outcome.decisions
    assert decision.kind == "none" and decision.withheld
    assert decision.reason.startswith("approval withheld: part of the diff was not sent to the model, for its "
                                      "size: src/app.py")
    assert outcome.title == "No findings; not approved: the review is incomplete"


async def test_a_whole_review_approves_as_before(double, session):
    double.answer("primary-model", findings(MINOR, {"path": "src/app.py"}))
    gapped = await review(double, session, make_plan(approve=True))
    assert gapped.decisions[0].kind == "none" and "1 finding of the model's answer was malformed" in (
        gapped.decisions[0].reason)
    double.answer("primary-model", findings(MINOR))
    whole = await review(double, session, make_plan(approve=True))
    assert [d.kind for d in whole.decisions] == ["approve"] and whole.gaps == ()
    assert whole.title == "Nothing blocking or important"


def test_gaps_withhold_an_approval_but_never_a_dismissal():
    own = gh_review(1, APP_LOGIN, "APPROVED", OLD)
    gaps = ("1 finding of the model's answer was malformed and dropped (what it said is unknown)",)
    common = dict(head_sha=HEAD, app_login=APP_LOGIN, reviews=[own], completed=True, gaps=gaps)
    assert [d.kind for d in decide(approve=True, findings=[f("important")], **common)] == ["dismiss"]
    [held] = decide(approve=True, findings=[f("minor")], **common)
    assert (held.kind, held.withheld, held.reason) == ("none", True, "approval withheld: " + gaps[0])
    [off] = decide(approve=False, findings=[f("minor")], **common)
    assert (off.reason, off.withheld) == ("approve is off", False)
