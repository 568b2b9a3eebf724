"""`reviewer eval import aacr-bench`: tests/data/eval/aacr-bench.json (four pull requests in
AACR-Bench's published format, dataset/positive_samples.json) over repositories this test makes,
commit by commit, with fixed authors and dates, so that their commit ids are the ones the file
names. The corpus written is checked by `reviewer validate`, read back case by case (bases,
heads, items, descriptions, tags, what was mapped, collapsed and left out), and run through
`reviewer eval` against the chat double to see the report sliced by tag."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from pathlib import Path

import pytest

from bot.commands.cli import main
from bot.eval.corpus import load_corpus
from tests.support.chat_double import ChatDouble, findings

DATA = Path(__file__).resolve().parent.parent / "data" / "eval"
BENCH = DATA / "aacr-bench.json"
NEGATIVES = DATA / "aacr-bench-negatives.json"
KEY_VAR = "REVIEWER_EVAL_IMPORT_TEST_KEY"
API_KEY = "sk-eval-import-0a1b2c3d"

# Commits made the same everywhere: no user configuration, fixed names and dates.
HERMETIC = {"GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "Dev",
            "GIT_AUTHOR_EMAIL": "dev@example.com", "GIT_AUTHOR_DATE": "2024-01-01T00:00:00+0000",
            "GIT_COMMITTER_NAME": "Dev", "GIT_COMMITTER_EMAIL": "dev@example.com",
            "GIT_COMMITTER_DATE": "2024-01-01T00:00:00+0000"}

CART = "".join(f"def item_{n}(cart):\n    return cart[{n}]\n\n" for n in range(10))  # 30 lines, item_n at 3n+1
TAX = "".join(f"RATE_{n} = {n}\n" for n in range(1, 11))


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True,
                          env={**os.environ, **HERMETIC}).stdout.strip()


def commit(repo: Path, files: dict[str, str | None], message: str) -> str:
    for name, text in files.items():
        if text is None:
            git(repo, "rm", "-q", name)
            continue
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


def make_repositories(root: Path) -> dict[str, str]:
    """octo/shop (a checkout) and octo/lib (bare, `lib.git`): the commits the file names."""
    shop = root / "octo" / "shop"
    shop.mkdir(parents=True)
    git(shop, "init", "-q", "-b", "main")
    shas = {"shop-init": commit(shop, {"shop/cart.py": CART, "shop/tax.py": TAX, "shop/legacy.py": "OLD = 1\n"},
                                "init")}
    shas["shop-source"] = commit(shop, {"README.md": "# Shop\n"}, "docs")  # main moves on: the base is the merge base
    git(shop, "checkout", "-q", "-b", "pr7", shas["shop-init"])
    cart = CART.replace("def item_1(cart):\n    return cart[1]\n\n", "") \
               .replace("return cart[5]\n", "return cart[5] * 0\n") + "def discount(cart, rate):\n" \
               "    return [price * rate for price in cart]\n"
    shas["shop-pr7"] = commit(shop, {"shop/cart.py": cart, "shop/tax.py": None, "shop/taxes.py": "# taxes\n" + TAX,
                                     "shop/legacy.py": None}, "Apply discounts")
    git(shop, "checkout", "-q", "-b", "pr9", shas["shop-source"])
    shas["shop-pr9"] = commit(shop, {"shop/tax.py": TAX.replace("RATE_2 = 2", "RATE_2 = 20")}, "Raise a rate")
    git(shop, "checkout", "-q", "main")
    work = root / "lib-work"
    work.mkdir()
    git(work, "init", "-q", "-b", "main")
    shas["lib-init"] = commit(work, {"lib.go": "".join(f"var V{n} = {n}\n" for n in range(10))}, "init")
    shas["lib-pr3"] = commit(work, {"lib.go": "".join(f"var V{n} = {n * (n != 4)}\n" for n in range(10))}, "Zero V4")
    git(root, "clone", "-q", "--bare", str(work), str(root / "octo" / "lib.git"))
    return shas


@pytest.fixture
def repos(tmp_path: Path) -> Path:
    root = tmp_path / "repos"
    shas = make_repositories(root)
    named = {c for r in json.loads(BENCH.read_text()) for c in (r["source_commit"], r["target_commit"])}
    # The file names these very commits (and one that is missing on purpose).
    assert set(shas.values()) - {shas["shop-init"]} <= named, shas
    return root


def imported(capsys, repos: Path, out: Path, *extra: str) -> tuple[int, str, str]:
    code = main(["eval", "import", "aacr-bench", str(BENCH), "--repos", str(repos), "--out", str(out), *extra])
    stdout, stderr = capsys.readouterr()
    return code, stdout, stderr


def cases_of(out: Path) -> dict:
    corpus, problems = load_corpus((out / "corpus.yaml").read_text(), str(out / "corpus.yaml"))
    assert problems == [] and corpus is not None
    return {c.id: c for c in corpus.cases}


def test_the_full_profile_writes_a_corpus_validate_accepts(tmp_path, repos, capsys):
    out = tmp_path / "corpus"
    code, stdout, _ = imported(capsys, repos, out)
    assert code == 0, stdout
    assert main(["validate", str(out / "corpus.yaml")]) == 0
    capsys.readouterr()
    cases = cases_of(out)
    assert list(cases) == ["octo-shop-7", "octo-lib-3", "octo-shop-9"]
    shop = cases["octo-shop-7"]
    shas = {r["githubPrUrl"]: r for r in json.loads(BENCH.read_text())}
    record = shas["https://github.com/octo/shop/pull/7"]
    merge_base = git(repos / "octo" / "shop", "merge-base", record["source_commit"], record["target_commit"])
    assert (shop.repo, shop.base, shop.head) == ("../repos/octo/shop", merge_base, record["target_commit"])
    assert merge_base != record["source_commit"]  # main moved on after the branch was made
    assert shop.tags == ("language:python", "change:bug-fix")
    assert [(i.path, i.lines, i.tags) for i in shop.must_find] == [
        ("shop/cart.py", (3, 4), ("category:code-defect", "context:repo", "origin:human")),  # left side, removed
        ("shop/cart.py", (13, 15), ("category:maintainability-and-readability", "context:file", "origin:model")),
        ("shop/cart.py", (14, 14), ("category:code-defect", "context:diff", "origin:human", "origin:model")),
        ("shop/cart.py", (28, 29), ("category:security-vulnerability", "context:repo", "origin:model")),
        ("shop/taxes.py", (8, 8), ("category:maintainability-and-readability", "context:diff", "origin:human")),
    ]
    collapsed = shop.must_find[2]
    assert collapsed.descriptions == ("item_5 now returns 0 whatever the cart holds.",
                                      "Multiplying by 0 empties the price of item 5; the `* 0` looks left over "
                                      "from debugging.")
    assert shop.must_find[0].about == "item_1 is removed, but checkout still calls it."
    lib = cases["octo-lib-3"]
    assert lib.repo == "../repos/octo/lib.git" and lib.tags == ("language:go", "change:new-feature-additions")
    assert [(i.path, i.lines) for i in lib.must_find] == [("lib.go", (5, 5))]
    assert cases["octo-shop-9"].base == record["source_commit"]  # branched from main's tip: that is the merge base
    lines = stdout.splitlines()
    assert lines[0].startswith("reviewer eval import: 3 case(s) with 7 must-find item(s) written to ")
    assert ("  comments: 11 read, 11 in the profile, 7 item(s) after 1 duplicate(s) at the same lines were "
            "collapsed; 2 left-side comment(s) mapped to the head; 1 written with from_line after to_line") in lines
    assert "  left out: 1 left-side, its file is removed at the head" in lines
    assert "  left out: 1 right-side, its file is not in the head" in lines
    assert "  left out: 1 right-side, past the end of its file at the head" in lines
    assert "  2 pull request(s) skipped:" in lines
    missing = f"    octo-shop-8: {repos}/octo/shop has no commit {'ab' * 20} (git -C {repos}/octo/shop fetch origin "
    assert any(line.startswith(missing) and line.endswith("pull/8/head)") for line in lines)
    assert (f"    octo-gone-1: no repository at {repos}/octo/gone (git clone https://github.com/octo/gone.git "
            f"{repos}/octo/gone)") in lines
    header = (out / "corpus.yaml").read_text().split("cases:")[0]
    assert "# 2 pull request(s) skipped:" in header and "#   octo-gone-1: no repository at" in header


def test_the_strict_profile_keeps_what_people_wrote_at_diff_level(tmp_path, repos, capsys):
    out = tmp_path / "strict"
    code, stdout, _ = imported(capsys, repos, out, "--profile", "strict")
    assert code == 0
    cases = cases_of(out)
    assert list(cases) == ["octo-shop-7", "octo-shop-9"]
    assert [(i.path, i.lines, i.descriptions) for i in cases["octo-shop-7"].must_find] == [
        ("shop/cart.py", (14, 14), ("item_5 now returns 0 whatever the cart holds.",)),
        ("shop/taxes.py", (8, 8), ("RATE_7 moved with the rename; keep its name in the changelog.",)),
    ]
    assert all("origin:human" in i.tags and "context:diff" in i.tags for c in cases.values() for i in c.must_find)
    assert "    octo-lib-3: no comment in the strict profile" in stdout.splitlines()


def test_the_smoke_profile_takes_the_smallest_pull_request_of_each_language(tmp_path, repos, capsys):
    out = tmp_path / "smoke"
    code, _, _ = imported(capsys, repos, out, "--profile", "smoke")
    assert code == 0
    assert list(cases_of(out)) == ["octo-shop-7", "octo-lib-3"]  # Python: 12 changed lines beat 40


def test_rejected_comments_become_must_not_places_away_from_kept_ones(tmp_path, repos, capsys):
    out = tmp_path / "negatives"
    code, stdout, _ = imported(capsys, repos, out, "--negatives", str(NEGATIVES))
    assert code == 0
    shop = cases_of(out)["octo-shop-7"]
    [place] = shop.must_not  # the other rejected comment lies on a kept item's lines
    assert (place.path, place.lines, place.tags) == (
        "shop/cart.py", (20, 21), ("category:maintainability-and-readability", "context:diff", "origin:model"))
    assert place.about.startswith("a comment the benchmark's annotators rejected: Rename `item_7`")
    assert "  must-not places from rejected comments: 1" in stdout.splitlines()


def test_a_file_not_in_the_format_is_refused_with_each_place(tmp_path, repos, capsys):
    records = json.loads(BENCH.read_text())
    records[0]["comments"][1]["from_line"] = "14"
    del records[2]["target_commit"]
    records[3]["comments"][0]["side"] = "middle"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(records))
    code = main(["eval", "import", "aacr-bench", str(bad), "--repos", str(repos), "--out", str(tmp_path / "c")])
    err = capsys.readouterr().err.splitlines()
    assert code == 1 and not (tmp_path / "c").exists()
    assert err == [
        f"{bad}: type: `[0].comments[1].from_line`: must be an integer; got string '14'",
        f"{bad}: required: `[2]`: missing required property `target_commit`",
        f"{bad}: enum: `[3].comments[0].side`: must be one of left, right; got string 'middle'",
        f"reviewer eval import: the benchmark file {bad} is not in AACR-Bench's format (3 error(s))",
    ]


@pytest.mark.parametrize("content, message", [
    (None, "cannot read the benchmark file"),
    ("[{", "is not JSON"),
])
def test_an_unreadable_file_or_one_that_is_not_json_exits_2(tmp_path, repos, capsys, content, message):
    path = tmp_path / "bench.json"
    if content is not None:
        path.write_text(content)
    code = main(["eval", "import", "aacr-bench", str(path), "--repos", str(repos), "--out", str(tmp_path / "c")])
    assert code == 2 and message in capsys.readouterr().err


def test_nothing_to_write_exits_2_and_says_why(tmp_path, capsys):
    empty = tmp_path / "empty"
    empty.mkdir()
    code = main(["eval", "import", "aacr-bench", str(BENCH), "--repos", str(empty), "--out", str(tmp_path / "c")])
    err = capsys.readouterr().err
    assert code == 2 and "no case could be made from" in err and "octo-shop-7: no repository at" in err
    assert not (tmp_path / "c").exists()


def test_the_import_help_says_every_option_and_its_default(capsys):
    with pytest.raises(SystemExit) as done:
        main(["eval", "import", "aacr-bench", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert done.value.code == 0
    for option in ("--repos DIR", "--out CORPUS", "--profile {strict,full,smoke}", "--negatives FILE",
                   "(default: full)", "(default: none)", "strict keeps only the comments a person wrote at Diff"):
        assert option in text
    with pytest.raises(SystemExit) as done:
        main(["eval", "import", "other-bench", "x"])
    assert done.value.code == 2 and "invalid choice: 'other-bench'" in capsys.readouterr().err


@pytest.fixture
async def chat(monkeypatch):
    monkeypatch.setenv(KEY_VAR, API_KEY)
    double = await ChatDouble(api_key=API_KEY).start()
    yield double
    await double.close()


def at(path: str, first: int, last: int, message: str) -> dict:
    return {"path": path, "startLine": first, "endLine": last, "severity": "important", "category": "bug",
            "message": message}


async def test_the_report_slices_recall_and_precision_by_tag(tmp_path, repos, chat, capsys):
    out = tmp_path / "corpus"
    assert imported(capsys, repos, out)[0] == 0
    admin = tmp_path / "admin.yaml"
    admin.write_text(f"providers:\n  local:\n    type: openai\n    baseUrl: {chat.base_url}\n    apiKey: env://{KEY_VAR}\n"
                     "    timeout: 5\ndefaults:\n  models: {review: local/m1}\n  feedback: detailed\n")
    # octo-shop-7: the `* 0` (a human's and a model's item) and one finding about nothing known;
    # octo-shop-9 and octo-lib-3: nothing.
    chat.answer_when("m1", "discount", findings(at("shop/cart.py", 14, 14, "Multiplies by zero."),
                                                at("shop/cart.py", 24, 24, "Unrelated.")))
    chat.answer("m1", findings())
    code = await asyncio.to_thread(main, ["eval", str(out), "--admin-config", str(admin), "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 0
    tags = report["byTag"]
    assert [c["tags"] for c in report["cases"]] == [["language:python", "change:bug-fix"],
                                                    ["language:go", "change:new-feature-additions"],
                                                    ["language:python", "change:bug-fix"]]

    def figures(tag: str) -> tuple:
        s = tags[tag]
        return s["cases"], s["found"], s["items"], s["matched"], s["findings"]

    # The finding at line 14 matches the collapsed item (a person's and a model's) and the model's
    # File-level item at 13-15; the one at line 24 matches nothing.
    assert figures("origin:human") == (2, 1, 4, 1, 2)  # shop-7's three items, one found; shop-9's one, not
    assert figures("origin:model") == (2, 2, 4, 1, 2)  # shop-7's three, two found; lib-3's one, not
    assert figures("context:diff") == (2, 1, 3, 1, 2)
    assert figures("context:file") == (2, 1, 2, 1, 2)
    assert figures("context:repo") == (1, 0, 2, 0, 2)  # two items, neither found: both findings count against it
    assert figures("language:python") == (2, 2, 6, 1, 2)  # a case's tag takes in all of its items
    assert figures("language:go") == (1, 0, 1, 0, 0)
    assert tags["origin:human"]["recall"] == 0.25 and tags["origin:human"]["precision"] == 0.5
    assert tags["language:go"]["precision"] is None
    await asyncio.to_thread(main, ["eval", str(out), "--admin-config", str(admin)])
    text = capsys.readouterr().out
    assert "by tag:" in text
    assert any(line.split() == ["origin:human", "2", "0.25", "(1/4)", "0.50", "(1/2)", "–"] for line in text.splitlines())
