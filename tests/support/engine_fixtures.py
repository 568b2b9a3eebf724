"""Fixtures of the engine tests: the chat double on loopback and a client session.

Loaded by the engine test modules with `pytest_plugins = ("tests.support.engine_fixtures",)`.
"""

import aiohttp
import pytest

from tests.support.chat_double import ChatDouble
from tests.support.engine_support import API_KEY


@pytest.fixture
async def double():
    server = await ChatDouble(api_key=API_KEY).start()
    yield server
    await server.close()


@pytest.fixture
async def session():
    async with aiohttp.ClientSession() as client:
        yield client
