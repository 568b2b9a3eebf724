"""REVIEWER_TRUSTED_PROXIES (bot/server/forwarded.py): `X-Forwarded-For` believed only as far as the
proxies named, the rightmost hop that is not one winning; the access log records that address."""

from __future__ import annotations

import logging

import pytest

from bot.server.forwarded import client_address, parse_trusted_proxies
from tests.support.server_support import Recorder, running_server

PROXIES = parse_trusted_proxies("10.0.0.0/8, 127.0.0.1, fd00::/8")


@pytest.mark.parametrize("peer, header, expected", [
    ("10.1.2.3", ["198.51.100.7"], "198.51.100.7"),  # one proxy
    ("10.1.2.3", ["6.6.6.6, 198.51.100.7, 10.9.9.9"], "198.51.100.7"),  # a forged first hop stays unread
    ("10.1.2.3", ["6.6.6.6", "198.51.100.7"], "198.51.100.7"),  # the header sent twice: one list
    ("192.0.2.1", ["198.51.100.7"], "192.0.2.1"),  # a peer that is no trusted proxy: its header unread
    ("10.1.2.3", [], "10.1.2.3"),
    ("10.1.2.3", ["not-an-address"], "10.1.2.3"),  # garbage stops the walk at the last proxy
    ("10.1.2.3", ["10.4.4.4, 10.5.5.5"], "10.4.4.4"),  # every hop a proxy: the first
    ("fd00::1", ["[2001:db8::7]:443"], "2001:db8::7"),
    ("10.1.2.3", ["198.51.100.7:5555"], "198.51.100.7"),
])
def test_the_rightmost_hop_that_is_no_trusted_proxy_is_the_client(peer, header, expected):
    assert client_address(peer, header, PROXIES) == expected


def test_without_trusted_proxies_the_header_is_never_read():
    assert client_address("127.0.0.1", ["198.51.100.7"], ()) == "127.0.0.1"


def test_a_list_that_names_no_network_is_refused_naming_the_entry():
    with pytest.raises(ValueError, match="'10.0.0.300/8' is not a CIDR"):
        parse_trusted_proxies("10.0.0.0/8 10.0.0.300/8")


async def test_the_access_log_records_the_client_behind_a_trusted_proxy(tmp_path, caplog):
    caplog.set_level(logging.INFO, logger="reviewer.access")
    async with running_server(tmp_path, Recorder(), REVIEWER_ACCESS_LOG="1",
                              REVIEWER_TRUSTED_PROXIES="127.0.0.1/32") as server:
        async with server.http.get(server.url + "/healthz", headers={"X-Forwarded-For": "198.51.100.7"}) as response:
            assert response.status == 200
    [record] = [r for r in caplog.records if r.name == "reviewer.access" and getattr(r, "path", "") == "/healthz"]
    assert record.ip == "198.51.100.7"  # type: ignore[attr-defined]
