"""The repository index on PostgreSQL, where several processes share one database: two builds of
one repository take turns, an open build does not stall other repositories' retrieval, and an
error of the store never stops a review (it goes on without the index)."""

from __future__ import annotations

import asyncio
import logging
import uuid

import aiohttp
import psycopg

from bot.github import GitHubApp
from bot.pipeline.index import RepositoryIndexes
from bot.store.index import postgres_stores
from bot.store.index.postgres import PostgresIndex, connect_pg
from tests.index.test_index_e2e import CHECKOUT_BASE, CHECKOUT_HEAD, PRICING
from tests.support.app_support import running_app
from tests.support.chat_double import findings
from tests.support.review_support import API_KEY, KEY_VAR, PRIMARY, admin_yaml, reviewed, run_text
from tests.support.server_support import wait_for


async def test_two_processes_updating_one_repository_take_turns(pg_url, github, github_app,
                                                                 app_private_key) -> None:
    repo = github.add_repo(f"octo-org/shared-{uuid.uuid4().hex[:8]}")
    files = {f"src/m{i}.py": "".join(f"def f{i}_{j}(x):\n    return x + {j}\n\n" for j in range(40))
             for i in range(150)}
    commit = repo.commit(files)
    installation = github.install(github_app, repo)
    # Two servers' indexes (each with its own in-process lock), one database.
    first, second = (RepositoryIndexes(postgres_stores(pg_url)) for _ in range(2))
    async with aiohttp.ClientSession() as session:
        app = GitHubApp(session, app_id=github_app.id, private_key=app_private_key, base_url=github.url)
        gh = app.installation(installation.id)
        reports = await asyncio.gather(first.update(gh, repo.full_name, commit, []),
                                       second.update(gh, repo.full_name, commit, []))
    assert sorted(r.read for r in reports) == [0, 150]  # the second found the first's work done
    with connect_pg(pg_url) as conn:
        store = PostgresIndex(conn, repo.full_name)
        assert len(store.blobs()) == 150 and store.commit() == commit
        assert sorted(store.paths()) == sorted(store.blobs())


async def test_an_open_build_does_not_stall_other_repositories(pg_url) -> None:
    indexes = RepositoryIndexes(postgres_stores(pg_url))
    await indexes.retrieve("octo-org/a", {}, {}, 100)  # the first open migrates: the tables exist
    with psycopg.connect(pg_url, autocommit=True) as admin:
        name = admin.execute("SELECT current_database()").fetchone()[0]
        admin.execute(f'ALTER DATABASE "{name}" SET lock_timeout = \'1s\'')
        try:
            with psycopg.connect(pg_url) as build:  # a large build, still writing
                build.execute("INSERT INTO index_files (repo, path, blob, size, body) "
                              "VALUES ('octo-org/big', 'a.py', 'b', 1, 'x = 1')")
                retrieval = await indexes.retrieve("octo-org/b", {}, {}, 100)
                assert retrieval.pieces == []
                build.rollback()
        finally:
            admin.execute(f'ALTER DATABASE "{name}" RESET lock_timeout')


async def test_a_store_error_on_postgresql_does_not_stop_the_review(pg_url, tmp_path, github, github_app,
                                                                    app_private_key, chat, monkeypatch,
                                                                    caplog) -> None:
    monkeypatch.setenv(KEY_VAR, API_KEY)
    caplog.set_level(logging.INFO)
    chat.answer(PRIMARY, findings())
    with connect_pg(pg_url) as conn:  # a broken index table: every read of it fails
        conn.execute("ALTER TABLE index_files RENAME COLUMN blob TO blob_gone")
        conn.commit()
    async with running_app(tmp_path, github, github_app, app_private_key, admin_yaml=admin_yaml(chat),
                           REVIEWER_DATABASE_URL=pg_url) as world:
        pr = world.pull({"src/pricing.py": PRICING, "src/checkout.py": CHECKOUT_BASE},
                        {"src/checkout.py": CHECKOUT_HEAD})
        run = await reviewed(world, pr)
    assert run.conclusion == "success", run_text(run)
    assert "the repository index of octo-org/example was not used" in caplog.text


async def test_an_installation_builds_the_index_on_postgresql(pg_url, tmp_path, github, github_app,
                                                              app_private_key, chat) -> None:
    async with running_app(tmp_path, github, github_app, app_private_key, admin_yaml=admin_yaml(chat),
                           REVIEWER_DATABASE_URL=pg_url) as world:
        world.repo.commit({"src/pricing.py": PRICING, "src/checkout.py": CHECKOUT_BASE})
        payload = github.payload("installation", "created", installation=world.installation)
        assert (await world.deliver("installation", payload))[0] == 202

        def located(name: str) -> list[str]:
            with connect_pg(pg_url) as conn:
                return [d.path for d in PostgresIndex(conn, "octo-org/example").definitions([name], 5)]

        async def built():
            return located("apply_discount")
        assert await wait_for(built) == ["src/pricing.py"]
        removed = {**payload, "action": "deleted"}
        assert (await world.deliver("installation", removed))[0] == 202

        async def gone():
            return not located("apply_discount")
        await wait_for(gone)
