"""What a comment asks of the app, what an answer may say, and which deliveries make a job (pure),
on GitHub's example payloads."""

from __future__ import annotations

import copy

from bot.events.jobs import classify
from bot.reviews.followup import MAX_ANSWERS, conversation, neutralise_mentions, rate, read_comment
from tests.support.github_double.render import example


def test_commands_questions_and_what_is_not_for_the_app():
    assert read_comment("@reviewer full review", "reviewer").command == "full review"
    assert read_comment("@Reviewer[bot] Pause.", "reviewer").command == "pause"
    assert read_comment("Please, @reviewer review\nthanks", "reviewer").command == "review"
    assert read_comment("@reviewer stop it", "reviewer").command == "help"  # unknown: the help
    assert read_comment("@reviewer", "reviewer").command == "help"
    question = read_comment("@reviewer why is dividing here a problem at all?", "reviewer")
    assert question.kind == "question" and "dividing" in question.text
    assert read_comment("> @reviewer review\nquoted, not said", "reviewer").kind == "nothing"
    assert read_comment("```\n@reviewer review\n```", "reviewer").kind == "nothing"
    assert read_comment("ask @reviewers-team", "reviewer").kind == "nothing"  # another name
    assert read_comment("mail me@reviewer.dev", "reviewer").kind == "nothing"
    assert read_comment("Thanks, fixed.", "reviewer").kind == "nothing"
    assert read_comment("Thanks, fixed.", "reviewer", in_app_thread=True).kind == "question"


def test_answers_never_mention_anyone_and_are_bounded():
    assert neutralise_mentions("@alice and @reviewer[bot], see `@kept` and a@b.c") == (
        "`@alice` and `@reviewer[bot]`, see `@kept` and a@b.c")
    for sneaky in ("@@reviewer review", "(@reviewer)", "-@reviewer", "**@reviewer**", "/@reviewer", "\n@reviewer", "@reviewer_x"):
        out = neutralise_mentions(sneaky)
        assert "`@reviewer`" in out and out.replace("`@reviewer`", "").count("@reviewer") == 0, sneaky
    assert [rate({"answer": n}) for n in range(MAX_ANSWERS + 1)] == ["answer"] * MAX_ANSWERS + ["notice"]
    assert rate({"answer": MAX_ANSWERS, "notice": 1}) == "silent"


def test_which_conversation_deliveries_make_a_job():
    on_pull = copy.deepcopy(example("issue_comment.created"))
    on_pull["issue"]["pull_request"] = {"url": "https://api.github.com/repos/o/r/pulls/1"}
    job = classify("issue_comment", on_pull)
    assert (job.kind, job.pr_number, job.head_sha, job.key) == ("job", 1, None, "Codertocat/Hello-World#1")
    assert classify("issue_comment", example("issue_comment.created")).reason == (
        "issue_comment on an issue, not a pull request")
    reply = copy.deepcopy(example("pull_request_review_comment.created"))
    assert classify("pull_request_review_comment", reply).kind == "job"
    by_bot = copy.deepcopy(reply)
    by_bot["sender"]["type"] = "Bot"
    assert classify("pull_request_review_comment", by_bot).reason == "pull_request_review_comment.created sent by a bot"
    review = copy.deepcopy(example("pull_request_review.submitted"))
    assert classify("pull_request_review", review).reason == "pull_request_review without a body"
    review["review"]["body"] = "@reviewer why?"
    assert classify("pull_request_review", review).kind == "job"
    edited = {**reply, "action": "edited"}
    assert classify("pull_request_review_comment", edited).kind == "ignored"


def _c(id: int, login: str, body: str = "") -> dict:
    return {"id": id, "user": {"login": login}, "body": body}


def test_the_conversation_ends_at_the_checked_comment_and_keeps_only_its_author_in_the_apps_thread():
    app = "reviewer[bot]"
    thread = [_c(1, app), _c(2, "mallory"), _c(3, "alice"), _c(4, app), _c(5, "alice"), _c(6, "mallory")]
    told, left_out = conversation(thread, thread[4], app)
    assert [c["id"] for c in told] == [1, 3, 4, 5] and left_out == 1
    # a thread someone else started keeps everyone's words, still ending at the comment
    human = [_c(1, "bob"), _c(2, "mallory"), _c(3, "alice"), _c(4, "mallory")]
    told, left_out = conversation(human, human[2], app)
    assert [c["id"] for c in told] == [1, 2, 3] and left_out == 0
    # a comment GitHub does not list yet is added at the end
    told, _ = conversation(thread[:2], _c(9, "alice", "new"), app)
    assert [c["id"] for c in told] == [1, 9]
