"""Reviews end to end, through real HTTP: a signed webhook → the app's real pipeline → the
chat-completions double (a provider declared in the admin file) → the GitHub double; then what
GitHub holds: inline comments, the one summary comment, approvals, dismissals and the check run.

Each test scripts the model's answer and reads the outcome back from the doubles; nothing of our
own is mocked. The API key is checked to appear nowhere: GitHub, logs.
"""

from __future__ import annotations

import pytest

from tests.support.app_support import running_app
from tests.support.chat_double import ChatDouble, Reply, failing, findings
from tests.support.github_double import Review
from tests.support.github_double.model import now_iso, person
from tests.support.review_support import (
    API_KEY,
    BUG,
    CALC_HEAD,
    CLEAN,
    DOCS,
    FALLBACK,
    LEAK,
    NIT,
    PRIMARY,
    SPEED,
    admin_yaml,
    app_reviews,
    config_pull,
    everything_written,
    finding,
    inline_comments,
    push_reviewed,
    reviewed,
    reviewing_app,
    runs_done,
    summary_comments,
    summary_of,
)

pytestmark = pytest.mark.usefixtures("no_key_in_logs")  # the shared fixtures of tests/conftest.py

OUTSIDE = finding(1, "minor", "maintainability", "Name the module's purpose.", path="src/app.py")  # off the diff
CALC_NEXT = CALC_HEAD + "\ndef half(a):\n    return ratio(a, 2)\n"  # a later push


def messages(comments) -> dict[int, str]:
    """Inline comments by line → body (all on src/calc.py in these tests)."""
    assert {c.path for c in comments} <= {"src/calc.py"}
    return {c.line: c.body for c in comments}


async def test_each_feedback_level_shapes_what_is_posted(tmp_path, github, github_app, app_private_key, chat):
    chat.answer(PRIMARY, findings(BUG, LEAK, NIT, DOCS, SPEED, OUTSIDE))
    async with reviewing_app(tmp_path, github, github_app, app_private_key, chat) as world:
        levels = {level: config_pull(world, f"feedback: {level}\n") for level in ("detailed", "standard", "minimal")}
        runs = {level: await reviewed(world, pr) for level, pr in levels.items()}

    detailed, standard, minimal = (levels[k] for k in ("detailed", "standard", "minimal"))
    # detailed: every finding on the diff is inline, nits included; the one off the diff is in the summary.
    assert sorted(messages(inline_comments(world, detailed))) == [1, 3, 5, 6, 9]
    assert "Name the module's purpose." in summary_of(world, detailed)
    assert "1 outside the diff (listed in this summary; they decide neither" in summary_of(world, detailed)
    # standard: the same, with the nit kept to the summary.
    assert sorted(messages(inline_comments(world, standard))) == [3, 5, 6, 9]
    assert "Unused import order." in summary_of(world, standard)
    assert "1 nit(s) kept to this summary" in summary_of(world, standard)
    # minimal: bugs and risks (security) only; the rest is posted nowhere, only counted.
    assert sorted(messages(inline_comments(world, minimal))) == [6, 9]
    minimal_summary = summary_of(world, minimal)
    for dropped in ("Unused import order.", "Document what ratio returns.", "Cache the sum.", "Name the module"):
        assert dropped not in minimal_summary
    assert "4 outside the categories of minimal feedback, not posted" in minimal_summary
    for level, run in runs.items():
        outside = "; 1 outside the diff" if level != "minimal" else ""  # minimal leaves the maintainability one out
        assert run.conclusion == "failure" and run.output["title"] == f"1 blocking finding(s){outside}"
        assert "**none** — not approved: 1 blocking, 1 important finding(s)" in run.output["summary"]
        assert f"feedback: {level}; inline comments: on" in run.output["summary"]
    assert [(a["start_line"], a["annotation_level"]) for a in runs["minimal"].annotations] == [
        (6, "failure"), (9, "warning")]
    assert API_KEY not in everything_written(world)


async def test_inline_off_posts_the_summary_alone(tmp_path, github, github_app, app_private_key, chat):
    chat.answer(PRIMARY, findings(BUG, DOCS))
    async with reviewing_app(tmp_path, github, github_app, app_private_key, chat) as world:
        pr = config_pull(world, "comments:\n  inline: false\n")
        run = await reviewed(world, pr)
    assert app_reviews(world, pr) == []  # no review, so no inline comment
    summary = summary_of(world, pr)
    assert "Division by zero when b is 0." in summary and "Document what ratio returns." in summary
    assert "  Suggested fix:\n  ```\n      return a / b if b else 0.0\n  ```" in summary  # under its item
    assert "inline comments: off" in run.output["summary"]
    assert len(run.annotations) == 2  # the check run carries the findings all the same


SUMMARY_TEMPLATE = """\
### Custom review of {{ headSha[:7] }}
{% for f in findings %}- {{ f.severity }} {{ f.path }}:{{ f.startLine }} {{ f.message }}
{% endfor %}"""
INLINE_TEMPLATE = "[{{ finding.severity | upper }}] {{ finding.message }}"
BROKEN_TEMPLATE = "{{ findngs | length }} findings\n"


async def test_repository_templates_render_and_a_failing_one_falls_back_with_a_note(
        tmp_path, github, github_app, app_private_key, chat):
    chat.answer(PRIMARY, findings(BUG, DOCS))
    templates = {".github/summary.md.j2": SUMMARY_TEMPLATE, ".github/inline.md.j2": INLINE_TEMPLATE,
                 ".github/broken.md.j2": BROKEN_TEMPLATE}
    good_config = ("feedback: detailed\ncomments:\n  summaryTemplate: .github/summary.md.j2\n"
                   "  inlineTemplate: .github/inline.md.j2\n")
    bad_config = "comments:\n  summaryTemplate: .github/broken.md.j2\n"
    async with reviewing_app(tmp_path, github, github_app, app_private_key, chat) as world:
        good = config_pull(world, good_config, templates)
        bad = config_pull(world, bad_config, templates)
        await reviewed(world, good)
        bad_run = await reviewed(world, bad)

    short = good.head_sha[:7]
    assert summary_of(world, good).splitlines()[1:] == [
        f"### Custom review of {short}",
        "- blocking src/calc.py:6 Division by zero when b is 0.",
        "- minor src/calc.py:5 Document what ratio returns.",
        "",  # the pull request's tally ends every summary, a template's too (docs/reviews.md "Learnings")
        "**Findings of this pull request so far:** 2 findings: 0 resolved, 0 dismissed, 2 open",
    ]
    assert messages(inline_comments(world, good)) == {
        6: "[BLOCKING] Division by zero when b is 0.\n\n```suggestion\n    return a / b if b else 0.0\n```",
        5: "[MINOR] Document what ratio returns.",
    }
    fallback = summary_of(world, bad)
    assert "## Reviewer" in fallback and "2 finding(s)" in fallback  # the built-in template
    note = "summaryTemplate .github/broken.md.j2 failed to render (line 1: UndefinedError"
    assert note in fallback and "the built-in template was used" in fallback
    assert note in bad_run.output["summary"]


async def test_require_suggested_fix_posts_only_findings_with_a_fix(tmp_path, github, github_app, app_private_key,
                                                                    chat):
    chat.answer(PRIMARY, findings({**BUG, "rules": ["no-div-zero", "made-up"]}, DOCS, LEAK))
    config = "requireSuggestedFix: true\nrules:\n  - id: no-div-zero\n    rule: Check the divisor first.\n"
    async with reviewing_app(tmp_path, github, github_app, app_private_key, chat) as world:
        pr = config_pull(world, config)
        run = await reviewed(world, pr)
    assert messages(inline_comments(world, pr)) == {
        6: "**blocking** · bug: Division by zero when b is 0.\n\nRule `no-div-zero`: Check the divisor first."
           "\n\n```suggestion\n    return a / b if b else 0.0\n```"}
    summary = summary_of(world, pr)
    assert "Document what ratio returns." not in summary and "Returns a secret" not in summary
    assert "2 without a suggested fix, not posted (requireSuggestedFix)" in summary
    assert "1 unknown rule id(s) removed from findings" in summary
    assert run.conclusion == "failure" and "requireSuggestedFix: true" in run.output["summary"]


async def test_the_fallback_model_answers_when_the_review_model_errs_times_out_or_talks(
        tmp_path, github, github_app, app_private_key, chat):
    chat.answer(FALLBACK, findings(DOCS))
    failures = {"HTTP 500": failing(500, "the GPU caught fire"),
                "timeout": Reply(content='{"findings": []}', delay=5),
                "unusable answer": Reply(content="Looks good to me!")}
    async with reviewing_app(tmp_path, github, github_app, app_private_key, chat, timeout=1.0) as world:
        for said, reply in failures.items():
            chat.answer(PRIMARY, reply)
            pr = config_pull(world, "feedback: detailed\n")
            run = await reviewed(world, pr)
            assert messages(inline_comments(world, pr)) == {5: "**minor** · docs: Document what ratio returns."}
            assert f"with `local/{FALLBACK}` (the fallback model)" in summary_of(world, pr)
            assert run.conclusion == "success", said
            assert said in run.output["summary"]  # the primary's failure, among the notes
            assert "**none** — approve is off" in run.output["summary"]
    assert len(chat.requests_for(PRIMARY)) == len(chat.requests_for(FALLBACK)) == 3
    assert all(r.headers["Authorization"] == f"Bearer {API_KEY}" for r in chat.requests)


async def test_when_both_models_fail_the_run_fails_and_nothing_is_approved(
        tmp_path, github, github_app, app_private_key, chat):
    chat.answer(PRIMARY, failing(500, "overloaded"))
    chat.answer(FALLBACK, failing(503, f"upstream refused the key {API_KEY}"))  # a provider echoing the key
    async with reviewing_app(tmp_path, github, github_app, app_private_key, chat) as world:
        pr = config_pull(world, "approve: true\n")
        run = await reviewed(world, pr)
    assert run.conclusion == "failure"
    assert run.output["title"].startswith("Review failed: no model gave a usable answer")
    assert f"local/{PRIMARY}: provider 'local': HTTP 500: overloaded" in run.output["summary"]
    assert "upstream refused the key <redacted>" in run.output["summary"]
    assert "**none** — the review of" in run.output["summary"]
    assert pr.reviews == []
    assert "**Review failed:** no model gave a usable answer" in summary_of(world, pr)
    assert "Nothing was approved." in summary_of(world, pr)
    assert API_KEY not in everything_written(world)


async def test_more_than_fifty_findings_are_all_posted_and_annotated(tmp_path, github, github_app, app_private_key,
                                                                     chat):
    chat.answer(PRIMARY, findings(*(finding(1 + i % 9, "minor", "style", f"Point {i}.") for i in range(60))))
    async with reviewing_app(tmp_path, github, github_app, app_private_key, chat) as world:
        pr = config_pull(world, "feedback: detailed\n")
        run = await reviewed(world, pr)
    # the default noise budget: 10 inline comments a review, the other 50 listed in the summary
    assert len(inline_comments(world, pr)) == 10 and len(app_reviews(world, pr)) == 1  # one review
    assert "Point 59." in summary_of(world, pr) and "50 findings past the limit of 10 inline" in summary_of(world, pr)
    assert len(run.annotations) == 60 and run.requests >= 3  # at most 50 a request (the double refuses more)
    assert run.conclusion == "success" and run.output["title"] == "Nothing blocking or important"


def approve_by(pr, login: str, kind: str = "User") -> Review:
    """An approval by someone else than the app: a person, or another app."""
    review = Review(id=next(pr.repo.ids), user=person(login, kind), body="LGTM", state="APPROVED",
                    commit_id=pr.head_sha, submitted_at=now_iso())
    pr.reviews.append(review)
    return review


async def test_approve_once_then_dismiss_only_its_own_approval(tmp_path, github, github_app, app_private_key, chat):
    chat.answer(PRIMARY, findings(CLEAN))
    async with reviewing_app(tmp_path, github, github_app, app_private_key, chat) as world:
        pr = config_pull(world, "approve: true\n")
        alice = approve_by(pr, "alice")
        other_app = approve_by(pr, "helper[bot]", "Bot")
        quoting = pr.comment("The bot's comment starts with <!-- reviewer:summary -->", "bob")
        first_head = pr.head_sha

        # A clean head: approved by the app, on that commit.
        first = await reviewed(world, pr)
        assert first.conclusion == "success" and first.output["title"] == "Nothing blocking or important"
        approvals = [r for r in app_reviews(world, pr) if r.state == "APPROVED"]
        assert [r.commit_id for r in approvals] == [first_head]
        assert f"**approve** — Reviewer found nothing blocking or important at {first_head[:7]}." in (
            first.output["summary"])
        first_summary = summary_of(world, pr)

        # The same head again (Re-run in GitHub's UI): the review's result again, no second approval.
        payload = github.payload("check_run", "rerequested", installation=world.installation, pull=pr,
                                 check_run=first)
        assert (await world.deliver("check_run", payload))[0] == 202
        again = (await runs_done(world, pr, 2))[-1]
        assert [r.state for r in app_reviews(world, pr)].count("APPROVED") == 1
        assert again.conclusion == first.conclusion and again.output["title"] == first.output["title"]
        assert again.output["summary"].startswith(f"Already reviewed: {first_head[:7]} was already reviewed")
        assert len(chat.requests_for(PRIMARY)) == 1

        # A new head with a blocking finding: the app's approval is dismissed, saying why; Alice's stays.
        chat.answer(PRIMARY, findings(BUG))
        later = await push_reviewed(world, pr, {"src/calc.py": CALC_NEXT})

    own = approvals[0]
    assert own.state == "DISMISSED"
    assert own.dismissal_message == (f"Reviewer found 1 blocking and 0 important finding(s) at {pr.head_sha[:7]}; "
                                     "its earlier approval no longer holds.")
    assert alice.state == other_app.state == "APPROVED"
    assert later.conclusion == "failure" and later.output["title"] == "1 blocking finding(s)"
    assert f"**dismiss** review {own.id} — Reviewer found 1 blocking" in later.output["summary"]
    # One summary comment throughout, updated in place for the new head.
    assert len(summary_comments(world, pr)) == 1
    assert summary_of(world, pr) != first_summary and f"Reviewed `{pr.head_sha[:7]}`" in summary_of(world, pr)
    assert f"Reviewed `{first_head[:7]}`" in first_summary
    assert quoting.body == "The bot's comment starts with <!-- reviewer:summary -->"  # a person's, untouched


async def test_github_refusing_an_approval_is_noted_in_the_check_run(tmp_path, github, github_app, app_private_key,
                                                                     chat):
    chat.answer(PRIMARY, findings())
    async with reviewing_app(tmp_path, github, github_app, app_private_key, chat) as world:
        base = world.repo.commit({".reviewer.yaml": "approve: true\n", "src/calc.py": "x = 1\n"})
        world.repo.commit({"src/calc.py": "x = 2\n"}, branch="bot-change", parent=base)
        pr = world.repo.open_pull(head="bot-change", user=world.app.bot)  # the app opened it
        run = await reviewed(world, pr)
    assert pr.reviews == []
    assert run.conclusion == "success" and run.output["title"] == "No findings"
    assert "GitHub refused to approve (422): Unprocessable Entity: 'Can not approve your own pull request'" in (
        run.output["summary"])


async def test_github_refusing_a_dismissal_is_noted_and_the_run_still_fails(tmp_path, github, github_app,
                                                                            app_private_key, chat):
    chat.answer(PRIMARY, findings())
    async with reviewing_app(tmp_path, github, github_app, app_private_key, chat) as world:
        pr = config_pull(world, "approve: true\n")
        first_head = pr.head_sha
        await reviewed(world, pr)
        world.repo.dismissals_restricted = True  # a protected branch that refuses dismissals
        chat.answer(PRIMARY, findings(LEAK))
        run = await push_reviewed(world, pr, {"src/calc.py": CALC_NEXT})
    approval, commented = app_reviews(world, pr)
    assert (approval.state, approval.commit_id) == ("APPROVED", first_head)  # it stands: GitHub refused
    assert commented.state == "COMMENTED" and len(commented.comments) == 1
    assert f"GitHub refused to dismiss review {approval.id} (403)" in run.output["summary"]
    assert run.conclusion == "success" and run.output["title"] == "1 important finding(s), nothing blocking"
    assert [a["annotation_level"] for a in run.annotations] == ["warning"]


async def test_a_declared_provider_without_a_chosen_model_posts_the_plan_alone(tmp_path, github, github_app,
                                                                               app_private_key, chat):
    chat.answer(PRIMARY, findings(DOCS))
    providers_only = admin_yaml(chat).split("defaults:")[0]
    async with running_app(tmp_path, github, github_app, app_private_key, admin_yaml=providers_only) as world:
        unset = config_pull(world, "feedback: detailed\n")
        plan_only = await reviewed(world, unset)
        assert chat.requests == []
        chosen = config_pull(world, f"models:\n  review: local/{PRIMARY}\n")  # the repository picks one
        review = await reviewed(world, chosen)
    assert plan_only.conclusion == "success" and plan_only.output["title"] == "Review planned: 1 file, 0 rules"
    assert "No model is chosen for this repository" in plan_only.output["summary"]
    assert unset.reviews == unset.comments == []
    assert review.output["title"] == "Nothing blocking or important"
    assert messages(inline_comments(world, chosen)) == {5: "**minor** · docs: Document what ratio returns."}


async def test_a_refused_inline_review_leaves_the_findings_in_the_summary(
        tmp_path, github, github_app, app_private_key, chat):
    chat.answer(PRIMARY, findings(LEAK))
    async with reviewing_app(tmp_path, github, github_app, app_private_key, chat) as world:
        pr = config_pull(world, "feedback: detailed\n")
        github.fail("POST /repos/{owner}/{repo}/pulls/{pull_number}/reviews", status=422, times=1)
        run = await reviewed(world, pr)
    assert inline_comments(world, pr) == []
    assert LEAK["message"] in summary_of(world, pr)
    assert "GitHub refused the inline comments (422)" in run.output["summary"]
    assert [a["path"] for a in run.annotations] == ["src/calc.py"]


async def test_an_unknown_category_is_kept_as_other_with_its_severity_and_stops_an_approval(
        tmp_path, github, github_app, app_private_key, chat):
    # The model's `important` finding of category `correctness` (not one of ours) was dropped as
    # malformed, and the pull request approved.
    unknown = finding(6, "important", "correctness", "ratio divides by b unchecked.")
    chat.answer(PRIMARY, findings(unknown))
    async with reviewing_app(tmp_path, github, github_app, app_private_key, chat) as world:
        pr = config_pull(world, "approve: true\n")
        run = await reviewed(world, pr)
    assert [r.state for r in app_reviews(world, pr)] == ["COMMENTED"]  # the finding, and no approval
    assert messages(inline_comments(world, pr)) == {6: "**important** · other: ratio divides by b unchecked."}
    assert run.conclusion == "success" and run.output["title"] == "1 important finding(s), nothing blocking"
    assert [(a["annotation_level"], a["title"]) for a in run.annotations] == [("warning", "important · other")]
    assert "**none** — not approved: 0 blocking, 1 important finding(s)" in run.output["summary"]
    assert "category 'correctness' is not one of ours; kept as other" in run.output["summary"]
    assert "malformed" not in summary_of(world, pr)


async def test_nothing_is_approved_while_a_finding_was_dropped_as_malformed(
        tmp_path, github, github_app, app_private_key, chat):
    no_lines = {"path": "src/calc.py", "severity": "important", "category": "bug", "message": "Overflow."}
    chat.answer(PRIMARY, findings(CLEAN, no_lines))
    async with reviewing_app(tmp_path, github, github_app, app_private_key, chat) as world:
        pr = config_pull(world, "approve: true\n")
        run = await reviewed(world, pr)
    assert [r.state for r in app_reviews(world, pr)] == ["COMMENTED"]  # CLEAN's comment; no approval
    assert run.conclusion == "success"
    assert run.output["title"] == "Nothing blocking or important; not approved: the review is incomplete"
    assert ("**none** — approval withheld: 1 finding of the model's answer was malformed and dropped "
            "(what it said is unknown)") in run.output["summary"]
    assert "model answer: findings[1]: startLine: an integer of at least 1 is required" in run.output["summary"]
    assert "1 malformed, dropped" in summary_of(world, pr)


def _small_context_admin(chat: ChatDouble) -> str:
    """The provider with an 8,000-token context for both models: a larger pull request is split."""
    return admin_yaml(chat).replace("    timeout: 5\n", f"    timeout: 5\n    models:\n      {PRIMARY}: "
                                    f"{{contextTokens: 8000}}\n      {FALLBACK}: {{contextTokens: 8000}}\n", 1)


async def test_nothing_is_approved_when_one_part_of_a_split_review_failed(
        tmp_path, github, github_app, app_private_key, chat):
    chat.answer(PRIMARY, findings(), failing(500, "overloaded"))  # the first request answered, the others not
    chat.answer(FALLBACK, failing(503, "down too"))
    head = {f"src/part{i}.py": "".join(f"value_{i}_{n} = {n}\n" for n in range(220)) for i in range(3)}
    async with running_app(tmp_path, github, github_app, app_private_key,
                           admin_yaml=_small_context_admin(chat)) as world:
        pr = config_pull(world, "approve: true\n", head=head)
        run = await reviewed(world, pr)
    assert len(chat.requests_for(PRIMARY)) >= 2  # it was split
    assert [r.state for r in app_reviews(world, pr)] == []
    assert run.conclusion == "failure" and run.output["title"].startswith("Review failed: no model gave a usable")
    assert "**none** — the review of" in run.output["summary"] and "did not complete" in run.output["summary"]
    assert "Nothing was approved." in summary_of(world, pr)
