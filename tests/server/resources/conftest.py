"""The resource API served on 127.0.0.1 over a fresh SQLite file, its clock moved by the test."""

from __future__ import annotations

import pytest

from tests.server.resources.resource_api import Clock
from tests.support.connectors_support import ApiServer


@pytest.fixture
async def api(tmp_path):
    async with ApiServer(str(tmp_path / "reviewer.db"), clock=Clock()) as server:
        yield server
