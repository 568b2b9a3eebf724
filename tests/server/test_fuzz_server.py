"""Fuzzing `reviewer serve` over real HTTP: the resource API and the webhook intake.

The real app (tests/support/server_support.running_server) runs in a thread of its own with its own event
loop, and each example is a real request to it. Whatever the body, the name, the media type or the
signature, the server answers 2xx or 4xx, never 5xx, and logs no traceback; a failure is a
Kubernetes `Status`. Every delivery it accepts reaches a final state, and the dispatcher still
handles a good delivery afterwards.
"""

from __future__ import annotations

import asyncio
import io
import json
import threading
import uuid
from collections.abc import Coroutine, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from hypothesis import given
from hypothesis import strategies as st
from ruamel.yaml import YAML

from tests.support.fuzz_support import (
    SEED_VALUES,
    SEEDS,
    WEBHOOK_PAYLOADS,
    json_values,
    mutated_bytes,
    restructured,
    server_log,
    tracebacks,
    with_explicit_tag,
    with_hostile_value,
)
from tests.support.server_support import SECRET, Recorder, Server, pr_payload, running_server

pytestmark = pytest.mark.fuzz

TOKEN = "fuzz-admin-token-0123456789abcdef"
PATHS = {"oidc-connector": "/apis/resources.service.dev/v3/oidcconnectors",
         "saml-connector": "/apis/resources.service.dev/v2/samlconnectors"}
NAMES = st.one_of(st.sampled_from(["okta", "okta-saml", "local", "a" * 300, "..", "a/b", "UPPER", "é", " ", "x%00"]),
                  st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-.", min_size=1, max_size=20))
MEDIA = ["application/json", "application/yaml", "application/x-yaml", "text/yaml", "text/plain", "",
         "application/json; charset=latin-1"]
EVENTS = ["pull_request", "check_run", "check_suite", "installation", "installation_repositories", "ping",
          "push", "issue_comment", "pull_request_review_comment", "zzz"]
FINAL = {"done", "failed", "ignored", "superseded"}


class ServedApp:
    """`running_server` in a thread with its own loop, so that synchronous Hypothesis examples can
    send it real requests (through its aiohttp client) one after another."""

    def __init__(self, tmp_path: Path, **settings: str) -> None:
        self.tmp_path, self.settings = tmp_path, settings
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()
        self.thread = threading.Thread(target=self.loop.run_until_complete, args=(self._serve(),), daemon=True)
        self.server: Server

    async def _serve(self) -> None:
        self.stopping = asyncio.Event()
        async with running_server(self.tmp_path, Recorder(), **self.settings) as server:
            self.server = server
            self.ready.set()
            await self.stopping.wait()

    def __enter__(self) -> ServedApp:
        self.thread.start()
        assert self.ready.wait(60), "the server did not start"
        return self

    def __exit__(self, *exc: object) -> None:
        self.loop.call_soon_threadsafe(self.stopping.set)
        self.thread.join(60)

    def run(self, coroutine: Coroutine[Any, Any, Any]) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout=120)

    def request(self, method: str, path: str, body: bytes | None = None,
                media: str | None = None) -> tuple[int, str, str]:
        """(status, content type, text) of a request with the admin token."""
        headers = {"Authorization": f"Bearer {TOKEN}", **({"Content-Type": media} if media is not None else {})}

        async def send() -> tuple[int, str, str]:
            async with self.server.http.request(method, self.server.url + path, data=body,
                                                headers=headers) as response:
                return response.status, response.content_type, await response.text()

        return self.run(send())


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServedApp]:
    tmp_path = tmp_path_factory.mktemp("fuzz-server")
    secret = tmp_path / "secrets" / "okta" / "client-secret"
    secret.parent.mkdir(parents=True)
    secret.write_text("the-client-secret-value")
    with ServedApp(tmp_path, REVIEWER_ADMIN_TOKEN=TOKEN, REVIEWER_SECRETS_DIR=str(tmp_path / "secrets")) as app:
        yield app


def _text(value: object, form: str) -> bytes:
    if form == "json":
        return json.dumps(value).encode()
    out = io.BytesIO()
    YAML(typ="safe", pure=True).dump(value, out)
    return out.getvalue()


def _check_answer(status: int, media: str, text: str) -> None:
    assert status < 500, text
    if media != "application/json":  # the router's own 404 or 405 (a name such as `..` leaves the API's paths)
        assert status in (404, 405), (status, text)
    elif status >= 400:
        answer = json.loads(text)
        assert (answer["kind"], answer["status"], answer["code"]) == ("Status", "Failure", status), answer


@pytest.mark.parametrize("kind", sorted(PATHS))
def test_the_resource_api_never_answers_5xx(served, kind):
    path = PATHS[kind]

    @given(data=st.data())
    def case(data: st.DataObject) -> None:
        form = data.draw(st.sampled_from(["json", "yaml", "raw", "raw", "tagged"]))
        if form == "raw":
            body = data.draw(mutated_bytes(SEEDS[kind]))
            media = data.draw(st.sampled_from(MEDIA))
        elif form == "tagged":  # `!!float xyz` anywhere was a 500
            body = data.draw(with_explicit_tag(SEED_VALUES[kind]))
            media = "application/yaml"
        else:
            body = _text(data.draw(restructured(SEED_VALUES[kind])), form)
            media = "application/json" if form == "json" else "application/yaml"
        name = quote(data.draw(NAMES), safe="")
        method = data.draw(st.sampled_from(["PUT", "PUT", "PUT", "GET", "DELETE", "LIST"]))
        if method == "LIST":
            selector = quote(data.draw(st.one_of(st.text(max_size=20), st.sampled_from(["a=b,c!=d", "!x", "a==", ","]))))
            _check_answer(*served.request("GET", f"{path}?labelSelector={selector}"))
        elif method == "PUT":
            _check_answer(*served.request("PUT", f"{path}/{name}", body, media))
        else:
            _check_answer(*served.request(method, f"{path}/{name}"))

    with server_log() as records:
        case()
    assert tracebacks(records) == []


@pytest.mark.parametrize("kind", sorted(PATHS))
def test_the_resource_api_answers_values_past_its_bounds_with_a_4xx(served, kind):
    @given(body=with_hostile_value(SEED_VALUES[kind]), media=st.sampled_from(["application/json", "application/yaml"]))
    def case(body: bytes, media: str) -> None:
        status, answer_media, text = served.request("PUT", f"{PATHS[kind]}/hostile", body, media)
        assert status in (200, 201, 400, 409, 413, 422), (status, text[:500])
        _check_answer(status, answer_media, text)

    with server_log() as records:
        case()
    assert tracebacks(records) == []


@pytest.mark.parametrize("kind", sorted(PATHS))
def test_the_resource_api_answers_explicit_tags_with_a_4xx_or_takes_them(served, kind):
    # `!!float xyz` anywhere in a YAML body was a 500 (a ValueError in the loader).
    @given(body=with_explicit_tag(SEED_VALUES[kind]))
    def case(body: bytes) -> None:
        status, answer_media, text = served.request("PUT", f"{PATHS[kind]}/tagged", body, "application/yaml")
        assert status in (200, 201, 400, 409, 422), (status, text[:500])
        _check_answer(status, answer_media, text)

    with server_log() as records:
        case()
    assert tracebacks(records) == []


def test_a_literal_client_secret_never_comes_back(served):
    """Whatever else the body holds, the literal secret it carries is in no answer: not in the
    stored object, not in a 4xx message, not in a later GET or list."""
    secret = "fuzz-literal-secret-" + uuid.uuid4().hex

    @given(value=restructured(SEED_VALUES["oidc-connector"]), form=st.sampled_from(["json", "yaml"]))
    def case(value: object, form: str) -> None:
        if not (isinstance(value, dict) and isinstance(value.get("spec"), dict)):
            value = {"apiVersion": "resources.service.dev/v3", "kind": "ServiceOIDCConnector", "spec": {}}
        value["spec"]["client_secret"] = secret
        if isinstance(value["spec"].get("mfa"), dict):
            value["spec"]["mfa"]["client_secret"] = secret
        path = PATHS["oidc-connector"]
        answers = [served.request("PUT", f"{path}/okta", _text(value, form),
                                  "application/json" if form == "json" else "application/yaml"),
                   served.request("GET", f"{path}/okta"), served.request("GET", path)]
        for status, _, text in answers:
            assert status < 500 and secret not in text, (status, text[:300])

    with server_log() as records:
        case()
    assert tracebacks(records) == [] and not [r for r in records if secret in r.getMessage()]


def test_webhook_intake_and_dispatcher_survive_any_body(served):
    accepted: list[str] = []

    @given(data=st.data())
    def case(data: st.DataObject) -> None:
        form = data.draw(st.sampled_from(["restructured", "bytes", "random", "hostile"]))
        seeds = list(WEBHOOK_PAYLOADS.values())
        if form == "restructured":
            body = json.dumps(data.draw(restructured(seeds))).encode()
        elif form == "hostile":
            body = data.draw(with_hostile_value(seeds))
        elif form == "bytes":
            body = data.draw(mutated_bytes([json.dumps(seed).encode() for seed in seeds]))
        else:
            body = json.dumps(data.draw(json_values)).encode()
        event = data.draw(st.sampled_from(EVENTS))
        signed = data.draw(st.sampled_from([True, True, True, False]))
        media = data.draw(st.sampled_from(["application/json"] * 4 + ["application/x-www-form-urlencoded", "text/plain"]))
        delivery = str(uuid.uuid4())
        status, text = served.run(served.server.post(event, body, delivery, secret=SECRET if signed else "wrong",
                                                     content_type=media))
        assert status in (200, 202, 400, 401, 413, 415), (status, text)
        if status == 202:
            accepted.append(delivery)

    with server_log() as records:
        case()
        for delivery in accepted:
            record = served.run(served.server.wait_state(delivery, *FINAL))
            assert record["state"] in FINAL
        good = str(uuid.uuid4())
        assert served.run(served.server.post("pull_request", pr_payload(77, "e" * 40), good))[0] == 202
        assert served.run(served.server.wait_state(good, "done"))["state"] == "done"
    assert accepted and tracebacks(records) == []
