"""What a SARIF upload may cost the server (bot/server/api/uploads.py, docs/analyzers.md "What bounds an
upload"), over real HTTP: a body sent in chunks without a length is cut at its bound; past the
uploads a server reads and decodes at once, an upload is answered 503 with Retry-After before its
body is read, and is taken again once they are done; an accepted upload is in the audit log."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

import aiohttp

from bot.analyzers.upload import MAX_BODY_BYTES
from bot.server.api.uploads import RETRY_AFTER, WAITING_PER_DECODE
from tests.support.analyzers_support import SHA, encode, log, result
from tests.support.app_support import World, running_app
from tests.support.server_support import wait_for

TOKEN = "upload-bounds-admin-token-0123456789abcdef"
URL = "/v1/repos/octo-org/example/code-scanning/sarifs"
HEADERS = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}
BODY = {"commit_sha": SHA, "ref": "refs/heads/feature", "sarif": encode(log(result()))}


async def _post(world: World, data: object) -> tuple[int, dict, dict]:
    async with aiohttp.ClientSession() as http, http.post(world.url + URL, data=data, headers=HEADERS) as response:
        return response.status, await response.json(), dict(response.headers)


async def test_a_chunked_body_without_a_length_is_refused_once_past_its_bound(tmp_path, github, github_app,
                                                                             app_private_key):
    sent = 0

    async def endless() -> AsyncIterator[bytes]:
        nonlocal sent
        while sent <= 2 * MAX_BODY_BYTES:
            sent += 1024 * 1024
            yield b" " * (1024 * 1024)

    async with running_app(tmp_path, github, github_app, app_private_key, REVIEWER_ADMIN_TOKEN=TOKEN) as world:
        try:
            status, answer, _ = await _post(world, endless())
        except (aiohttp.ClientOSError, aiohttp.ServerDisconnectedError):
            status, answer = 0, {}  # the server may close while the client still writes; then ask its log
        assert status == 413, (status, answer)
        assert answer["errors"][0]["code"] == "too-large" and f"{MAX_BODY_BYTES:,} bytes" in answer["message"]
        assert sent < 2 * MAX_BODY_BYTES  # the rest was never read


async def test_past_the_uploads_read_and_decoded_at_once_the_answer_is_503_with_retry_after(
        tmp_path, github, github_app, app_private_key):
    """With one decode at a time, 1 + WAITING_PER_DECODE uploads are admitted; a body that does
    not end holds its place. The next upload is refused before its body is read, and once the
    others are done an upload is taken again."""
    release = asyncio.Event()
    head, _, tail = json.dumps(BODY).encode().partition(b'"sarif": "')

    async def held() -> AsyncIterator[bytes]:
        yield head + b'"sarif": "'
        await release.wait()
        yield tail

    admitted = 1 + WAITING_PER_DECODE
    async with running_app(tmp_path, github, github_app, app_private_key, REVIEWER_ADMIN_TOKEN=TOKEN,
                           REVIEWER_UPLOAD_DECODES="1") as world:
        holding = [asyncio.create_task(_post(world, held())) for _ in range(admitted)]

        async def refused() -> tuple[int, dict, dict] | None:
            answer = await _post(world, json.dumps(BODY).encode())
            return answer if answer[0] == 503 else None
        status, answer, headers = await wait_for(refused, 20)
        assert headers["Retry-After"] == str(RETRY_AFTER) and "try again" in answer["message"]
        release.set()
        assert [a[0] for a in await asyncio.gather(*holding)] == [202] * admitted
        status, answer, _ = await _post(world, json.dumps(BODY).encode())
        assert status == 202, answer


async def test_an_accepted_upload_is_in_the_audit_log(tmp_path, github, github_app, app_private_key):
    async with running_app(tmp_path, github, github_app, app_private_key, REVIEWER_ADMIN_TOKEN=TOKEN) as world:
        status, answer, _ = await _post(world, json.dumps(BODY).encode())
        assert status == 202
        async with aiohttp.ClientSession() as http, http.get(f"{world.url}/v1/audit?action=sarif.upload",
                                                             headers=HEADERS) as response:
            entries = (await response.json())["entries"]
    [entry] = entries
    assert entry["actor"] == "break-glass token" and entry["account"] == "octo-org"
    assert entry["target"] == f"octo-org/example/code-scanning/sarifs/{answer['id']}"
    assert entry["details"] == {"repository": "octo-org/example", "commit": SHA, "tools": ["tool"], "results": 1}
