"""The sign-in store's contract, written against the `AuthStore` interface so that another backend
(the PostgreSQL twin) runs the same tests: single-use pending sign-ins, sessions that expire, the
sign-in log newest first, and one signing key shared by every process on the database."""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from pathlib import Path

import pytest

from bot.store.signin.postgres import PostgresAuthStore
from bot.store.signin.sqlite import SIGNIN_NOISE_KEEP, SqliteAuthStore


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture(params=["sqlite", "postgres"])
async def stores(request, tmp_path, clock):
    """Two stores on one database: two processes of one deployment, on each backend. The SQLite
    file is in memory where the machine has a tmpfs (its writes are synced one by one)."""
    if request.param == "sqlite":
        where = Path(tempfile.mkdtemp(dir="/dev/shm")) if Path("/dev/shm").is_dir() else tmp_path
        request.addfinalizer(lambda: shutil.rmtree(where, ignore_errors=True))
        opened = [SqliteAuthStore(str(where / "reviewer.db"), clock) for _ in range(2)]
    else:
        url = request.getfixturevalue("pg_url")
        opened = [PostgresAuthStore(url, clock) for _ in range(2)]
    for store in opened:
        await store.open()
    try:
        yield opened
    finally:
        for store in opened:
            await store.close()


async def test_a_pending_sign_in_is_taken_once_by_one_process(stores, clock):
    first, second = stores
    await first.put_pending("state-hash", {"nonce": "n"}, clock.now + 600)
    taken = await asyncio.gather(*(store.take_pending("state-hash") for store in (first, second, first, second)))
    assert sorted(map(str, taken)) == ["None", "None", "None", "{'nonce': 'n'}"]
    await first.put_pending("old", {"nonce": "m"}, clock.now + 600)
    clock.now += 601
    assert await second.take_pending("old") is None  # expired
    assert await second.take_pending("never-made") is None


async def test_sessions_are_shared_and_expire(stores, clock):
    first, second = stores
    await first.put_session("key", {"username": "ann"}, clock.now + 60)
    assert await second.get_session("key") == {"username": "ann"}
    clock.now += 61
    assert await second.get_session("key") is None
    await first.put_session("key2", {"username": "bob"}, clock.now + 60)
    assert await second.delete_session("key2") is True
    assert await first.get_session("key2") is None and await first.delete_session("key2") is False


async def test_the_sign_in_log_is_newest_first(stores):
    first, second = stores
    for n in range(5):
        await (first if n % 2 else second).record_signin({"at": float(n), "n": n})
    assert [e["n"] for e in await first.signins(3)] == [4, 3, 2]


async def test_unauthenticated_noise_never_pushes_a_real_entry_out_of_the_sign_in_log(stores):
    """10,150 refusals of requests that showed no sign-in under way (anyone can send them) after a
    failed guess at the break-glass token: the guess is still there, and the noise is capped. On
    PostgreSQL, whose every insert is a synced commit (about 10 ms here), 1,250 show the same SQL
    at work: the noise capped, the guess kept."""
    first, second = stores
    count = 10_150 if isinstance(first, SqliteAuthStore) else 1_250
    guess = {"at": 1.0, "connector": "break-glass", "flow": "console", "ok": False, "check": "token", "ip": "192.0.2.7"}
    await first.record_signin(guess)
    for n in range(count):
        await (first if n % 2 else second).record_signin(
            {"at": 2.0 + n, "connector": "nope", "flow": "web", "ok": False, "check": "connector",
             "unauthenticated": True})
    assert await second.signins(100) == [guess]
    noise = await first.signins(20_000, unauthenticated=True)
    assert SIGNIN_NOISE_KEEP <= len(noise) < SIGNIN_NOISE_KEEP + 100 and noise[0]["at"] == 2.0 + count - 1


async def test_every_process_signs_with_the_first_key_made(stores):
    first, second = stores
    made = iter(["key-a", "key-b"])
    keys = [await first.key("signing", lambda: next(made)), await second.key("signing", lambda: "key-c")]
    assert keys == ["key-a", "key-a"]


async def test_a_closed_store_says_so(tmp_path):
    store = SqliteAuthStore(str(tmp_path / "x.db"))
    with pytest.raises(RuntimeError, match="not open"):
        await store.get_session("k")


async def test_an_assertion_id_is_used_once_by_every_process(stores, clock):
    first, second = stores
    results = await asyncio.gather(*(store.use_once("saml-assertion:corp:id-1", clock.now + 300)
                                     for store in (first, second, first, second)))
    assert sorted(results) == [False, False, False, True]
    assert await second.use_once("saml-assertion:corp:id-2", clock.now + 300) is True
    clock.now += 301  # an expired id is forgotten: its assertion is refused for its time anyway
    assert await first.use_once("saml-assertion:corp:id-1", clock.now + 300) is True


async def test_single_logout_finds_every_session_of_a_name_id(stores, clock):
    first, second = stores
    for key in ("s1", "s2"):
        await first.put_sso_index(key, "corp", "ann", {"connector": "corp", "name_id": "ann", "session_index": key},
                                  clock.now + 60)
    await first.put_sso_index("s3", "other", "ann", {"connector": "other", "name_id": "ann"}, clock.now + 60)
    assert (await second.get_sso_index("s1"))["session_index"] == "s1"
    taken = await second.take_sso_sessions("corp", "ann")
    assert sorted(key for key, _ in taken) == ["s1", "s2"]
    assert await first.take_sso_sessions("corp", "ann") == []
    assert await first.get_sso_index("s3") is not None
