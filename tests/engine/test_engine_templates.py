"""Repository comment templates: documented variables, the sandbox, limits, and falling back."""

import pytest

from bot.engine.templates import SUMMARY_LIMIT
from bot.reviews.output import SUMMARY_MARKER
from tests.support.chat_double import findings
from tests.support.engine_support import FILES, finding, make_plan, review

pytest_plugins = ("tests.support.engine_fixtures",)

BUG = finding(suggestedFix="    c = a + 0", rules=["no-div-zero"])
NIT = finding(startLine=2, endLine=2, severity="nit", category="style", message="Sort the imports.")

SUMMARY = """Team review of {{ headSha[:7] }} by {{ model }} (fallback: {{ fallbackUsed }}, {{ status }}):
{% for f in findings %}* [{{ f.severity }}/{{ f.category }}] {{ f.path }}:{{ f.startLine }}-{{ f.endLine }} \
inline={{ f.inline }} rules={{ f.rules | map(attribute="id") | join(",") }} {{ f.message }}
{% endfor %}blocking={{ severityCounts.blocking }} inline={{ inlineFindings | length }} \
summary={{ summaryFindings | length }} nits={{ counts.nitsInSummary }} feedback={{ feedback }}
held={{ heldBack | join(" / ") }} notes={{ notes | length }}"""

INLINE = """>> {{ finding.severity | upper }}: {{ finding.message }} ({{ finding.path }}:{{ finding.startLine }})
{{ suggestion }}
-- {{ model }}"""


def with_templates(summary=None, inline=None):
    files = dict(FILES)
    comments = {}
    if summary is not None:
        files[".github/summary.j2"] = summary
        comments["summaryTemplate"] = ".github/summary.j2"
    if inline is not None:
        files[".github/inline.j2"] = inline
        comments["inlineTemplate"] = ".github/inline.j2"
    return make_plan(comments=comments), files


async def test_repository_templates_render_with_the_documented_variables(double, session):
    double.answer("primary-model", findings(BUG, NIT))
    plan, files = with_templates(SUMMARY, INLINE)
    outcome = await review(double, session, plan, files=files)
    assert outcome.summary == SUMMARY_MARKER + "\n" + (
        "Team review of 0123456 by local/primary-model (fallback: False, completed):\n"
        "* [blocking/bug] src/app.py:24-24 inline=True rules=no-div-zero Division by zero raises "
        "ZeroDivisionError.\n"
        "* [nit/style] src/app.py:2-2 inline=False rules= Sort the imports.\n"
        "blocking=1 inline=1 summary=1 nits=1 feedback=standard\n"
        "held=1 nit(s) kept to this summary notes=1"
    )
    [comment] = outcome.inline
    assert comment.body == (
        ">> BLOCKING: Division by zero raises ZeroDivisionError. (src/app.py:24)\n"
        "```suggestion\n    c = a + 0\n```\n-- local/primary-model"
    )
    assert not any("template" in n for n in outcome.notes)


async def test_an_inline_template_without_the_suggestion_still_gets_it_appended(double, session):
    double.answer("primary-model", findings(BUG))
    plan, files = with_templates(inline="{{ finding.message }}")
    outcome = await review(double, session, plan, files=files)
    assert outcome.inline[0].body == (
        "Division by zero raises ZeroDivisionError.\n\n```suggestion\n    c = a + 0\n```")


@pytest.mark.parametrize("source, reason", [
    ("{% for f in findings %}", "line 1: TemplateSyntaxError"),
    ("{{ findngs | length }}", "UndefinedError: 'findngs' is undefined"),
    ("ok\n{{ 1 // 0 }}", "line 2: ZeroDivisionError"),
    ("{{ ''.__class__.__mro__ }}", "SecurityError"),
    ("{{ cycler.__init__.__globals__ }}", "SecurityError"),
], ids=["syntax", "undefined", "runtime", "sandbox-dunder", "sandbox-globals"])
async def test_a_failing_summary_template_falls_back_to_the_built_in_with_a_note(double, session, source, reason):
    double.answer("primary-model", findings(BUG))
    plan, files = with_templates(summary=source)
    outcome = await review(double, session, plan, files=files)
    assert outcome.status == "completed"
    assert outcome.summary.startswith(SUMMARY_MARKER + "\n## Reviewer\n**1 finding(s)**")
    [note] = [n for n in outcome.notes if "summaryTemplate" in n]
    assert note.startswith("summaryTemplate .github/summary.j2 failed to render (")
    assert reason in note and note.endswith("; the built-in template was used")
    assert note in outcome.summary


async def test_a_failing_inline_template_falls_back_once_for_every_comment(double, session):
    double.answer("primary-model", findings(BUG, finding(startLine=23, endLine=23, message="Second.")))
    plan, files = with_templates(inline="{{ finding.nope }}")
    outcome = await review(double, session, plan, files=files)
    assert [c.body.split("\n")[0] for c in outcome.inline] == [
        "**blocking** · bug: Division by zero raises ZeroDivisionError.", "**blocking** · bug: Second."]
    notes = [n for n in outcome.notes if "inlineTemplate" in n]
    assert len(notes) == 1 and "has no attribute 'nope'" in notes[0]
    assert notes[0] in outcome.summary  # the built-in summary lists it


async def test_a_template_that_runs_too_long_is_stopped(double, session):
    double.answer("primary-model", findings(BUG))
    spin = "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}"
    plan, files = with_templates(summary=spin)
    outcome = await review(double, session, plan, files=files, template_timeout=1.0)
    assert "rendering took longer than 1 s" in outcome.summary
    assert outcome.summary.startswith(SUMMARY_MARKER + "\n## Reviewer\n")


async def test_a_template_that_exhausts_memory_is_stopped(double, session):
    double.answer("primary-model", findings(BUG))
    bomb = ('{% set ns = namespace(s="x" * 1024) %}'
            "{% for i in range(40) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}")
    plan, files = with_templates(summary=bomb)
    outcome = await review(double, session, plan, files=files)
    [note] = [n for n in outcome.notes if "summaryTemplate" in n]
    assert "MemoryError" in note or "memory or CPU limit" in note


async def test_template_output_is_bounded(double, session):
    double.answer("primary-model", findings(BUG))
    plan, files = with_templates(summary='{% for i in range(20000) %}{{ "0123456789" }}{% endfor %}')
    outcome = await review(double, session, plan, files=files)
    assert len(outcome.summary) < SUMMARY_LIMIT + 200
    assert outcome.summary.endswith("…(cut: the comment reached its size limit)")


async def test_a_missing_template_file_uses_the_built_in_with_a_note(double, session):
    double.answer("primary-model", findings(BUG))
    outcome = await review(double, session, make_plan(comments={"summaryTemplate": "nope.j2"}))
    assert "summaryTemplate nope.j2 was not available at the merge base" in outcome.summary
    assert "**1 finding(s)**" in outcome.summary
