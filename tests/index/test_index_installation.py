"""Installation builds the repository index (issue #16): `installation.created` and
`installation_repositories.added` index each added repository's default branch, one repository
at a time per installation; removed repositories and an uninstalled app lose their index;
`enabled: false` on the default branch builds nothing. Webhook → server → GitHub double."""

from __future__ import annotations

import sqlite3

import aiohttp
import pytest

from bot.github import GitHubApp
from bot.pipeline.index import RepositoryIndexes
from bot.pipeline.installation import index_installation, repository_changes
from bot.store.index import sqlite_stores
from bot.store.index.sqlite import SqliteIndex, connect
from tests.index.test_index_e2e import CHECKOUT_BASE, CHECKOUT_HEAD, PRICING, prompt
from tests.support.chat_double import ChatDouble, findings
from tests.support.review_support import PRIMARY, reviewed, reviewing_app
from tests.support.server_support import wait_for

pytestmark = pytest.mark.usefixtures("no_key_in_logs")  # the shared fixtures of tests/conftest.py

UTIL = "def helper(x):\n    return x * 2\n"


def store(tmp_path, repo: str) -> SqliteIndex:
    return SqliteIndex(connect(tmp_path / "reviewer-index.sqlite3"), repo)


async def finished(tmp_path, delivery_id: str) -> None:
    async def done():
        row = sqlite3.connect(tmp_path / "reviewer.db").execute(
            "SELECT state FROM deliveries WHERE delivery_id = ?", (delivery_id,)).fetchone()
        return row is not None and row[0] in ("done", "failed")
    await wait_for(done)
    row = sqlite3.connect(tmp_path / "reviewer.db").execute(
        "SELECT state, error FROM deliveries WHERE delivery_id = ?", (delivery_id,)).fetchone()
    assert row == ("done", None)


async def test_an_installation_of_two_repositories_builds_both_indexes(tmp_path, github, github_app,
                                                                        app_private_key, chat: ChatDouble) -> None:
    chat.answer(PRIMARY, findings())
    async with reviewing_app(tmp_path, github, github_app, app_private_key, chat) as world:
        other = github.add_repo("octo-org/other")
        other.commit({"lib/util.py": UTIL})
        world.repo.commit({"src/pricing.py": PRICING, "src/checkout.py": CHECKOUT_BASE})
        world.installation.repositories.add(other.full_name)
        payload = github.payload("installation", "created", installation=world.installation)
        assert (await world.deliver("installation", payload, "d-created"))[0] == 202
        await finished(tmp_path, "d-created")

        assert [d.path for d in store(tmp_path, "octo-org/example").definitions(["apply_discount"], 5)] \
            == ["src/pricing.py"]
        assert [d.path for d in store(tmp_path, "octo-org/other").definitions(["helper"], 5)] == ["lib/util.py"]
        # One repository at a time: every read of the first comes before any read of the second.
        reads = [c.path.split("/")[3] for c in github.calls
                 if c.route == "GET /repos/{owner}/{repo}/contents/{path}"]
        assert reads == sorted(reads) and set(reads) == {"example", "other"}

        # A review then finds the definition in the index, with no push in between.
        pr = world.pull({"src/pricing.py": PRICING, "src/checkout.py": CHECKOUT_BASE},
                        {"src/checkout.py": CHECKOUT_HEAD})
        await reviewed(world, pr)
        assert "definition `apply_discount`" in prompt(chat)

        # Removed repositories and an uninstalled app keep no copy of the source.
        removed = github.payload("installation_repositories", "added", installation=world.installation)
        removed["action"] = "removed"  # GitHub's examples hold no `removed`: the `added` one, turned
        removed["repositories_removed"], removed["repositories_added"] = removed["repositories_added"][1:], []
        assert (await world.deliver("installation_repositories", removed, "d-removed"))[0] == 202
        await finished(tmp_path, "d-removed")
        assert store(tmp_path, "octo-org/other").commit() is None
        assert store(tmp_path, "octo-org/example").commit() is not None
        deleted = {**github.payload("installation", "created", installation=world.installation),
                   "action": "deleted"}
        assert (await world.deliver("installation", deleted, "d-deleted"))[0] == 202
        await finished(tmp_path, "d-deleted")
        assert store(tmp_path, "octo-org/example").commit() is None
        assert sqlite3.connect(tmp_path / "reviewer-index.sqlite3").execute(
            "SELECT count(*) FROM index_files").fetchone()[0] == 0


async def test_enabled_false_builds_nothing_on_installation(tmp_path, github, github_app, app_private_key,
                                                            chat: ChatDouble) -> None:
    async with reviewing_app(tmp_path, github, github_app, app_private_key, chat) as world:
        world.repo.commit({".reviewer.yaml": "enabled: false\n", "src/pricing.py": PRICING})
        payload = github.payload("installation_repositories", "added", installation=world.installation)
        assert (await world.deliver("installation_repositories", payload, "d-added"))[0] == 202
        await finished(tmp_path, "d-added")
        assert store(tmp_path, "octo-org/example").commit() is None
        assert github.count("GET /repos/{owner}/{repo}/contents/{path}") == 1  # .reviewer.yaml alone


async def test_an_installations_builds_are_paced_one_bounded_update_at_a_time(tmp_path, github, github_app,
                                                                               app_private_key) -> None:
    repos = [github.add_repo(f"octo-org/big-{n}") for n in range(2)]
    for n, repo in enumerate(repos):
        repo.commit({f"src/m{i}.py": f"def f{n}_{i}():\n    return {i}\n" for i in range(5)})
    installation = github.install(github_app, *repos)
    indexes = RepositoryIndexes(sqlite_stores(str(tmp_path / "paced.sqlite3")), reads_per_update=2)
    async with aiohttp.ClientSession() as session:
        app = GitHubApp(session, app_id=github_app.id, private_key=app_private_key, base_url=github.url)
        changes = repository_changes("installation", "created", {"repositories": [
            {"full_name": r.full_name} for r in repos]})
        await index_installation(indexes, lambda: app.installation(installation.id), None, changes)
    for repo in repos:
        report = SqliteIndex(connect(tmp_path / "paced.sqlite3"), repo.full_name).report()
        assert report is not None and (report["indexed"], report["pending"]) == (5, 0)
    # Each repository: one tree for its configuration, then three updates (2 + 2 + 1 reads), each a tree.
    trees = [c.path.split("/")[3] for c in github.calls if c.route == "GET /repos/{owner}/{repo}/git/trees/{tree_sha}"]
    assert trees == ["big-0"] * 4 + ["big-1"] * 4
    assert github.count("GET /repos/{owner}/{repo}/contents/{path}") == 10  # every file read once
