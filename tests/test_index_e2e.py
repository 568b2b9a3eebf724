"""The repository index end to end: a signed webhook → the server's pipeline builds the index of
the default branch from the GitHub double (tree + contents reads) → the prompt the chat double
receives carries the definition that a changed line calls, labelled and explained; the check run
names what the index added. A later base is indexed incrementally; `enabled: false` deletes it."""

from __future__ import annotations

import json
import logging
import sqlite3
from collections.abc import AsyncIterator

import pytest

from tests.app_support import running_app
from tests.chat_double import ChatDouble, findings
from tests.review_support import API_KEY, KEY_VAR, PRIMARY, admin_yaml, reviewed, reviewing_app, run_text

PRICING = ("RATE_LIMIT = 3\n"                       # 1
           "\n"                                     # 2
           "def apply_discount(total, rate):\n"     # 3
           "    if rate > 0.5:\n"                   # 4
           "        raise ValueError(rate)\n"       # 5
           "    return total * (1 - rate)\n")       # 6
CHECKOUT_BASE = "def checkout(cart):\n    return sum(cart)\n"
CHECKOUT_HEAD = ("from src.pricing import apply_discount\n"
                 "\n"
                 "def checkout(cart):\n"
                 "    return apply_discount(sum(cart), 0.9)\n")  # 4: the changed line that calls it


@pytest.fixture
async def chat() -> AsyncIterator[ChatDouble]:
    double = await ChatDouble(api_key=API_KEY).start()
    try:
        yield double
    finally:
        await double.close()


@pytest.fixture(autouse=True)
def model_key(monkeypatch, caplog):
    monkeypatch.setenv(KEY_VAR, API_KEY)
    caplog.set_level(logging.DEBUG)
    yield
    assert API_KEY not in caplog.text


def prompt(chat: ChatDouble, index: int = -1) -> str:
    return chat.requests_for(PRIMARY)[index].body["messages"][1]["content"]


def index_rows(tmp_path, table: str) -> int:
    conn = sqlite3.connect(tmp_path / "reviewer-index.sqlite3")
    return conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


async def test_the_prompt_carries_the_definition_a_changed_line_calls(tmp_path, github, github_app,
                                                                       app_private_key, chat) -> None:
    chat.answer(PRIMARY, findings(), findings())
    async with reviewing_app(tmp_path, github, github_app, app_private_key, chat) as world:
        pr = world.pull({"src/pricing.py": PRICING, "src/checkout.py": CHECKOUT_BASE},
                        {"src/checkout.py": CHECKOUT_HEAD})
        run = await reviewed(world, pr)
        assert run.conclusion == "success", run_text(run)
        text = prompt(chat)
        assert "## Code the change depends on (from the repository index)" in text
        assert ("#### src/pricing.py:3-6 — definition `apply_discount`: apply_discount is used on "
                "src/checkout.py:1") in text  # its first use among the changed lines: the import
        assert "     5         raise ValueError(rate)" in text  # numbered lines of the definition
        assert "RATE_LIMIT" not in text  # only the definition, not the whole file
        assert "Repository index: 1 definition(s), 0 caller(s)" in run_text(run)

        # The base moves on: the next review reads only the changed blob, and sees the new text.
        contents = "GET /repos/{owner}/{repo}/contents/{path}"
        before = github.count(contents)
        pr2 = world.pull({"src/pricing.py": PRICING.replace("0.5", "0.75"), "src/checkout.py": CHECKOUT_BASE},
                         {"src/checkout.py": CHECKOUT_HEAD})
        await reviewed(world, pr2)
        report = json.loads(sqlite3.connect(tmp_path / "reviewer-index.sqlite3").execute(
            "SELECT report FROM index_repos").fetchone()[0])
        assert report["read"] == 1 and report["removed"] == 0
        assert github.count(contents) - before == 2  # that blob, and the changed file at the head
        assert "    if rate > 0.75:" in prompt(chat)


async def test_enabled_false_deletes_the_index(tmp_path, github, github_app, app_private_key, chat) -> None:
    chat.answer(PRIMARY, findings())
    async with reviewing_app(tmp_path, github, github_app, app_private_key, chat) as world:
        pr = world.pull({"src/pricing.py": PRICING, "src/checkout.py": CHECKOUT_BASE},
                        {"src/checkout.py": CHECKOUT_HEAD})
        await reviewed(world, pr)
        assert index_rows(tmp_path, "index_files") > 0
        off = world.pull({".reviewer.yaml": "enabled: false\n", "src/pricing.py": PRICING,
                          "src/checkout.py": CHECKOUT_BASE}, {"src/checkout.py": CHECKOUT_HEAD})
        run = await reviewed(world, off)
        assert run.conclusion == "neutral"
        assert index_rows(tmp_path, "index_files") == 0
        assert index_rows(tmp_path, "index_defs") == 0
        assert index_rows(tmp_path, "index_repos") == 0


async def test_the_admin_files_limits_keep_large_files_out(tmp_path, github, github_app, app_private_key,
                                                            chat) -> None:
    chat.answer(PRIMARY, findings())
    admin = admin_yaml(chat) + "index:\n  maxFileBytes: 100\n"
    async with running_app(tmp_path, github, github_app, app_private_key, admin_yaml=admin) as world:
        pr = world.pull({"src/pricing.py": PRICING, "src/checkout.py": CHECKOUT_BASE},
                        {"src/checkout.py": CHECKOUT_HEAD})
        await reviewed(world, pr)
        assert "apply_discount(total, rate)" not in prompt(chat)  # pricing.py is over 100 bytes
        report = json.loads(sqlite3.connect(tmp_path / "reviewer-index.sqlite3").execute(
            "SELECT report FROM index_repos").fetchone()[0])
        assert report["skippedReasons"] == {"larger than the 100-byte file limit": 1}
