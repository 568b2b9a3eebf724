"""`reviewer eval` with `verify: true`: one run reports the figures with and without the second
look at each finding (the findings before verification, and after), through the real command over
a real git repository and the chat double."""

from __future__ import annotations

import json

from tests.eval.test_eval_cli import CALC_CASE, admin, at, chat, corpus, repo, reviewer  # noqa: F401 - fixtures
from tests.support.chat_double import Reply, findings


def verdict(kind: str, line: int) -> Reply:
    return Reply(content=json.dumps({"verdict": kind, "reason": f"line {line} says so",
                                     "evidence": [{"path": "src/calc.py", "startLine": line, "endLine": line}]}),
                 usage=(200, 10))


async def test_one_run_reports_precision_and_recall_with_and_without_verification(tmp_path, repo, chat,  # noqa: F811
                                                                                    capsys):
    chat.answer("m1", findings(at(5, "blocking", "step_1 subtracts instead of adding."),
                               at(17, "important", "step_5 multiplies."),
                               at(31, "minor", "Line 31 is wrong."), usage=(1000, 100)))
    chat.answer_when("m1", "step_1 subtracts instead", verdict("confirmed", 5))
    chat.answer_when("m1", "step_5 multiplies.", verdict("refuted", 17))  # wrongly: a must-find item
    chat.answer_when("m1", "Line 31 is wrong.", verdict("refuted", 31))  # rightly: a must-not place
    settings = admin(tmp_path, chat, extra="  verify: true\n")
    code, out, _ = await reviewer(capsys, corpus(tmp_path, CALC_CASE), "--admin-config", settings, "--format", "json")
    assert code == 0
    report = json.loads(out)
    [case] = report["cases"]
    assert [f["message"] for f in case["findings"]] == ["step_1 subtracts instead of adding."]
    assert case["verification"] == {
        "refuted": [{**at(17, "important", "step_5 multiplies."), "matches": [1]},
                    {**at(31, "minor", "Line 31 is wrong."), "matches": []}],
        "without": {"recall": 2 / 3, "precision": 2 / 3, "quiet": 0.5, "findings": 3}}
    assert (case["recall"], case["precision"], case["quiet"]) == (1 / 3, 1.0, 1.0)
    assert report["verification"] == {
        "cases": 1, "refuted": 2, "refutedMatched": 1,
        "with": {"recall": 1 / 3, "precision": 1.0, "quiet": 1.0, "findings": 1, "matched": 1, "found": 1},
        "without": {"recall": 2 / 3, "precision": 2 / 3, "quiet": 0.5, "findings": 3, "matched": 2, "found": 2}}
    assert case["cost"]["calls"] == 4 and case["cost"]["promptTokens"] == 1000 + 3 * 200  # the verdicts count

    code, text, _ = await reviewer(capsys, corpus(tmp_path, CALC_CASE), "--admin-config", settings)
    assert ("verification (1 case(s)): 2 finding(s) refuted and not posted, 1 of them matching a must-find item; "
            "without it: recall 0.67, precision 0.67 (2/3), quiet 0.50; with it: recall 0.33, precision 1.00 (1/1), "
            "quiet 1.00") in text


async def test_without_verify_the_report_has_no_verification(tmp_path, repo, chat, capsys):  # noqa: F811
    chat.answer("m1", findings(at(5, "blocking", "step_1 subtracts instead of adding.")))
    code, out, _ = await reviewer(capsys, corpus(tmp_path, CALC_CASE), "--admin-config", admin(tmp_path, chat),
                                  "--format", "json")
    report = json.loads(out)
    assert code == 0 and report["verification"] is None and report["cases"][0]["verification"] is None
    assert len(chat.requests) == 1
