"""The hidden markers through which a pull request's comments say what was posted on it
(bot/reviews/markers.py): what is written is read back as it was, whatever a message holds, and
anything else — too long, not base64, not JSON, the wrong shape — is passed over."""

from __future__ import annotations

import base64
import json

from bot.reviews.fingerprints import PostedFinding
from bot.reviews.markers import (
    PullState,
    all_posted,
    finding_marker,
    findings_in,
    state_in,
    state_marker,
    without_markers,
)

POSTED = PostedFinding("a" * 32, "src/calc.py", "blocking", "bug", "return a / b",
                       "Division by zero --> <!-- not a marker --> when b is 0.", "f" * 40, "analyzer:ruff", "F401",
                       6, 7)


def test_a_finding_is_read_back_as_it_was_written():
    body = f"**blocking** · bug\n\nDivision by zero.\n\n{finding_marker(POSTED)}"
    assert findings_in(body) == [POSTED]
    assert without_markers(body) == "**blocking** · bug\n\nDivision by zero.\n\n"
    assert "-->" not in finding_marker(POSTED)[:-3]  # the message cannot end the comment early


def test_the_state_is_read_back_as_it_was_written():
    state = PullState("f" * 40, "d" * 64, "b" * 40, "failure", "1 blocking finding", (POSTED,), ("blocking", "nit"))
    body = f"<!-- reviewer:summary -->\n## Reviewer\n\n{state_marker(state)}"
    assert state_in(body) == state
    assert state_in("<!-- reviewer:summary -->\nno state here") is None


def _marked(kind: str, value: object) -> str:
    return f"<!-- reviewer:{kind} {base64.b64encode(json.dumps(value).encode()).decode()} -->"


def test_what_is_not_a_marker_of_ours_is_passed_over():
    good = finding_marker(POSTED)
    wrong_type = dict(json.loads(base64.b64decode(good.split()[2])), severity=3)
    bodies = [
        "<!-- reviewer:finding not*base64 -->",
        "<!-- reviewer:finding " + base64.b64encode(b"{not json").decode() + " -->",
        _marked("finding", ["a", "list"]),
        _marked("finding", {"fingerprint": "x"}),  # required fields missing
        _marked("finding", wrong_type),
        "<!-- reviewer:finding " + "A" * 70_000 + " -->",  # longer than any comment GitHub keeps
    ]
    for body in bodies:
        assert findings_in(body) == [], body
    assert state_in(_marked("state", {"head": 1})) is None
    fine = json.loads(base64.b64decode(state_marker(PullState("f", "d", "b", "success", "t")).split()[2]))
    assert state_in(_marked("state", fine)) is not None
    assert state_in(_marked("state", {**fine, "deciding": ["fatal"]})) is None  # no severity of ours
    assert findings_in("\n".join([*bodies, good])) == [POSTED]


def test_every_fingerprint_counts_once():
    again = PostedFinding("a" * 32, "src/calc.py", "minor", "bug", "", "said again", "e" * 40)
    other = PostedFinding("b" * 32, "src/other.py", "nit", "style", "", "other", "e" * 40)
    state = PullState("f" * 40, "d", "b", "success", "t", (again, other))
    assert all_posted([state], [[POSTED], [POSTED]]) == [POSTED, other]
