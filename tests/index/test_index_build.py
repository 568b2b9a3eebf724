"""Building and updating an index from real git commits: renames, deletions, moves, ignore globs,
limits, binary files, and `enabled: false` deleting the index."""

from __future__ import annotations

import json
import sqlite3
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from bot.commands.cli import main
from bot.index.build import Entry, Limits, plan_update, stored_key, sync
from bot.index.gitsource import GitSnapshot
from bot.index.retrieve import ChangedFile, retrieve
from bot.index.store import IndexStore
from bot.store.index.sqlite import SqliteIndex, connect
from tests.plan.test_plan_cli import Repo


@pytest.fixture(params=["sqlite", "postgres"])
def make_store(request, tmp_path: Path) -> Iterator[Callable[[str], IndexStore]]:
    """Each store test runs on both backends; a repository key of its own keeps PostgreSQL runs apart."""
    if request.param == "sqlite":
        conn = connect(tmp_path / "index.sqlite3")
        yield lambda repo: SqliteIndex(conn, repo)
        conn.close()
        return
    from bot.store.index.postgres import PostgresIndex, connect_pg

    pg = connect_pg(request.getfixturevalue("pg_url"))
    run = uuid.uuid4().hex[:8]
    made: list[PostgresIndex] = []

    def factory(repo: str) -> IndexStore:
        made.append(PostgresIndex(pg, f"{run}/{repo}"))
        return made[-1]
    yield factory
    for store in made:
        store.drop()
    pg.close()

LIB = "def compute_total(items):\n    return sum(items)\n"
APP = "from lib import compute_total\n\n\ndef report(rows):\n    return compute_total(rows)\n"
OTHER = "def helper_value():\n    return 42\n"


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    repo = Repo(tmp_path / "repo")
    repo.commit("init", {"lib.py": LIB, "app.py": APP, "util/other.py": OTHER, "gone.py": "def doomed():\n    pass\n"})
    return repo


def head(repo: Repo) -> str:
    return repo.git("rev-parse", "HEAD").strip()


def test_update_reads_only_what_changed_and_follows_renames_deletes_and_moves(make_store, repo: Repo) -> None:
    store = make_store("acme/shop")
    first = sync(store, GitSnapshot(str(repo.path), head(repo)))
    assert (first.read, first.indexed, first.removed) == (4, 4, 0)

    repo.git("mv", "lib.py", "core.py")  # rename
    (repo.path / "pkg").mkdir()
    repo.git("mv", "util/other.py", "pkg/other.py")  # move
    repo.commit("rename, move, delete", {"gone.py": None})
    second = sync(store, GitSnapshot(str(repo.path), head(repo)))
    assert (second.read, second.removed, second.indexed) == (2, 3, 3)
    assert sorted(store.blobs()) == sorted(store.paths()) == ["app.py", "core.py", "pkg/other.py"]
    assert [loc.path for loc in store.definitions(["compute_total"], 10)] == ["core.py"]
    assert [loc.path for loc in store.definitions(["helper_value"], 10)] == ["pkg/other.py"]
    assert store.definitions(["doomed"], 10) == []
    assert store.search(["doomed"], 10) == []  # the word index forgot the deleted file
    assert store.search(["helper_value"], 10) == ["pkg/other.py"]
    assert store.commit() == head(repo)

    third = sync(store, GitSnapshot(str(repo.path), head(repo)))
    assert (third.read, third.removed, third.indexed) == (0, 0, 3)


def test_an_edit_replaces_the_old_symbols(make_store, repo: Repo) -> None:
    store = make_store("acme/shop")
    sync(store, GitSnapshot(str(repo.path), head(repo)))
    repo.commit("rename the function", {"lib.py": LIB.replace("compute_total", "grand_total")})
    report = sync(store, GitSnapshot(str(repo.path), head(repo)))
    assert report.read == 1
    assert store.definitions(["compute_total"], 10) == []
    assert [loc.path for loc in store.definitions(["grand_total"], 10)] == ["lib.py"]
    assert store.search(["compute_total"], 10) == ["app.py"]


def test_repositories_in_one_database_are_kept_apart(make_store, repo: Repo) -> None:
    one, two = make_store("acme/one"), make_store("acme/two")
    sync(one, GitSnapshot(str(repo.path), head(repo)))
    assert two.definitions(["compute_total"], 10) == [] and two.search(["compute_total"], 10) == []
    one.drop()
    assert one.blobs() == {} and one.commit() is None


def test_ignore_limits_and_binary_files_are_honoured_and_reported(make_store, repo: Repo) -> None:
    repo.commit("more", {"vendor/big.py": "def vendored():\n    pass\n", "huge.py": "x = 1\n" * 400,
                         "logo.png": "\x00PNG\x00data", "blob.data": "\x00\x01raw"})
    store = make_store("acme/shop")
    report = sync(store, GitSnapshot(str(repo.path), head(repo)), Limits(max_file_bytes=1000), ignore=["vendor/**"])
    skipped = dict(report.skipped)
    assert skipped["vendor/big.py"] == "ignored"
    assert skipped["huge.py"] == "larger than the 1000-byte file limit"
    assert skipped["logo.png"] == "binary"  # by its name, never read
    assert skipped["blob.data"] == "binary"  # by its content
    assert report.read == 5 and report.indexed == 4  # the four source files and blob.data
    assert store.definitions(["vendored"], 10) == []
    assert "skipped" in report.line() and "1 ignored" in report.line()
    assert store.report()["skippedReasons"]["ignored"] == 1


def test_retrieval_is_the_same_on_every_store(make_store, repo: Repo) -> None:
    store = make_store("acme/shop")
    sync(store, GitSnapshot(str(repo.path), head(repo)))
    new = "from util.other import helper_value\n\n\ndef fresh():\n    return helper_value()\n"
    changes = [ChangedFile("lib.py", LIB.replace("sum(items)", "sum(items) or 0"),
                           ((2, "    return sum(items) or 0"),), (2,)),
               ChangedFile("new.py", new, tuple(enumerate(new.splitlines(), start=1)), (1, 2, 3, 4, 5))]
    found = retrieve(store, changes, 10_000)
    assert [(p.kind, p.path, p.start, p.end, p.symbol, p.reason) for p in found.pieces] == [
        ("definition", "util/other.py", 1, 2, "helper_value", "helper_value is used on new.py:5"),
        ("caller", "app.py", 4, 5, "report", "uses compute_total, whose definition changed at lib.py:2"),
    ]
    assert found.pieces[1].text == "def report(rows):\n    return compute_total(rows)"
    assert found.summary().startswith("Repository index: 1 definition(s), 1 caller(s), 0 related piece(s)")


def test_file_count_and_repository_size_limits_take_files_in_path_order() -> None:
    entries = [Entry(f"f{i}.py", f"b{i}", 100) for i in range(5)]
    by_count = plan_update({}, entries, Limits(max_files=2))
    assert [e.path for e in by_count.read] == ["f0.py", "f1.py"]
    assert by_count.skipped[0] == ("f2.py", "past the 2-file limit")
    by_size = plan_update({"f4.py": stored_key("b4")}, entries, Limits(max_repo_bytes=250))
    assert [e.path for e in by_size.read] == ["f0.py", "f1.py"]
    assert by_size.remove == ("f4.py",)  # indexed before, now over the limit: taken out
    assert ("f2.py", "past the 250-byte repository limit") in by_size.skipped


def test_files_an_older_reader_parsed_are_read_again_and_the_rest_kept() -> None:
    """An index built before an upgrade of the parser holds what the older parser saw of each blob:
    every such file is read again at the next update, though no push changed it."""
    entries = [Entry("old.py", "b1", 100), Entry("new.py", "b2", 100), Entry("changed.py", "b3", 100)]
    stored = {"old.py": "b1", "new.py": stored_key("b2"), "changed.py": stored_key("b0")}
    plan = plan_update(stored, entries, Limits())
    assert sorted(e.path for e in plan.read) == ["changed.py", "old.py"] and plan.kept == 1


def test_enabled_false_deletes_the_checkouts_index(capsys, repo: Repo) -> None:
    repo.git("checkout", "-q", "-b", "feature")
    repo.commit("call it", {"app.py": APP.replace("rows", "entries")})
    assert main(["context", "--repo", str(repo.path), "--base", "main", "--format", "json"]) == 0
    first = json.loads(capsys.readouterr().out)
    assert first["enabled"] and first["index"]["indexed"] == 4 and first["context"]
    database = repo.path / ".git" / "reviewer" / "index.sqlite3"
    assert sqlite3.connect(database).execute("SELECT count(*) FROM index_files").fetchone()[0] == 4

    repo.git("checkout", "-q", "main")
    repo.commit("turn it off", {".reviewer.yaml": "enabled: false\n"})
    repo.git("checkout", "-q", "feature")
    repo.git("rebase", "-q", "main")
    assert main(["context", "--repo", str(repo.path), "--base", "main"]) == 0
    out = capsys.readouterr().out
    assert "indexing is disabled (enabled: false); the index was deleted" in out
    assert "0 definition(s)" in out
    conn = sqlite3.connect(database)
    assert conn.execute("SELECT count(*) FROM index_files").fetchone()[0] == 0
    assert conn.execute("SELECT count(*) FROM index_defs").fetchone()[0] == 0
    assert conn.execute("SELECT count(*) FROM index_repos").fetchone()[0] == 0


def test_context_reports_git_errors_without_a_traceback(capsys, tmp_path: Path) -> None:
    assert main(["context", "--repo", str(tmp_path / "nowhere")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("reviewer context: ") and "no such directory" in err and "Traceback" not in err


def test_context_reports_an_unusable_index_without_a_traceback(capsys, repo: Repo) -> None:
    # the store's error (bot.store.model.StoreError), whatever the driver said, reaches the command
    repo.git("checkout", "-q", "-b", "feature")
    repo.commit("call it", {"app.py": APP.replace("rows", "entries")})
    database = repo.path / ".git" / "reviewer" / "index.sqlite3"
    database.parent.mkdir(parents=True, exist_ok=True)
    database.write_bytes(b"not a database, though named like one" * 100)
    assert main(["context", "--repo", str(repo.path), "--base", "main"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"reviewer context: the index under {repo.path}/.git/reviewer cannot be used: ")
    assert "not a database" in err and "Traceback" not in err


def test_context_reads_paths_with_spaces_quotes_and_accents(capsys, repo: Repo) -> None:
    repo.git("checkout", "-q", "-b", "odd")
    calls = {"my app.py": "compute_total", 'say "hi".py': "helper_value", "ünï.py": "doomed"}
    repo.commit("odd names", {name: f"def caller():\n    return {function}()\n" for name, function in calls.items()})
    assert main(["context", "--repo", str(repo.path), "--base", "main", "--format", "json"]) == 0
    result = json.loads(capsys.readouterr().out)
    reasons = sorted(c["reason"] for c in result["context"] if c["kind"] == "definition")
    assert reasons == sorted(f"{function} is used on {name}:2" for name, function in calls.items())


def test_search_takes_hostile_words_as_plain_text(make_store, repo: Repo) -> None:
    store = make_store("acme/shop")
    sync(store, GitSnapshot(str(repo.path), head(repo)))
    for words in (['"', "NEAR(", "a OR b", "*", "'; DROP TABLE index_files; --", "compute_total\0"], []):
        assert store.search(words, 10) == []
    assert store.search(["OR", "compute_total"], 10)[0] in ("app.py", "lib.py")


def test_context_names_a_ref_that_does_not_exist(capsys, repo: Repo) -> None:
    assert main(["context", "--repo", str(repo.path), "--base", "no-such-branch"]) == 2
    err = capsys.readouterr().err
    assert err == f"reviewer context: 'no-such-branch' does not name a commit in {repo.path}\n"


def test_retrieval_keeps_within_its_budget_and_counts_what_it_left_out(make_store, repo: Repo) -> None:
    store = make_store("acme/shop")
    sync(store, GitSnapshot(str(repo.path), head(repo)))
    new = "def fresh():\n    return helper_value() + compute_total([]) + doomed()\n"
    changes = [ChangedFile("new.py", new, tuple(enumerate(new.splitlines(), start=1)), (1, 2))]
    everything = retrieve(store, changes, 10_000)
    assert [p.kind for p in everything.pieces] == ["definition"] * 3 + ["related"] and everything.left_out == 0
    tight = retrieve(store, changes, everything.used - 1)
    assert tight.used <= everything.used - 1
    assert len(tight.pieces) == 3 and tight.left_out == 1
    assert tight.summary().endswith("; 1 more left out for the budget")
    nothing = retrieve(store, changes, 0)
    assert nothing.pieces == [] and nothing.left_out == 4


def test_a_blob_the_clone_lacks_is_left_out_and_the_rest_is_indexed(tmp_path: Path, repo: Repo) -> None:
    """A partial or damaged clone: git lists the missing blob's size as BAD; the index is built
    from the files it can read instead of stopping at the listing."""
    repo.commit("a picture", {"docs/tutorial.gif": "GIF89a" + "x" * 200})
    blob = repo.git("rev-parse", "HEAD:docs/tutorial.gif").strip()
    (repo.path / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    store = SqliteIndex(connect(tmp_path / "index.sqlite3"), "acme/shop")
    built = sync(store, GitSnapshot(str(repo.path), head(repo)))
    assert built.indexed == 4 and "docs/tutorial.gif" not in store.paths()
    assert [loc.path for loc in store.definitions(["compute_total"], 10)] == ["lib.py"]
