"""The store on its own: two stores on one file (two server processes) and the in-memory database."""

from __future__ import annotations

import threading

import pytest

from bot.connectors.store import Conflict, ConnectorStore


def _obj(display: str) -> dict:
    return {"metadata": {"name": "okta"}, "spec": {"display": display}, "status": {"conditions": []}}


def test_two_stores_on_one_file_one_writer_wins(tmp_path):
    path = str(tmp_path / "reviewer.db")
    first, second = ConnectorStore.opened(path), ConnectorStore.opened(path)
    created, _ = first.put("K", "okta", None, lambda previous: _obj("v1"))
    version = created["metadata"]["resourceVersion"]
    barrier = threading.Barrier(2)
    outcomes: list[str] = []

    def write(store: ConnectorStore, display: str) -> None:
        barrier.wait()
        try:
            store.put("K", "okta", version, lambda previous: _obj(display))
            outcomes.append("won")
        except Conflict:
            outcomes.append("conflict")

    threads = [threading.Thread(target=write, args=(s, d)) for s, d in ((first, "A"), (second, "B"))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes) == ["conflict", "won"]
    stored = second.get("K", "okta")
    assert stored["spec"]["display"] in ("A", "B")
    assert int(stored["metadata"]["resourceVersion"]) == int(version) + 1
    first.close()
    second.close()


def test_in_memory_store_keeps_what_it_was_given():
    store = ConnectorStore.opened(":memory:")
    store.put("K", "okta", None, lambda previous: _obj("v1"))
    assert store.get("K", "okta")["spec"]["display"] == "v1"
    assert [o["metadata"]["name"] for o in store.list("K")[0]] == ["okta"]
    with pytest.raises(Conflict):
        store.put("K", "absent", "1", lambda previous: _obj("x"))
    assert store.delete("K", "okta")["spec"]["display"] == "v1"
    assert store.get("K", "okta") is None
