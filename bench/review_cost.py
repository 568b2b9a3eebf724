"""What a pull request's life costs: model calls, prompt bytes and comments posted, per event.

One life, replayed against the doubles (tests/support/github_double, tests/support/chat_double) with the real
server and pipeline: opened (40 files), labeled, a one-file push, a re-run of the check, a reply to
a finding. The model is scripted to find the same things again whenever it is asked (as a real
model mostly does), plus one new finding in the pushed file. The same life runs twice: with
incremental reviews (issue #15: review once, review what changed, never repeat a finding) and with
them off (every event reviews the whole pull request, as before), and the figures are printed side
by side, with the push's prompt as a share of the opening's full review.

Aims: 0 model calls and 0 comments for the label and the re-run; the push's prompt at most 25% of
a full review's; 0 duplicate comments over the whole life.

Then what lookups cost (issue #22): the opening review of a one-file change again, with the model
offered tools and a scripted policy — first the definition of a name the change uses and the
callers of a function it changes, then a file's first lines, then the findings — against the same
review with tools offered and none asked for, and with `tools: false` (the one-shot request). It
prints model calls, tool rounds, request bytes (every request's messages and tool definitions: a
round re-sends the conversation so far) and the bytes the lookups returned, with the ratios.
REVIEWER_BENCH_SHOW=1 prints what the lookups returned.
Aims: rounds within maxRounds, lookup bytes within maxBytes.

Last, what the quality levers cost (issue #38): the opening review of a one-file change whose
model finds five things (two nits), as it is, with `verify: true` (each finding at or above minor
checked in a call of its own: three calls, confirmed), and with the pull request's body saying
"Fixes #N" of an issue of about 3 KB with two comments. It prints model calls, request bytes and
GitHub calls, with the ratios. Aims: one verification call per finding at or above minor, none for
a nit; the issue's words within their budget (16,000 bytes); two GitHub calls for the issue (it and
its first comments; the one GraphQL query for GitHub's own closing references is made either way).

Usage: python bench/review_cost.py
"""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import sys
import tempfile
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run from a checkout without installing

from bench.webhooks import fresh_app_key  # noqa: E402

FILES = 40
KEY_VAR = "REVIEWER_BENCH_MODEL_KEY"
EVENTS = ("opened", "labeled", "push (1 file)", "re-run", "reply")


def module(index: int) -> str:
    """One changed file of the pull request: about 30 lines, 1 KB."""
    return "".join(f"def step_{index}_{n}(value):\n    return value * {n} + {index}\n" for n in range(15))


@dataclass
class Figures:
    calls: int = 0
    prompt_bytes: int = 0
    comments: int = 0


@dataclass
class Life:
    name: str
    events: dict[str, Figures] = field(default_factory=dict)
    duplicates: int = 0


async def finished(db: Path, delivery_id: str) -> None:
    """Wait (bounded) until the server is done with a delivery."""
    for _ in range(3000):
        with sqlite3.connect(db) as conn:
            row = conn.execute("SELECT state FROM deliveries WHERE delivery_id = ?", (delivery_id,)).fetchone()
        if row and row[0] in ("done", "ignored", "failed", "superseded"):
            return
        await asyncio.sleep(0.02)
    raise TimeoutError(f"delivery {delivery_id} did not finish")


async def live(incremental: bool) -> Life:
    from bot.pipeline import make_handler
    from tests.support.app_support import World, serving
    from tests.support.chat_double import ChatDouble, Reply, findings
    from tests.support.github_double import GitHubDouble
    from tests.support.review_support import admin_yaml, finding

    private, public = fresh_app_key()
    github, chat = GitHubDouble(), await ChatDouble(api_key="bench-key").start()
    await github.start()
    os.environ[KEY_VAR] = "bench-key"
    life = Life("incremental" if incremental else "incremental off")
    found = [finding(2, "important", "bug", f"step_{i}_0 ignores its value.", path=f"src/mod_{i}.py")
             for i in (0, 7, 21, 33)]
    try:
        app = github.add_app(public)
        with tempfile.TemporaryDirectory() as tmp:
            world = World(github, app, "", Path(tmp))
            world.repo = github.add_repo("octo-org/bench")
            world.installation = github.install(app, world.repo)
            world.repo.permissions["octocat"] = "write"
            admin = admin_yaml(chat).replace("REVIEWER_E2E_MODEL_KEY", KEY_VAR)
            async with serving(world, private, admin_yaml=admin,
                               handler_for=lambda ctx: make_handler(
                                   ctx.github, ctx.admin, ctx.http, ctx.settings.secrets_dir,
                                   stores=ctx.stores, incremental=incremental)):
                pr = world.pull({".reviewer.yaml": "feedback: detailed\n"},
                                {f"src/mod_{i}.py": module(i) for i in range(FILES)})
                db = world.tmp / "reviewer.db"

                async def event(name: str, kind: str, payload: dict) -> None:
                    asked, comments = len(chat.requests), _comments(world, pr)
                    delivery = str(uuid.uuid4())
                    status, _ = await world.deliver(kind, payload, delivery)
                    assert status == 202, status
                    await finished(db, delivery)
                    new = chat.requests[asked:]
                    life.events[name] = Figures(len(new), sum(_prompt_bytes(r.body) for r in new),
                                                _comments(world, pr) - comments)

                chat.answer("m1", findings(*found))
                await event("opened", "pull_request", github.payload("pull_request", "opened",
                                                                     installation=world.installation, pull=pr))
                pr.labels.append("ready")
                await event("labeled", "pull_request", github.payload("pull_request", "labeled",
                                                                      installation=world.installation, pull=pr))
                before = pr.head_sha
                world.repo.commit({"src/mod_7.py": module(7).replace("* 3 +", "* 30 +")}, branch=pr.head_ref)
                pushed = finding(8, "minor", "maintainability", "Name the 30.", path="src/mod_7.py")
                chat.answer("m1", findings(*found, pushed))
                await event("push (1 file)", "pull_request", github.payload(
                    "pull_request", "synchronize", installation=world.installation, pull=pr, before=before))
                run = max((r for r in world.runs(pr)), key=lambda r: r.id)
                await event("re-run", "check_run", github.payload("check_run", "rerequested",
                                                                  installation=world.installation, pull=pr,
                                                                  check_run=run))
                root = next(c for c in pr.review_comments if c.user == app.bot)
                chat.answer("m1", Reply(content="Because the value is multiplied away."))
                reply = pr.reply(root, "Why does it ignore the value?", "octocat")
                await event("reply", "pull_request_review_comment", github.payload(
                    "pull_request_review_comment", "created", installation=world.installation, pull=pr,
                    comment=reply))
                posted = Counter((c.path, c.body) for c in pr.review_comments if c.user == app.bot
                                 and c.in_reply_to_id is None)
                life.duplicates = sum(n - 1 for n in posted.values())
    finally:
        await chat.close()
        await github.close()
    if github.violations:
        raise SystemExit("requests GitHub's REST description refuses:\n" + "\n".join(github.violations))
    return life


def _prompt_bytes(body: dict) -> int:
    return sum(len(str(m.get("content", "")).encode()) for m in body.get("messages", []))


def _comments(world, pr) -> int:
    """Comments the app wrote: inline comments and replies, and issue comments other than its one
    summary (which is updated in place)."""
    inline = sum(1 for c in pr.review_comments if c.user == world.app.bot)
    issue = sum(1 for c in pr.comments if c.user == world.app.bot and "reviewer:summary" not in c.body)
    return inline + issue


def report(on: Life, off: Life) -> bool:
    print(f"One pull request's life ({FILES} files), {on.name} against {off.name}, in the same run:")
    print(f"  {'event':<15} {'model calls':>16} {'prompt bytes':>22} {'comments posted':>20}")
    for name in EVENTS:
        a, b = on.events[name], off.events[name]
        print(f"  {name:<15} {a.calls:>7} vs {b.calls:<7} {a.prompt_bytes:>10} vs {b.prompt_bytes:<10} "
              f"{a.comments:>8} vs {b.comments:<8}")
    total = [sum(getattr(life.events[n], k) for n in EVENTS) for life in (on, off) for k in ("calls", "prompt_bytes")]
    print(f"  {'whole life':<15} {total[0]:>7} vs {total[2]:<7} {total[1]:>10} vs {total[3]:<10}")
    share = on.events["push (1 file)"].prompt_bytes / max(1, on.events["opened"].prompt_bytes)
    print(f"push prompt / full review prompt: {share:.1%} (aim: at most 25%); "
          f"{off.name}: {off.events['push (1 file)'].prompt_bytes / max(1, off.events['opened'].prompt_bytes):.1%}")
    print(f"prompt bytes over the life: {total[1] / max(1, total[3]):.2f}x of {off.name}")
    print(f"duplicate comments over the life: {on.duplicates} ({off.name}: {off.duplicates}); aim: 0")
    quiet = all(on.events[n].calls == 0 and on.events[n].comments == 0 for n in ("labeled", "re-run"))
    print(f"label and re-run: {'0 model calls and 0 comments' if quiet else 'NOT quiet'} (aim: 0 and 0)")
    return quiet and share <= 0.25 and on.duplicates == 0


@dataclass
class Looked:
    calls: int = 0
    rounds: int = 0
    prompt_bytes: int = 0
    lookup_bytes: int = 0


MAX_ROUNDS, MAX_BYTES = 4, 24_000  # the defaults of providers.<name>.tools
POLICY = (  # what the scripted model asks, round by round, before it answers
    (("definition", {"name": "step_3_0", "path": "src/mod_7.py", "line": 3}),
     ("callers", {"name": "step_7_0", "path": "src/mod_7.py"})),
    (("read", {"path": "src/mod_3.py", "start": 1, "end": 30}),),
)


async def looked_up(tools: bool, policy: tuple = POLICY) -> Looked:
    """The opening review of a pull request whose changed file calls another module, with the
    model offered lookups (and following `policy`) or not."""
    from tests.support.app_support import World, serving
    from tests.support.chat_double import ChatDouble, asks, findings
    from tests.support.github_double import GitHubDouble
    from tests.support.review_support import admin_yaml, finding

    private, public = fresh_app_key()
    github, chat = GitHubDouble(), await ChatDouble(api_key="bench-key").start()
    await github.start()
    os.environ[KEY_VAR] = "bench-key"
    try:
        app = github.add_app(public)
        with tempfile.TemporaryDirectory() as tmp:
            world = World(github, app, "", Path(tmp))
            world.repo = github.add_repo("octo-org/bench-lookups")
            world.installation = github.install(app, world.repo)
            admin = admin_yaml(chat).replace("REVIEWER_E2E_MODEL_KEY", KEY_VAR)
            if not tools:
                admin = admin.replace("    timeout: 5\n", "    timeout: 5\n    tools: false\n")
            async with serving(world, private, admin_yaml=admin):
                changed = module(7).replace("return value * 0 + 7", "return step_3_0(value) * 0 + 7")
                changed = "from src.mod_3 import step_3_0\n" + changed
                users = {f"src/use_{n}.py": f"from src.mod_7 import step_7_0\n\ndef use_{n}(v):\n    return step_7_0(v)\n"
                         for n in range(3)}
                pr = world.pull({**{f"src/mod_{i}.py": module(i) for i in range(FILES)}, **users},
                                {"src/mod_7.py": changed})
                found = finding(4, "important", "bug", "step_7_0 ignores step_3_0's offset.", path="src/mod_7.py")
                chat.answer("m1", *(asks(*calls) for calls in policy), findings(found))
                delivery = str(uuid.uuid4())
                status, _ = await world.deliver("pull_request", github.payload(
                    "pull_request", "opened", installation=world.installation, pull=pr), delivery)
                assert status == 202, status
                await finished(world.tmp / "reviewer.db", delivery)
    finally:
        await chat.close()
        await github.close()
    if chat.violations or github.violations:
        raise SystemExit("violations:\n" + "\n".join([*chat.violations, *github.violations]))
    asked = chat.requests_for("m1")
    last = asked[-1].body["messages"] if asked else []
    if os.environ.get("REVIEWER_BENCH_SHOW"):
        print("\n\n".join(m["content"] for m in last if m.get("role") == "tool"))
    return Looked(len(asked), sum(1 for r in asked if r.body["messages"][-1].get("role") == "tool"),
                  sum(_prompt_bytes(r.body) + len(json.dumps(r.body.get("tools", [])).encode()) for r in asked),
                  sum(len(m["content"].encode()) for m in last if m.get("role") == "tool"))


def report_lookups(on: Looked, unused: Looked, off: Looked) -> bool:
    print(f"\nLookups on the opening review of a one-file change, in the same run: tools offered and used "
          f"({len(POLICY)} rounds scripted), offered and not used, and tools: false:")
    print(f"  {'':<14} {'used':>8} {'unused':>8} {'off':>8}   used/off  unused/off")
    for label, key in (("model calls", "calls"), ("tool rounds", "rounds"), ("request bytes", "prompt_bytes"),
                       ("lookup bytes", "lookup_bytes")):
        a, b, c = (getattr(x, key) for x in (on, unused, off))
        ratios = f"{a / c:>8.2f}x {b / c:>9.2f}x" if c else ""
        print(f"  {label:<14} {a:>8} {b:>8} {c:>8}   {ratios}")
    print(f"aims: rounds at most {MAX_ROUNDS} ({on.rounds}), lookup bytes at most {MAX_BYTES:,} ({on.lookup_bytes:,})")
    return on.rounds <= MAX_ROUNDS and on.lookup_bytes <= MAX_BYTES and off.rounds == unused.rounds == 0 \
        and off.calls == unused.calls == 1


@dataclass
class Levered:
    calls: int = 0
    request_bytes: int = 0
    github_calls: int = 0
    posted: int = 0


LEVERS = ("as it is", "verify: true", "Fixes #N")
ISSUE_TEXT = "".join(f"Step {n}: the ratio must stay defined when the count is {n} or empty.\n" for n in range(45))


async def levered(lever: str) -> Levered:
    """The opening review of a one-file change, with one of the quality levers (or none)."""
    from tests.support.app_support import World, serving
    from tests.support.chat_double import ChatDouble, Reply, findings
    from tests.support.github_double import GitHubDouble
    from tests.support.review_support import BUG, CALC_BASE, DOCS, HEAD_FILES, LEAK, NIT, admin_yaml, finding

    private, public = fresh_app_key()
    github, chat = GitHubDouble(), await ChatDouble(api_key="bench-key").start()
    await github.start()
    os.environ[KEY_VAR] = "bench-key"
    try:
        app = github.add_app(public)
        with tempfile.TemporaryDirectory() as tmp:
            world = World(github, app, "", Path(tmp))
            world.repo = github.add_repo("octo-org/bench-levers")
            world.installation = github.install(app, world.repo)
            admin = admin_yaml(chat).replace("REVIEWER_E2E_MODEL_KEY", KEY_VAR)
            if lever == "verify: true":
                admin = admin.replace("    timeout: 5\n", "    timeout: 5\n    verify: true\n")
            async with serving(world, private, admin_yaml=admin):
                issue = world.repo.open_issue(title="ratio on empty counts", body=ISSUE_TEXT)
                issue.comment("Seen in the dashboards too.", user="bob")
                issue.comment("Also when the count is negative.", user="carol")
                pr = world.pull({".reviewer.yaml": "feedback: detailed\n", "src/calc.py": CALC_BASE}, HEAD_FILES,
                                body=f"Adds ratio.\n\nFixes #{issue.number}" if lever == "Fixes #N" else "Adds ratio.")
                second_nit = finding(2, "nit", "style", "Blank line before def.")
                chat.answer("m1", findings(BUG, LEAK, DOCS, NIT, second_nit))
                chat.answer_when("m1", "You check one finding", Reply(content=json.dumps({
                    "verdict": "confirmed", "reason": "The lines show it.",
                    "evidence": [{"path": "src/calc.py", "startLine": 5, "endLine": 6}]})))
                before = len(github.calls) + len(github.graphql_calls)
                delivery = str(uuid.uuid4())
                status, _ = await world.deliver("pull_request", github.payload(
                    "pull_request", "opened", installation=world.installation, pull=pr), delivery)
                assert status == 202, status
                await finished(world.tmp / "reviewer.db", delivery)
                used = len(github.calls) + len(github.graphql_calls) - before
                posted = sum(len(r.comments) for r in pr.reviews if r.user == app.bot)
    finally:
        await chat.close()
        await github.close()
    if chat.violations or github.violations:
        raise SystemExit("violations:\n" + "\n".join([*chat.violations, *github.violations]))
    asked = chat.requests_for("m1")
    return Levered(len(asked), sum(_prompt_bytes(r.body) for r in asked), used, posted)


def report_levers(figures: dict[str, Levered]) -> bool:
    base = figures["as it is"]
    print("\nThe quality levers on the opening review of a one-file change (5 findings, 2 of them nits), in the "
          "same run:")
    print(f"  {'':<15}" + "".join(f"{name:>15}" for name in LEVERS) + "   verify/as is  Fixes/as is")
    for label, key in (("model calls", "calls"), ("request bytes", "request_bytes"),
                       ("GitHub calls", "github_calls"), ("comments", "posted")):
        values = [getattr(figures[name], key) for name in LEVERS]
        ratios = "".join(f"{v / values[0]:>13.2f}x" for v in values[1:]) if values[0] else ""
        print(f"  {label:<15}" + "".join(f"{v:>15,}" for v in values) + ratios)
    verify, fixes = figures["verify: true"], figures["Fixes #N"]
    print(f"aims: 3 verification calls ({verify.calls - base.calls}); the issue within 16,000 bytes "
          f"({fixes.request_bytes - base.request_bytes:,} more request bytes); 2 GitHub calls for the issue and its "
          f"comments ({fixes.github_calls - base.github_calls})")
    return verify.calls - base.calls == 3 and fixes.request_bytes - base.request_bytes < 16_000 + 2_000 \
        and fixes.github_calls - base.github_calls == 2  # the issue and its comments: the GraphQL query is in both


def main() -> int:
    on = asyncio.run(live(incremental=True))
    off = asyncio.run(live(incremental=False))
    life_ok = report(on, off)
    lookups_ok = report_lookups(asyncio.run(looked_up(tools=True)), asyncio.run(looked_up(tools=True, policy=())),
                                asyncio.run(looked_up(tools=False)))
    levers_ok = report_levers({lever: asyncio.run(levered(lever)) for lever in LEVERS})
    return 0 if life_ok and lookups_ok and levers_ok else 1


if __name__ == "__main__":
    sys.exit(main())
