"""The lookups of a review through run_review, against the chat double over real HTTP and an index
built from a real git commit: arguments checked before anything is read (the attacks first),
rounds counted in the review's usage, answers within `maxBytes` and within the model's context,
room kept for them when the diff is split, a refusal of tools remembered, and every lookup named
in the outcome's notes, a failed review's too."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest

from bot.config.model import Provider, ToolSettings
from bot.engine.engine import run_review
from bot.engine.lookups import Refused, RepositoryLookups, check_arguments
from bot.engine.tool_loop import ToolSupport
from bot.engine.usage import Usage
from bot.index.build import sync
from bot.index.gitsource import GitSnapshot
from bot.index.queries import HeadView
from bot.index.store import IndexStore
from bot.store.index.sqlite import SqliteIndex, connect
from tests.plan.test_plan_cli import Repo
from tests.support.chat_double import Reply, asks, failing, findings
from tests.support.engine_support import API_KEY, APP_LOGIN, FILES, HEAD, PATCHES, finding, make_plan

pytest_plugins = ("tests.support.engine_fixtures",)

LONG = "".join(f"def step_{n}(value):\n    return value * {n}\n" for n in range(400))  # 800 lines, ~22 KB


@pytest.mark.parametrize("tool, raw, message", [
    ("read", '{"path": "../../etc/passwd"}', "`path` leaves the repository"),
    ("read", '{"path": "src/../../etc/passwd"}', "`path` leaves the repository"),
    ("read", '{"path": "/etc/passwd"}', "`path` is absolute"),
    ("read", '{"path": "C:/Windows/win.ini"}', "`path` is absolute"),
    ("read", '{"path": "src\\\\..\\\\..\\\\x"}', "`path` holds a backslash"),
    ("read", '{"path": "src//app.py"}', "`path` has an empty or `.` part"),
    ("read", '{"path": "./src/app.py"}', "`path` has an empty or `.` part"),
    ("read", '{"path": "src/app.py/"}', "`path` has an empty or `.` part"),
    ("read", '{"path": "src/app.py\\u0000.txt"}', "`path` holds a control character"),
    ("read", '{"path": "' + "a/" * 600 + 'x"}', "`path` is longer than 1000 characters"),
    ("read", '{"path": ""}', "`path` must be a non-empty string"),
    ("read", '{"path": ["src/app.py"]}', "`path` must be a non-empty string"),
    ("read", '{"path": "src/app.py", "start": true}', "`start` must be a line number"),
    ("read", '{"path": "src/app.py", "start": 0}', "`start` must be a line number"),
    ("read", '{"path": "src/app.py", "start": 9, "end": 3}', "`end` is before `start`"),
    ("read", '{"path": "src/app.py", "mode": "w"}', "read takes no `mode` (it takes path, start, end)"),
    ("read", '{}', "read needs `path`"),
    ("read", '["src/app.py"]', "the arguments are not a JSON object"),
    ("read", '{"path": "src/app.py"', "the arguments are not a JSON object"),
    ("read", '{"path": "' + "a" * 3000 + '"}', "the arguments are longer than 2000 characters"),
    ("definition", '{"name": "x", "line": 3}', "`line` needs `path`"),
    ("definition", '{"name": "  "}', "`name` must be a non-empty string"),
    ("search", '{"text": "' + "x" * 201 + '"}', "`text` is longer than 200 characters"),
    ("exec", '{"cmd": "id"}', "there is no tool `exec`; the tools are definition, callers, search, read"),
    ("read`); rm -rf /", "{}", "there is no tool `read); rm -rf /`"),
])
def test_calls_that_must_not_be_followed_are_refused_saying_why(tool, raw, message) -> None:
    with pytest.raises(Refused) as refused:
        check_arguments(tool, raw)
    assert message in str(refused.value)


def test_good_arguments_pass_as_given() -> None:
    assert check_arguments("read", '{"path": "src/a b.py", "start": 2, "end": 9}') == {
        "path": "src/a b.py", "start": 2, "end": 9}
    with pytest.raises(Refused, match="definition needs `name`"):
        check_arguments("definition", "")


@pytest.fixture
def reader(tmp_path: Path) -> Callable[[Callable[[IndexStore], object]], object]:
    """The index of a small repository (the engine support's app, and a long module), read in a
    thread as the server reads it."""
    repo = Repo(tmp_path / "repo")
    repo.commit("base", {"src/app.py": "import os\n\ndef main():\n    return 1\n", "src/long.py": LONG,
                         "src/compute.py": "def compute():\n    a = 1\n    return a\n"})
    conn = connect(tmp_path / "index.sqlite3")
    store = SqliteIndex(conn, "octo/app")
    sync(store, GitSnapshot(str(repo.path), repo.git("rev-parse", "HEAD").strip()))

    async def read(work):
        return await asyncio.to_thread(work, store)
    yield read
    conn.close()


HEAD_TEXT = "import os\nimport sys\n\ndef main():\n    value = compute()\n    return value\n"


def lookups(reader) -> RepositoryLookups:
    return RepositoryLookups(reader, HeadView({"src/app.py": HEAD_TEXT, "docs/guide.md": "# Guide\nText.\n"},
                                              frozenset({"src/app.py", "docs/guide.md", "assets/logo.png"}),
                                              ignored=frozenset({"vendor/lib.js"})))


DEFAULT_TOOLS = ToolSettings()


def providers(double, tools: ToolSettings = DEFAULT_TOOLS, context: int | None = None) -> dict[str, Provider]:
    models = {"primary-model": context, "fallback-model": context} if context else {}
    return {"local": Provider("local", "openai", double.base_url, "env://CHAT_KEY", 10.0, "instance",
                              models, tools=tools)}


async def review(double, session, reader, *, plan=None, provider_map=None, support=None, patches=PATCHES,
                 usage=None, with_lookups=True):
    return await run_review(plan or make_plan(), files=FILES, patches=patches,
                            providers=provider_map or providers(double), session=session, head_sha=HEAD,
                            app_login=APP_LOGIN, environ={"CHAT_KEY": API_KEY}, usage=usage,
                            lookups=lookups(reader) if with_lookups else None, tool_support=support or ToolSupport())


BUG = finding()


async def test_rounds_are_counted_in_the_usage_and_every_lookup_is_named(double, session, reader) -> None:
    double.answer("primary-model", asks(("definition", {"name": "compute", "path": "src/app.py", "line": 5})),
                  asks(("callers", {"name": "compute"}), ("search", {"text": "step_399"})), findings(BUG))
    usage = Usage()
    outcome = await review(double, session, reader, usage=usage)
    assert (usage.tool_rounds, usage.calls) == (2, 3)
    assert outcome.status == "completed" and double.violations == []
    [note] = [n for n in outcome.notes if n.startswith("Lookups by")]
    assert note.startswith("Lookups by local/primary-model: 3 in 2 round(s), ")
    assert ("definition(`compute`, `src/app.py`:5) → 1 definition(s): src/compute.py:1-3" in note
            and "callers(`compute`) → 1 caller(s): src/app.py:4-6" in note
            and "search(`step_399`) → 1 file(s): src/long.py" in note)
    answers = [m["content"] for m in double.requests[-1].body["messages"] if m["role"] == "tool"]
    assert "src/app.py:4-6 (head) — caller `main`" in answers[1]  # the changed file, read at the head


async def test_answers_stay_within_max_bytes(double, session, reader) -> None:
    double.answer("primary-model", asks(("read", {"path": "src/long.py"})),
                  asks(("read", {"path": "src/long.py"}), ignores_tool_choice=True), findings(BUG))
    outcome = await review(double, session, reader,
                           provider_map=providers(double, ToolSettings(max_rounds=4, max_bytes=2000)))
    first, second = (m["content"] for m in double.requests[-1].body["messages"] if m["role"] == "tool")
    assert len(first.encode()) <= 2000 and "(cut here for the lookup budget: lines" in first
    assert second.startswith("Error: no more lookups: this review's limit (2,000 bytes) is reached")
    assert [r.body["tool_choice"] for r in double.requests] == ["auto", "none", "none"]  # spent after one
    [note] = [n for n in outcome.notes if n.startswith("Lookups by")]
    assert "2 in 1 round(s)" in note and " of 2,000 bytes" in note


async def test_a_model_that_keeps_asking_past_the_bytes_is_told_twice_then_the_fallback_answers(
        double, session, reader) -> None:
    double.answer("primary-model", asks(("read", {"path": "src/long.py"}), ignores_tool_choice=True))  # repeats
    double.answer("fallback-model", findings(BUG))
    outcome = await review(double, session, reader,
                           provider_map=providers(double, ToolSettings(max_rounds=10, max_bytes=2000)))
    asked = double.requests_for("primary-model")
    assert [r.body["tool_choice"] for r in asked] == ["auto", "none", "none"]  # not 10 rounds
    assert outcome.status == "completed" and outcome.model == "local/fallback-model"
    assert outcome.attempts[0].error == ("local/primary-model: asked for lookups again after it was told to "
                                         "answer (1 round(s) of lookups)")

async def test_a_flood_of_calls_is_cut_before_it_is_sent_back(double, session, reader) -> None:
    # Twenty calls with 5 000-character arguments: 8 are read, each cut to 2 048 characters (so it
    # is refused as too long), 6 answered and 2 refused for the round; nothing floods the context.
    flood = asks(*[("search", '{"text": "' + "x" * 5000 + '"}')] * 20)
    double.answer("primary-model", flood, findings(BUG))
    outcome = await review(double, session, reader)
    assert outcome.status == "completed"
    echoed = double.requests[-1].body["messages"][2]["tool_calls"]
    assert len(echoed) == 8 and all(len(c["function"]["arguments"]) == 2048 for c in echoed)
    answers = [m["content"] for m in double.requests[-1].body["messages"] if m["role"] == "tool"]
    assert answers == ["Error: the arguments are longer than 2000 characters"] * 6 + [
        "Error: at most 6 lookups a round; ask again in the next round"] * 2

async def test_answers_stay_within_the_models_context(double, session, reader) -> None:
    # A budget far over the context: the context bounds the lookups, and every request fits it.
    reads = [asks(("read", {"path": "src/long.py", "start": 1 + 300 * n}), ignores_tool_choice=True) for n in range(2)]
    double.answer("primary-model", *reads, findings(BUG))
    tools = ToolSettings(max_rounds=10, max_bytes=400_000)
    outcome = await review(double, session, reader, provider_map=providers(double, tools, context=8000))
    assert outcome.status == "completed"
    room = (8000 - 4000) * 3
    for sent in double.requests:
        assert len(str(sent.body["messages"]).encode()) < room
    last = [m["content"] for m in double.requests[-1].body["messages"] if m["role"] == "tool"]
    assert any(text.startswith("Error: no more lookups: this review's limit (the model's context)") for text in last)


async def test_room_is_kept_for_lookups_when_the_diff_is_split(double, session, reader) -> None:
    body = "".join(f"+    line_{n} = {n}\n" for n in range(160))  # about 4.3 KB of diff each
    patches = [{"filename": f"src/m{i}.py", "status": "added", "patch": f"@@ -0,0 +1,160 @@\n{body}"}
               for i in range(2)]
    plan = make_plan(files=["src/m0.py", "src/m1.py"], rules=[], context=[], agentFiles=[])
    double.answer("primary-model", findings())
    small = providers(double, context=8000)
    await review(double, session, reader, plan=plan, provider_map=small, patches=patches, with_lookups=False)
    assert len(double.requests) == 1
    await review(double, session, reader, plan=plan, provider_map=small, patches=patches)
    assert len(double.requests) == 3  # with lookups offered, the same diff takes two requests


async def test_a_refusal_of_tools_is_remembered_and_tools_false_offers_none(double, session, reader) -> None:
    double.answer("primary-model", Reply(content=findings(BUG).content, rejects_tools=True))
    support = ToolSupport()
    first = await review(double, session, reader, support=support)
    second = await review(double, session, reader, support=support)
    assert ["tools" in r.body for r in double.requests] == [True, False, False]
    assert any("local/primary-model refused tools" in n for n in first.notes)
    assert not any("refused tools" in n for n in second.notes)
    await review(double, session, reader)  # another process (a fresh memory) offers them again
    assert ["tools" in r.body for r in double.requests[3:]] == [True, False]

    double.answer("primary-model", findings(BUG))
    off = providers(double, ToolSettings(enabled=False))
    await review(double, session, reader, provider_map=off)
    assert "tools" not in double.requests[-1].body


async def test_a_failed_review_still_names_the_lookups_it_made(double, session, reader) -> None:
    double.answer("primary-model", asks(("read", {"path": "src/app.py"})), failing(500, "overloaded"))
    double.answer("fallback-model", failing(503, "unavailable"))
    outcome = await review(double, session, reader)
    assert outcome.status == "failed"
    assert any(n.startswith("Lookups by local/primary-model: 1 in 1 round(s)") and
               "read(`src/app.py`) → lines 1-6 of 6 (head)" in n for n in outcome.notes)


async def test_no_index_means_no_tools(double, session, reader) -> None:
    double.answer("primary-model", findings(BUG))
    await review(double, session, reader, with_lookups=False)
    assert "tools" not in double.requests[-1].body


async def test_each_lookup_records_the_lines_its_answer_shows(reader) -> None:
    """What a verifier may cite (bot/engine/verify.py): exactly the numbered lines each answer
    showed, by file; a cut answer shows fewer, a refused one none."""
    view = lookups(reader)
    _, read = await view.lookup("read", '{"path": "src/long.py", "start": 3, "end": 6}', 4_000)
    assert read.lines == (("src/long.py", 3, 6),)
    _, head = await view.lookup("read", '{"path": "src/app.py"}', 4_000)
    assert head.lines == (("src/app.py", 1, 6),)  # a changed file, read at the head
    text, cut = await view.lookup("read", '{"path": "src/long.py"}', 600)
    assert cut.lines and cut.lines[0][:2] == ("src/long.py", 1)
    last = cut.lines[0][2]
    assert f"{last:>6} " in text and f"\n{last + 1:>6} " not in text  # the last line shown is the last cited
    _, found = await view.lookup("definition", '{"name": "compute"}', 4_000)
    assert found.lines == (("src/compute.py", 1, 3),)
    _, searched = await view.lookup("search", '{"text": "compute"}', 4_000)
    assert ("src/compute.py", 1, 1) in searched.lines and ("src/app.py", 5, 5) in searched.lines
    _, refused = await view.lookup("read", '{"path": "../x"}', 4_000)
    assert refused.lines == ()


async def test_a_verifier_may_cite_the_lines_its_lookups_showed_and_no_others(double, session, reader) -> None:
    """With verify: true, the verifier gets the review's lookups: a refutation citing lines a
    `read` showed counts; one citing lines of the same file it never read does not."""
    import json

    def verdict(line: int) -> Reply:
        return Reply(content=json.dumps({"verdict": "refuted", "reason": "step_1 handles it.",
                                         "evidence": [{"path": "src/long.py", "startLine": line, "endLine": line + 1}]}))

    first = finding(message="compute() may loop forever.")
    second = finding(startLine=5, endLine=5, severity="important", category="risk", message="value may be None.")
    double.answer("primary-model", findings(first, second))
    double.answer_when("primary-model", "lines 3-6:", verdict(4))  # after the read: cites what it read
    double.answer_when("primary-model", "lines 10-12:", verdict(50))  # cites lines it never read
    double.answer_when("primary-model", "compute() may loop forever.", asks(("read", {"path": "src/long.py",
                                                                                      "start": 3, "end": 6})))
    double.answer_when("primary-model", "value may be None.", asks(("read", {"path": "src/long.py",
                                                                             "start": 10, "end": 12})))
    provider = Provider("local", "openai", double.base_url, "env://CHAT_KEY", 10.0, "instance", verify=True)
    output = await review(double, session, reader, provider_map={"local": provider})
    assert [f.message for f in output.findings] == ["value may be None."]
    assert output.verification is not None and len(output.verification.refuted) == 1
    assert output.verification.unverified_reason == "it cited src/long.py:50-51, which it was not shown"
    assert double.violations == []
