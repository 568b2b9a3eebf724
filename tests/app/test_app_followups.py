"""Follow-ups and commands end to end: GitHub's example deliveries of `pull_request_review_comment`,
`issue_comment` and `pull_request_review`, retargeted at the double → the real server → the GitHub
double (replies, issue comments, collaborator permission) and the chat-completions double.
"""

from __future__ import annotations

import uuid

import pytest

from tests.support.app_support import running_app
from tests.support.chat_double import Reply, findings
from tests.support.followup_support import replies, reviewed_with_a_finding, say
from tests.support.github_double import Review
from tests.support.github_double.model import now_iso, person
from tests.support.review_support import (
    PRIMARY,
    admin_yaml,
    config_pull,
    push_reviewed,
    reviewed,
    reviewing_app,
    runs_done,
    shown,
)

pytestmark = pytest.mark.usefixtures("model_key")  # the shared fixtures of tests/conftest.py

ANSWER = "Fair point, @alice: guard the divisor. Ping @reviewer or @helper[bot] if needed."
RULES = "feedback: detailed\nrules:\n  - id: no-div-zero\n    rule: Check every divisor before dividing.\n"


PEOPLE = {"alice": "write", "mallory": "read", "maint": "maintain"}


async def test_a_reply_to_a_finding_is_answered_in_its_thread_with_the_context(
        tmp_path, github, github_app, app_private_key, chat):
    async with reviewing_app(tmp_path, github, github_app, app_private_key, chat) as world:
        pr, finding = await reviewed_with_a_finding(world, chat, RULES, PEOPLE)
        chat.answer(PRIMARY, Reply(content=ANSWER))
        question = pr.reply(finding, "Why would b ever be 0 here?", "alice")
        assert await say(world, "pull_request_review_comment", pr, comment=question) == "done"

    assert replies(world, pr, finding) == [
        "Fair point, `@alice`: guard the divisor. Ping `@reviewer` or `@helper[bot]` if needed."]
    sent = chat.requests_for(PRIMARY)[-1].body
    assert "response_format" not in sent  # free text, not findings
    asked = sent["messages"][1]["content"]
    assert "Division by zero when b is 0." in asked and "Why would b ever be 0 here?" in asked  # the thread
    assert "`src/calc.py` line 6" in asked and "     6      return a / b" in asked  # the code at the head
    assert "Rule `no-div-zero`" in asked and "Check every divisor" in asked


async def test_who_is_never_answered(tmp_path, github, github_app, app_private_key, chat):
    async with reviewing_app(tmp_path, github, github_app, app_private_key, chat) as world:
        pr, finding = await reviewed_with_a_finding(world, chat, RULES, PEOPLE)
        chat.answer(PRIMARY, Reply(content="An answer."))
        asked_before = len(chat.requests)
        no_write = pr.reply(finding, "Why?", "mallory")
        assert await say(world, "pull_request_review_comment", pr, comment=no_write) == "done"
        other_bot = pr.reply(finding, "@reviewer why?", person("helper[bot]", "Bot"))
        assert await say(world, "pull_request_review_comment", pr, comment=other_bot) == "ignored"
        own = pr.comment("@reviewer review", world.app.bot)
        assert await say(world, "issue_comment", pr, comment=own) == "ignored"
        unrelated = pr.comment("Looks fine to me, merging after CI.", "alice")
        assert await say(world, "issue_comment", pr, comment=unrelated) == "done"
        quoted = pr.comment("> @reviewer full review\nWhy did it say that?", "alice")
        assert await say(world, "issue_comment", pr, comment=quoted) == "done"
        maintainer = pr.reply(finding, "Is this still a problem?", "maint")  # maintain counts as write
        assert await say(world, "pull_request_review_comment", pr, comment=maintainer) == "done"
        assert await say(world, "issue_comment", pr, comment=pr.comment("@reviewer pause", "mallory")) == "done"
        first_head = pr.head_sha
        world.repo.commit({"src/calc.py": "def ratio(a, b):\n    return a / b\n"}, branch=pr.head_ref)
        chat.answer(PRIMARY, findings())
        pushed = await reviewed(world, pr, "synchronize", before=first_head)

    assert replies(world, pr, finding) == ["An answer."]
    assert len(chat.requests) == asked_before + 2  # the maintainer's answer, and the push's review
    assert "paused" not in pushed.output["title"]  # a reader cannot pause the app
    assert [shown(c.body) for c in pr.comments if c.user == world.app.bot and "summary" not in c.body] == [own.body]


async def test_five_answers_a_thread_an_hour_then_one_notice(tmp_path, github, github_app, app_private_key, chat):
    async with reviewing_app(tmp_path, github, github_app, app_private_key, chat) as world:
        pr, finding = await reviewed_with_a_finding(world, chat, RULES, PEOPLE)
        chat.answer(PRIMARY, Reply(content="An answer."))
        for i in range(7):
            reply = pr.reply(finding, f"And why {i}?", "alice")
            delivery = str(uuid.uuid4())
            await say(world, "pull_request_review_comment", pr, comment=reply, delivery_id=delivery)
        again = pr.thread(finding)[-1]  # the same comment delivered again under a new id: answered once
        await say(world, "pull_request_review_comment", pr, comment=again)

    answers = replies(world, pr, finding)
    assert answers[:5] == ["An answer."] * 5
    assert github.count("GET /repos/{owner}/{repo}/collaborators/{username}/permission") == 1  # cached
    assert len(answers) == 6 and "answered 5 times in this thread within the hour" in answers[5]


async def test_disabled_at_the_merge_base_stops_follow_ups(tmp_path, github, github_app, app_private_key, chat):
    async with reviewing_app(tmp_path, github, github_app, app_private_key, chat) as world:
        pr = config_pull(world, "enabled: false\n")
        world.repo.permissions["alice"] = "admin"
        question = pr.comment("@reviewer why is this change safe to merge today?", "alice")
        assert await say(world, "issue_comment", pr, comment=question) == "done"
        command = pr.comment("@reviewer help", "alice")
        assert await say(world, "issue_comment", pr, comment=command) == "done"
    assert [c for c in pr.comments if c.user == world.app.bot] == []
    assert chat.requests == []


async def test_a_question_in_a_comment_or_a_review_is_answered_on_the_pull_request(
        tmp_path, github, github_app, app_private_key, chat):
    async with reviewing_app(tmp_path, github, github_app, app_private_key, chat) as world:
        pr, _ = await reviewed_with_a_finding(world, chat, RULES, PEOPLE)
        chat.answer(PRIMARY, Reply(content="Because ratio divides."))
        question = pr.comment("@reviewer what does this pull request change in calc?", "alice")
        await say(world, "issue_comment", pr, comment=question)
        review = Review(next(pr.repo.ids), person("alice"), "@reviewer is the secret() helper risky at all?",
                        "COMMENTED", pr.head_sha, now_iso())
        pr.reviews.append(review)
        await say(world, "pull_request_review", pr, review=review)
    answers = [shown(c.body) for c in pr.comments if c.user == world.app.bot and "reviewer:summary" not in c.body]
    assert answers == ["Because ratio divides.", "Because ratio divides."]
    asked = [r.body["messages"][1]["content"] for r in chat.requests_for(PRIMARY)[-2:]]
    assert "what does this pull request change" in asked[0] and "secret() helper risky" in asked[1]


async def test_commands_pause_resume_plan_help_and_review(tmp_path, github, github_app, app_private_key, chat):
    async with reviewing_app(tmp_path, github, github_app, app_private_key, chat) as world:
        pr, _ = await reviewed_with_a_finding(world, chat, RULES, PEOPLE)
        chat.answer(PRIMARY, findings())
        await say(world, "issue_comment", pr, comment=pr.comment("@reviewer pause", "alice"))
        paused = await push_reviewed(world, pr, {"src/calc.py": "def ratio(a, b):\n    return a / b\n"})
        asked_while_paused = len(chat.requests)
        await say(world, "issue_comment", pr, comment=pr.comment("@reviewer review", "alice"))
        forced = (await runs_done(world, pr, 2))[-1]
        await say(world, "issue_comment", pr, comment=pr.comment("@reviewer resume", "alice"))
        await say(world, "issue_comment", pr, comment=pr.comment("@reviewer plan", "alice"))
        await say(world, "issue_comment", pr, comment=pr.comment("@reviewer dance", "alice"))
        await say(world, "issue_comment", pr, comment=pr.comment("@reviewer full review", "alice"))
        full = (await runs_done(world, pr, 3))[-1]

    assert paused.conclusion == "neutral"
    assert paused.output["title"] == "Skipped: automatic reviews of this pull request are paused"
    assert "alice paused automatic reviews" in paused.output["summary"]
    assert asked_while_paused == 1  # the paused push asked no model
    assert "Incremental review" in forced.output["summary"]  # reviewed although paused: asked for
    assert forced.output["title"] == "1 blocking finding(s)"  # the division still stands
    assert "Full review" in full.output["summary"] and "a full review was asked for" in full.output["summary"]
    said = [shown(c.body) for c in pr.comments if c.user == world.app.bot and "reviewer:summary" not in c.body]
    assert said[0].startswith("Paused automatic reviews of this pull request.")
    assert said[1].startswith("Resumed automatic reviews")
    assert said[2].startswith(f"## Reviewer's plan for `{pr.head_sha[:7]}`") and "### Files to review (1)" in said[2]
    assert said[3].startswith("I am Reviewer. Mention me with one of these commands")
    assert len(said) == 4 and len(chat.requests) == 3


async def test_a_repository_the_admin_file_disables_gets_no_follow_ups(
        tmp_path, github, github_app, app_private_key, chat):
    disabled = admin_yaml(chat) + "accounts:\n  octo-org:\n    disabledRepositories: [example]\n"
    async with running_app(tmp_path, github, github_app, app_private_key, admin_yaml=disabled) as world:
        pr = config_pull(world, "enabled: true\n")  # true cannot turn on what the admin turned off
        world.repo.permissions["alice"] = "admin"
        question = pr.comment("@reviewer why is this change safe to merge today?", "alice")
        assert await say(world, "issue_comment", pr, comment=question) == "done"
        assert await say(world, "issue_comment", pr, comment=pr.comment("@reviewer plan", "alice")) == "done"
    assert [c for c in pr.comments if c.user == world.app.bot] == []
    assert chat.requests == []


async def test_an_answer_whose_reply_github_lost_is_posted_once(tmp_path, github, github_app, app_private_key, chat):
    """GitHub made the reply and answered 502: the answer (marked with its delivery) is looked for
    before it is sent again, and taken up; in a thread and on the pull request alike."""
    async with reviewing_app(tmp_path, github, github_app, app_private_key, chat) as world:
        pr, finding = await reviewed_with_a_finding(world, chat, RULES, PEOPLE)
        chat.answer(PRIMARY, Reply(content=ANSWER), Reply(content="Because ratio divides."))
        github.fail("POST /repos/{owner}/{repo}/pulls/{pull_number}/comments/{comment_id}/replies", applied=True)
        question = pr.reply(finding, "Why would b ever be 0 here?", "alice")
        assert await say(world, "pull_request_review_comment", pr, comment=question) == "done"
        github.fail("POST /repos/{owner}/{repo}/issues/{issue_number}/comments", applied=True)
        asked = pr.comment("@reviewer what does this pull request change in calc?", "alice")
        assert await say(world, "issue_comment", pr, comment=asked) == "done"
    assert len(replies(world, pr, finding)) == 1
    answers = [shown(c.body) for c in pr.comments if c.user == world.app.bot and "reviewer:summary" not in c.body]
    assert answers == ["Because ratio divides."]
