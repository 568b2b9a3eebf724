"""What a model's lookups read (bot/index/queries.py), over an index built from a real git commit
and a pull request's head: changed files at the head and never from the index, the rest from the
index; definitions resolved from a use as retrieval resolves them; callers primary sources
first; ignored and deleted files never shown; no symbolic link followed; answers within their
bytes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bot.index.build import sync
from bot.index.gitdiff import diff_entries
from bot.index.gitsource import GitSnapshot
from bot.index.queries import MAX_READ_LINES, HeadView, Unanswerable, answer
from bot.store.index.sqlite import SqliteIndex, connect
from tests.plan.test_plan_cli import Repo

PRICING = ("RATE_LIMIT = 3\n"
           "\n"
           "def apply_discount(total, rate):\n"
           "    if rate > 0.5:\n"
           "        raise ValueError(rate)\n"
           "    return total * (1 - rate)\n")
LEGACY = "def apply_discount(x):\n    return x\n\n\nclass Cart:\n    def total(self):\n        return 0\n"
ORDERS = ("from src.pricing import apply_discount\n\n\n"
          "def order_total(order):\n    return apply_discount(order.total, order.rate)\n")
TEST = "from src.pricing import apply_discount\n\n\ndef test_discount():\n    assert apply_discount(10, 0) == 10\n"
CHECKOUT_BASE = "def checkout(cart):\n    return sum(cart)\n"
CHECKOUT_HEAD = ("from src.pricing import apply_discount\n"
                 "from src.fresh import fresh_helper\n"
                 "\n"
                 "def checkout(cart):\n"
                 "    return apply_discount(fresh_helper(cart), 0.2)\n")
FRESH = "def fresh_helper(cart):\n    return sum(cart)\n"
VENDOR = "def apply_discount(secret):\n    return 'vendored apply_discount'\n"
LONG = "".join(f"line_{n} = {n}\n" for n in range(1, 501))


@pytest.fixture
def store(tmp_path: Path):
    repo = Repo(tmp_path / "repo")
    repo.commit("base", {"src/pricing.py": PRICING, "src/legacy.py": LEGACY, "src/orders.py": ORDERS,
                         "tests/test_pricing.py": TEST, "src/checkout.py": CHECKOUT_BASE,
                         "src/gone.py": "def gone():\n    pass\n", "vendor/lib.py": "x = 1\n", "long.py": LONG})
    os.symlink("/etc/passwd", repo.path / "link")
    os.symlink("src/pricing.py", repo.path / "inside")
    repo.git("add", "-A")
    repo.git("commit", "-q", "-m", "links")
    conn = connect(tmp_path / "index.sqlite3")
    index = SqliteIndex(conn, "octo/shop")
    sync(index, GitSnapshot(str(repo.path), repo.git("rev-parse", "HEAD").strip()))
    yield index
    conn.close()


HEAD = HeadView({"src/checkout.py": CHECKOUT_HEAD, "src/fresh.py": FRESH, "vendor/lib.py": VENDOR},
                frozenset({"src/checkout.py", "src/fresh.py", "vendor/lib.py", "src/gone.py", "src/evil"}),
                removed=frozenset({"src/gone.py"}), ignored=frozenset({"vendor/lib.py"}))


def ask(store, tool: str, limit: int = 20_000, **args) -> str:
    return answer(store, HEAD, tool, args, limit).text


def test_definitions_come_from_the_head_for_changed_files_and_from_the_index_for_the_rest(store) -> None:
    text = ask(store, "definition", name="apply_discount")
    assert text.startswith("2 definition(s) of `apply_discount`:")
    assert "src/legacy.py:1-2 (default branch)" in text and "src/pricing.py:3-6 (default branch)" in text
    assert "vendored" not in text and "vendor/lib.py" not in text  # ignored by the configuration
    fresh = ask(store, "definition", name="fresh_helper")
    assert "src/fresh.py:1-2 (head) — function `fresh_helper`" in fresh  # added by the pull request
    assert "Cart.total" in ask(store, "definition", name="Cart.total")
    qualified = ask(store, "definition", name="pricing.apply_discount")
    assert "src/pricing.py:3-6" in qualified and "src/legacy.py" not in qualified
    with pytest.raises(Unanswerable, match="no definition of 'gone'"):  # deleted by the pull request
        ask(store, "definition", name="gone")


def test_a_definition_asked_with_its_use_is_the_one_that_use_means(store) -> None:
    text = ask(store, "definition", name="apply_discount", path="src/checkout.py", line=5)
    assert text.startswith("1 definition(s) of `apply_discount` as used on src/checkout.py:5:")
    assert "src/pricing.py:3-6" in text and "legacy" not in text  # the import says which


def test_callers_are_every_function_using_it_primary_sources_first_changed_files_at_the_head(store) -> None:
    text = ask(store, "callers", name="apply_discount", path="src/pricing.py")
    assert text.startswith("3 caller(s) of `apply_discount` (defined at src/pricing.py:3):")
    head, orders, test = (text.index(s) for s in (
        "src/checkout.py:4-5 (head) — caller `checkout`", "src/orders.py:4-5 (default branch) — caller `order_total`",
        "tests/test_pricing.py:4-5 (default branch) — caller `test_discount`"))
    assert head < orders < test
    with pytest.raises(Unanswerable, match="'Cart' is a class: ask for the callers of one of its methods"):
        ask(store, "callers", name="Cart")


def test_search_reads_changed_files_at_the_head_and_never_shows_ignored_ones(store) -> None:
    text = ask(store, "search", text="fresh_helper")
    assert "src/checkout.py (head)" in text and "src/fresh.py (head)" in text
    text = ask(store, "search", text="apply_discount")
    assert "src/orders.py (default branch)" in text and "vendor" not in text
    assert text.count("#### src/checkout.py") == 1  # the head's, not the index's stale copy too
    with pytest.raises(Unanswerable, match="nothing in the changed files or the repository index mentions"):
        ask(store, "search", text="vendored")


def test_read_takes_the_head_for_changed_files_and_refuses_what_it_must_not_show(store) -> None:
    assert "     5     return apply_discount(fresh_helper(cart), 0.2)" in ask(store, "read", path="src/checkout.py")
    assert ask(store, "read", path="src/pricing.py", start=3, end=3).endswith("     3 def apply_discount(total, rate):")
    for path, message in (("src/gone.py", "is deleted"),
                          ("vendor/lib.py", "ignored by the repository's configuration"),
                          ("src/evil", "has no text at its head"),  # a link added (GitHub gives no text)
                          ("link", "no file 'link' in the repository index"),  # a link is no file of the index
                          ("inside", "no file 'inside' in the repository index"),
                          ("etc/passwd", "no file 'etc/passwd'")):
        with pytest.raises(Unanswerable, match=message):
            ask(store, "read", path=path)
    with pytest.raises(Unanswerable, match="src/pricing.py has 6 lines"):
        ask(store, "read", path="src/pricing.py", start=7)
    long = ask(store, "read", path="long.py", start=100, end=1000)
    assert long.startswith(f"long.py (default branch, 500 lines), lines 100-{99 + MAX_READ_LINES} "
                           f"(at most {MAX_READ_LINES} lines a read):")


def test_answers_fit_their_bytes_cut_at_a_line_and_name_what_was_left_out(store) -> None:
    for limit in (400, 700):
        text = ask(store, "callers", limit=limit, name="apply_discount", path="src/pricing.py")
        assert len(text.encode()) <= limit
        assert "Not shown, for the budget or the limit:" in text
    read = ask(store, "read", limit=600, path="long.py")
    assert len(read.encode()) <= 600 and "(cut here for the lookup budget: lines" in read
    numbered = read.splitlines()[1:-1]
    assert numbered == [f"{n:>6} line_{n} = {n}" for n in range(1, len(numbered) + 1)]  # whole lines


def test_a_renamed_files_old_path_is_gone_at_the_head(store, tmp_path: Path) -> None:
    repo = Repo(tmp_path / "moved")
    repo.commit("base", {"src/pricing.py": PRICING})
    base = repo.git("rev-parse", "HEAD").strip()
    repo.git("mv", "src/pricing.py", "src/prices.py")
    repo.git("commit", "-q", "-m", "move")
    entries = diff_entries(str(repo.path), base, repo.git("rev-parse", "HEAD").strip())
    assert [(e["filename"], e["status"], e.get("previous_filename")) for e in entries] == [
        ("src/prices.py", "renamed", "src/pricing.py")]
    head = HeadView.of(entries, {"src/prices.py": PRICING})
    with pytest.raises(Unanswerable, match="src/pricing.py is deleted \\(or renamed\\) by this pull request"):
        answer(store, head, "read", {"path": "src/pricing.py"}, 5000)  # the index still holds it
    assert "src/prices.py (head, 6 lines)" in answer(store, head, "read", {"path": "src/prices.py"}, 5000).text
    assert "src/pricing.py" not in answer(store, head, "definition", {"name": "apply_discount"}, 5000).text
