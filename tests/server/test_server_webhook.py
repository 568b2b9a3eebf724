"""POST /webhook through real HTTP: answer codes, their order, duplicates and redeliveries."""

from __future__ import annotations

import asyncio
import json
import re

import aiohttp

from bot.server.webhook import MAX_BODY, signature, verify_signature
from tests.support.fuzz_support import server_log, tracebacks
from tests.support.server_support import SECRET, Recorder, example, pr_payload, running_server, wait_for


def test_github_signature_test_vector():
    digest = "757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
    assert signature(SECRET.encode(), b"Hello, World!") == f"sha256={digest}"
    assert verify_signature(SECRET.encode(), b"Hello, World!", f"sha256={digest}")
    assert verify_signature(SECRET.encode(), b"Hello, World!", f"sha256={digest.upper()}")
    assert not verify_signature(SECRET.encode(), b"Hello, World?", f"sha256={digest}")
    assert not verify_signature(SECRET.encode(), b"Hello, World!", digest)  # no sha256= prefix
    assert not verify_signature(SECRET.encode(), b"Hello, World!", None)


async def test_signed_pull_request_is_stored_then_handled(tmp_path):
    recorder = Recorder()
    async with running_server(tmp_path, recorder) as server:
        payload = example("pull_request.opened")
        status, _ = await server.post("pull_request", payload, "d-opened")
        assert status == 202
        record = await server.wait_state("d-opened", "done")
        assert json.loads(record["body"]) == payload  # the raw body, stored
        assert record["headers"]["X-GitHub-Event"] == "pull_request"
        [job] = recorder.jobs
        assert (job.delivery_id, job.event, job.action) == ("d-opened", "pull_request", "opened")
        assert job.repo == payload["repository"]["full_name"]
        assert job.pr_number == payload["pull_request"]["number"]
        assert job.head_sha == payload["pull_request"]["head"]["sha"]
        assert job.installation_id == payload["installation"]["id"]
        assert job.payload == payload and job.attempt == 1


async def test_wrong_or_missing_signature_is_401_and_nothing_is_stored(tmp_path):
    async with running_server(tmp_path, Recorder()) as server:
        assert (await server.post("pull_request", example("pull_request.opened"), "d-1", secret="not it"))[0] == 401
        assert (await server.post("pull_request", example("pull_request.opened"), "d-2", secret=None))[0] == 401
        status, _ = await server.post("pull_request", b"{}", "d-3", headers={"X-Hub-Signature-256": "sha256=zz"})
        assert status == 401
        assert await server.store.count() == 0


async def test_order_of_checks(tmp_path):
    async with running_server(tmp_path, Recorder()) as server:
        # 401 comes before 415 and 400: an unsigned request learns nothing else
        assert (await server.post(None, b"x", secret=None, content_type="text/plain"))[0] == 401
        # 415 before 400
        assert (await server.post(None, b"{}", content_type="application/x-www-form-urlencoded"))[0] == 415
        # 400 for a missing event or delivery header
        assert (await server.post(None, b"{}"))[0] == 400
        status, _ = await server.post("push", b"{}", headers={"X-GitHub-Delivery": ""})
        assert status == 400
        assert await server.store.count() == 0


async def test_body_over_the_limit_is_413_by_content_length_before_anything_else(tmp_path):
    async with running_server(tmp_path, Recorder()) as server:
        # no signature, wrong type, no body sent: the size is checked first, before reading
        reader, writer = await _raw_connection(server.url)
        writer.write(f"POST /webhook HTTP/1.1\r\nHost: x\r\nContent-Length: {MAX_BODY + 1}\r\n"
                     "Content-Type: text/plain\r\n\r\n".encode())
        await writer.drain()
        status_line = await reader.readline()
        writer.close()
        assert status_line.split()[1] == b"413"
        assert await server.store.count() == 0


async def test_chunked_body_over_the_limit_is_413(tmp_path):
    async with running_server(tmp_path, Recorder()) as server:
        chunk = b"x" * (1024 * 1024)

        async def body():
            for _ in range(MAX_BODY // len(chunk) + 2):
                yield chunk
        try:
            async with server.http.post(server.url + "/webhook", data=body(),  # a signature to check: read
                                        headers={"Content-Type": "application/json",
                                                 "X-Hub-Signature-256": "sha256=" + "0" * 64}) as response:
                assert response.status == 413
        except aiohttp.ClientError:  # the server may close the connection while the client still sends
            pass
        metrics = await (await server.http.get(server.url + "/metrics")).text()
        assert 'reviewer_webhook_rejected_total{status="413"} 1' in metrics  # refused while reading
        assert await server.store.count() == 0


async def _status_of(reader: asyncio.StreamReader) -> tuple[int, dict[str, str]]:
    status = int((await reader.readline()).split()[1])
    headers = {}
    while (line := await reader.readline()) not in (b"\r\n", b""):
        name, _, value = line.decode().partition(":")
        headers[name.strip().lower()] = value.strip()
    return status, headers


async def test_a_body_without_a_signature_to_check_is_refused_before_it_is_read(tmp_path):
    async with running_server(tmp_path, Recorder()) as server:
        reader, writer = await _raw_connection(server.url)
        writer.write(f"POST /webhook HTTP/1.1\r\nHost: x\r\nContent-Length: {MAX_BODY}\r\n"
                     "Content-Type: application/json\r\n\r\n{".encode())  # and the rest never comes
        await writer.drain()
        status, _ = await asyncio.wait_for(_status_of(reader), 20)  # answered without waiting for the body
        writer.close()
        assert status == 401 and await server.store.count() == 0


async def test_unverified_bodies_read_at_once_are_capped_past_which_the_answer_is_503(tmp_path):
    """With 26 MiB for bodies whose signature is not checked yet, one announcing 20 MiB that
    trickles in holds its share: another of 7 MiB is refused (503, Retry-After) before it is read;
    once the first is gone, a signed delivery is taken."""
    async with running_server(tmp_path, Recorder(), REVIEWER_WEBHOOK_UNVERIFIED_MIB="26") as server:
        held_reader, held = await _raw_connection(server.url)
        held.write(f"POST /webhook HTTP/1.1\r\nHost: x\r\nContent-Length: {20 * 1024 * 1024}\r\n"
                   f"X-Hub-Signature-256: sha256={'0' * 64}\r\nContent-Type: application/json\r\n\r\n{{".encode())
        await held.drain()
        fake = {"X-Hub-Signature-256": "sha256=" + "1" * 64}

        async def refused() -> tuple[int, dict] | None:
            async with server.http.post(server.url + "/webhook", data=b" " * (7 * 1024 * 1024),
                                        headers={**fake, "Content-Type": "application/json"}) as response:
                return (response.status, dict(response.headers)) if response.status == 503 else None
        status, headers = await wait_for(refused, 20)
        assert int(headers["Retry-After"]) > 0
        held.close()
        await held.wait_closed()

        async def taken() -> bool:
            status, _ = await server.post("ping", example("ping"), "d-after")
            return status == 200
        assert await wait_for(taken, 20)
        metrics = await (await server.http.get(server.url + "/metrics")).text()
        assert 'reviewer_webhook_rejected_total{status="503"}' in metrics


async def test_ping_is_200_and_other_events_are_stored_and_ignored(tmp_path):
    recorder = Recorder()
    async with running_server(tmp_path, recorder) as server:
        assert (await server.post("ping", example("ping"), "d-ping"))[0] == 200
        assert (await server.post("push", {"ref": "refs/heads/main"}, "d-push"))[0] == 202
        closed = pr_payload(5, "a" * 40, action="closed")
        assert (await server.post("pull_request", closed, "d-closed"))[0] == 202
        edited = example("pull_request.edited")  # a title change, not a base change
        assert (await server.post("pull_request", edited, "d-edited"))[0] == 202
        for delivery in ("d-ping", "d-push", "d-edited"):
            record = await server.wait_state(delivery, "ignored")
            assert record["finished_at"] is not None
        await server.wait_state("d-closed", "done")  # a job, but no review: the 👎 are read (docs/reviews.md)
        assert [(job.event, job.action, job.head_sha) for job in recorder.jobs] == [("pull_request", "closed", None)]


async def test_handled_events_become_jobs(tmp_path):
    recorder = Recorder()
    base_change = example("pull_request.edited")
    base_change["changes"] = {"base": {"ref": {"from": "develop"}, "sha": {"from": "0" * 40}}}
    cases = [("pull_request", example(f"pull_request.{a}")) for a in
             ("opened", "reopened", "synchronize", "ready_for_review", "labeled", "unlabeled")]
    cases += [("pull_request", base_change), ("check_run", example("check_run.rerequested")),
              ("check_suite", example("check_suite.requested")), ("check_suite", example("check_suite.rerequested"))]
    async with running_server(tmp_path, recorder) as server:
        for n, (event, payload) in enumerate(cases):
            assert (await server.post(event, payload, f"d-{n}"))[0] == 202
            await server.wait_state(f"d-{n}", "done")
    got = {(job.event, job.action) for job in recorder.jobs}
    assert got == {("pull_request", a) for a in ("opened", "reopened", "synchronize", "ready_for_review",
                                                 "labeled", "unlabeled", "edited")} | {
        ("check_run", "rerequested"), ("check_suite", "requested"), ("check_suite", "rerequested")}
    suite = next(job for job in recorder.jobs if job.event == "check_suite")
    assert suite.pr_number is None and suite.head_sha  # a fork's suite lists no pull request


async def test_installation_events_are_recorded_and_index_added_repositories(tmp_path):
    recorder = Recorder()
    async with running_server(tmp_path, recorder) as server:
        created = example("installation.created")
        added = example("installation_repositories.added")
        added["repositories_added"] = [{"full_name": "octo/new-repo"}]
        assert (await server.post("installation", created, "d-inst"))[0] == 202
        await server.wait_state("d-inst", "done")
        suspended = {**created, "action": "suspend"}
        assert (await server.post("installation", suspended, "d-suspend"))[0] == 202
        await server.wait_state("d-suspend", "done")
        assert (await server.post("installation_repositories", added, "d-added"))[0] == 202
        await server.wait_state("d-added", "done")
        installation = await server.store.installation(created["installation"]["id"])
        expected = {r["full_name"] for r in created["repositories"]} | {"octo/new-repo"}
        assert set(installation["repositories"]) == expected
        assert installation["last_action"] == "installation_repositories.added"
    # Repositories that come or go make a job (their indexes), keyed by installation; others none.
    assert [(job.event, job.action, job.installation_id, job.repo) for job in recorder.jobs] == [
        ("installation", "created", created["installation"]["id"], None),
        ("installation_repositories", "added", created["installation"]["id"], None)]


async def test_duplicate_delivery_is_acknowledged_and_handled_once(tmp_path):
    recorder = Recorder()
    async with running_server(tmp_path, recorder) as server:
        payload = pr_payload(7, "b" * 40)
        assert (await server.post("pull_request", payload, "d-dup"))[0] == 202
        await server.wait_state("d-dup", "done")
        status, text = await server.post("pull_request", payload, "d-dup")
        assert (status, text.strip()) == (202, "duplicate")
        assert await server.state("d-dup") == "done"
        assert recorder.ids() == ["d-dup"]
        metrics = await (await server.http.get(server.url + "/metrics")).text()
        assert 'reviewer_webhook_deliveries_total{event="pull_request",outcome="duplicate"} 1' in metrics


async def test_failed_job_is_done_again_when_redelivered(tmp_path):
    recorder = Recorder()
    recorder.fail["d-retry"] = "GitHub answered 502"
    async with running_server(tmp_path, recorder) as server:
        payload = pr_payload(8, "c" * 40)
        assert (await server.post("pull_request", payload, "d-retry"))[0] == 202
        record = await server.wait_state("d-retry", "failed")
        assert record["error"] == "RuntimeError: GitHub answered 502"
        del recorder.fail["d-retry"]
        status, text = await server.post("pull_request", payload, "d-retry")  # the user redelivers
        assert (status, text.strip()) == (202, "accepted")
        record = await server.wait_state("d-retry", "done")
        assert record["received_count"] == 2 and record["error"] is None
        assert [job.attempt for job in recorder.jobs] == [1, 2]


async def test_signed_body_that_is_not_json_fails_and_is_not_retried(tmp_path):
    recorder = Recorder()
    async with running_server(tmp_path, recorder) as server:
        assert (await server.post("pull_request", b"{not json", "d-bad"))[0] == 202
        record = await server.wait_state("d-bad", "failed")
        assert record["error"].startswith("the body is not valid JSON")
        assert (await server.post("pull_request", b"[1, 2]", "d-list"))[0] == 202
        record = await server.wait_state("d-list", "failed")
        assert record["error"] == "the body is a JSON list, not an object"
        # a handled event missing what its job needs fails the same way
        assert (await server.post("pull_request", {"action": "opened"}, "d-empty"))[0] == 202
        record = await server.wait_state("d-empty", "failed")
        assert "repository.full_name" in record["error"]
        assert record["attempts"] == 0  # never given to the handler, never retried
        metrics = await (await server.http.get(server.url + "/metrics")).text()
        assert 'reviewer_webhook_deliveries_total{event="pull_request",outcome="invalid"} 3' in metrics
    assert recorder.jobs == []


async def test_signed_bodies_past_the_parsing_bounds_fail_with_a_clear_error(tmp_path):
    pr = json.dumps(pr_payload(9, "d" * 40))
    bodies = {  # each a delivery GitHub could sign: the dispatcher must fail it and go on
        "d-deep": ('{"action": "opened", "x": ' + "[" * 200_000 + "]" * 200_000 + "}",
                   "`x[0][0]", "nesting is deeper than 64 levels"),
        "d-deep-70": (pr[:-1] + ', "x": ' + "[" * 70 + "]" * 70 + "}", "`x[0]", "nesting is deeper than 64 levels"),
        "d-long-int": (pr[:-1] + ', "number": ' + "7" * 50_000 + "}", "`number`", "the integer has 50000 digits"),
    }
    recorder = Recorder()
    with server_log() as records:
        async with running_server(tmp_path, recorder) as server:
            for delivery, (body, _, _) in bodies.items():
                assert (await server.post("pull_request", body.encode(), delivery))[0] == 202
            for delivery, (_, where, what) in bodies.items():
                record = await server.wait_state(delivery, "failed")
                assert record["error"].startswith(where) and what in record["error"], record["error"]
            assert (await server.post("pull_request", json.loads(pr), "d-after"))[0] == 202
            await server.wait_state("d-after", "done")  # the dispatcher went on
    assert recorder.ids() == ["d-after"]
    assert tracebacks(records) == [] and any("nesting is deeper" in r.getMessage() for r in records)


async def test_malformed_deliveries_fail_alone_and_the_dispatcher_goes_on(tmp_path):
    # Found by the fuzz layer: an installation account that is not an object, or a string that is
    # not Unicode, failed the store write of the whole batch, which was retried for ever: no later
    # delivery was handled.
    recorder = Recorder()
    async with running_server(tmp_path, recorder) as server:
        for delivery, account in (("d-inst-float", 1.5), ("d-inst-login", {"login": ["x"]})):
            payload = example("installation.created")
            payload["installation"]["account"] = account
            assert (await server.post("installation", payload, delivery))[0] == 202
            record = await server.wait_state(delivery, "failed")
            assert record["error"] == "the payload's installation.account is not an object with a string login"
        # the same with half a surrogate pair, which no UTF-8 encoder (nor SQLite) takes
        body = json.dumps(pr_payload(12, "f" * 40)).replace('"synchronize"', '"\\udc00"').encode()
        assert (await server.post("pull_request", body, "d-surrogate"))[0] == 202
        record = await server.wait_state("d-surrogate", "failed")
        assert "`action` holds half of a UTF-16 surrogate pair" in record["error"]
        assert (await server.post("pull_request", pr_payload(11, "f" * 40), "d-next"))[0] == 202
        await server.wait_state("d-next", "done")
    assert recorder.ids() == ["d-next"]


async def test_healthz(tmp_path):
    async with running_server(tmp_path, Recorder()) as server:
        async with server.http.get(server.url + "/healthz") as response:
            assert response.status == 200
            assert await response.json() == {"status": "ok", "store": "ok"}


_SAMPLE = re.compile(r'^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\]|\\.)*",?)*\})? '
                     r'(-?[0-9.]+(e[+-]?[0-9]+)?|\+Inf|-Inf|NaN)$')


async def test_metrics_text_is_well_formed(tmp_path):
    recorder = Recorder()
    async with running_server(tmp_path, recorder) as server:
        await server.post("pull_request", pr_payload(9, "d" * 40), "d-m1")
        await server.post("pull_request", b"x", "d-m2", secret="wrong")
        await server.wait_state("d-m1", "done")
        async with server.http.get(server.url + "/metrics") as response:
            assert response.status == 200
            assert response.content_type == "text/plain"
            text = await response.text()
    assert text.endswith("\n")
    for line in text.splitlines():
        if line.startswith("# "):
            assert re.match(r"^# (HELP|TYPE) [a-zA-Z_:][a-zA-Z0-9_:]* \S", line), line
        else:
            assert _SAMPLE.match(line), line
    assert 'reviewer_webhook_deliveries_total{event="pull_request",outcome="queued"} 1' in text
    assert 'reviewer_webhook_rejected_total{status="401"} 1' in text
    assert 'reviewer_jobs_total{event="pull_request",outcome="done"} 1' in text
    assert 'reviewer_job_duration_seconds_count{event="pull_request"} 1' in text
    assert 'reviewer_queue_depth{state="queued"} 0' in text
    assert "# TYPE reviewer_github_calls_total counter" in text
    assert "# TYPE reviewer_admin_config_reloads_total counter" in text


async def _raw_connection(url: str):
    host, port = url.removeprefix("http://").split(":")
    return await asyncio.open_connection(host, int(port))

