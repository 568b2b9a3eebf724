"""The admin configuration: loaded at start, reloaded on change, a bad reload keeps the last good one."""

from __future__ import annotations

import os

import pytest

from bot.server.admin_reload import AdminConfigError, AdminConfigHolder
from bot.server.app import ADMIN
from bot.server.metrics import Metrics
from tests.support.server_support import Recorder, running_server, wait_for

GOOD = "defaults:\n  feedback: minimal\n"
OTHER = "defaults:\n  feedback: detailed\n"
BAD = "defaults:\n  feedback: loud\n"


def _write(path, text: str, stamp: int) -> None:
    """Write and set a distinct mtime, so a change is seen whatever the clock's resolution."""
    path.write_text(text)
    os.utime(path, ns=(stamp, stamp))


def test_reload_keeps_the_previous_configuration_when_the_new_one_is_bad(tmp_path):
    path = tmp_path / "admin.yaml"
    _write(path, GOOD, 1_000_000_000)
    metrics = Metrics()
    holder = AdminConfigHolder(str(path), metrics)
    assert holder.load_initial() == []
    first = holder.current
    assert first.data["defaults"]["feedback"] == "minimal"
    assert holder.reload_if_changed() is None  # unchanged

    _write(path, BAD, 2_000_000_000)
    assert holder.reload_if_changed() is False
    assert holder.current is first
    assert holder.reload_if_changed() is None  # the bad file is reported once, not on every poll

    _write(path, OTHER, 3_000_000_000)
    assert holder.reload_if_changed() is True
    assert holder.current.data["defaults"]["feedback"] == "detailed"

    path.unlink()
    assert holder.reload_if_changed() is False
    assert holder.current.data["defaults"]["feedback"] == "detailed"
    assert metrics.admin_reloads.value(result="ok") == 1
    assert metrics.admin_reloads.value(result="failed") == 2


def test_bad_file_at_start_returns_its_errors(tmp_path):
    path = tmp_path / "admin.yaml"
    path.write_text(BAD)
    holder = AdminConfigHolder(str(path))
    [error] = holder.load_initial()
    assert error.startswith(f"{path}:2:13: enum:")
    assert holder.current is None
    missing = AdminConfigHolder(str(tmp_path / "absent.yaml"))
    assert missing.load_initial() == [
        f"{tmp_path / 'absent.yaml'}: cannot read the admin configuration (FileNotFoundError: No such file or directory)"]
    assert AdminConfigHolder(None).load_initial() == []
    with pytest.raises(AdminConfigError) as error:
        AdminConfigHolder.loaded(str(path))
    assert error.value.lines[0].startswith(f"{path}:2:13: enum:")


async def test_the_server_polls_and_reloads(tmp_path):
    path = tmp_path / "admin.yaml"
    _write(path, GOOD, 1_000_000_000)
    async with running_server(tmp_path, Recorder(), REVIEWER_ADMIN_CONFIG=str(path),
                              REVIEWER_ADMIN_RELOAD_SECONDS="0.05") as server:
        holder = server.app[ADMIN]
        assert holder.current.data["defaults"]["feedback"] == "minimal"
        _write(path, BAD, 2_000_000_000)

        async def counted(result: str) -> bool:
            text = await (await server.http.get(server.url + "/metrics")).text()
            return f'reviewer_admin_config_reloads_total{{result="{result}"}} 1' in text
        await wait_for(lambda: counted("failed"))
        assert holder.current.data["defaults"]["feedback"] == "minimal"
        _write(path, OTHER, 3_000_000_000)
        await wait_for(lambda: counted("ok"))
        assert holder.current.data["defaults"]["feedback"] == "detailed"
