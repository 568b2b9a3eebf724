"""GitHub's SARIF upload body, decoded; and the hostile ones, refused with the problem named."""

import base64
import gzip
import json
import struct
import tracemalloc
import zlib

import pytest

from bot.analyzers.model import Problem
from bot.analyzers.upload import MAX_BODY_BYTES, Upload, UploadLimits, _inflate, decode_upload, decode_upload_body
from tests.support.analyzers_support import SHA, body, encode, gzip_bomb, load, log, result


def refused(value, **kwargs) -> list[Problem]:
    out = decode_upload(value, **kwargs)
    assert isinstance(out, list) and out, out
    return out


def test_githubs_body_decodes_to_the_upload_and_its_results():
    upload = decode_upload(body(load("codeql-python.sarif"), tool_name="CodeQL", started_at="2026-11-27T08:00:00Z",
                                checkout_uri="file:///home/runner/work/app/app"))
    assert isinstance(upload, Upload)
    assert (upload.commit_sha, upload.ref, upload.pull_number, upload.tool_name) == (SHA, "refs/pull/7/head", 7,
                                                                                      "CodeQL")
    assert [r.rule_id for r in upload.results] == ["py/sql-injection", "py/unused-import", "py/code-injection"]
    assert upload.tools == ("CodeQL",) and upload.sarif_bytes > 1000


@pytest.mark.parametrize("ref, number", [("refs/heads/feature/x", None), ("refs/pull/12/merge", 12),
                                         ("refs/tags/v1.0", None)])
def test_branch_tag_and_pull_refs_are_taken(ref, number):
    upload = decode_upload(body(log(result()), ref=ref))
    assert isinstance(upload, Upload) and upload.pull_number == number


def test_the_raw_body_is_bounded_json():
    assert decode_upload_body(json.dumps(body(log(result()))).encode()).results[0].path == "src/a.py"
    [problem] = decode_upload_body(b"{not json")
    assert problem.code == "not-json"
    [problem] = decode_upload_body(b"[" * 100 + b"]" * 100)
    assert problem.code == "too-deep"
    assert MAX_BODY_BYTES > (10 * 1024 * 1024) * 4 // 3


@pytest.mark.parametrize("change, pointer, code", [
    ({"commit_sha": "abc"}, "/commit_sha", "pattern"),
    ({"commit_sha": SHA.upper()}, "/commit_sha", "pattern"),
    ({"ref": "main"}, "/ref", "pattern"),
    ({"ref": "refs/pull/x/head"}, "/ref", "pattern"),
    ({"ref": "refs/heads/a\nb"}, "/ref", "pattern"),
    ({"sarif": 7}, "/sarif", "type"),
    ({"started_at": "yesterday"}, "/started_at", "format"),
    ({"tool_name": "x" * 300}, "/tool_name", "pattern"),
    ({"extra": 1}, "/extra", "unknown-property"),
])
def test_each_bad_field_is_named(change, pointer, code):
    problems = refused({**body(log(result())), **change})
    assert [(p.pointer, p.code) for p in problems] == [(pointer, code)]


def test_missing_fields_are_each_named():
    assert {p.pointer for p in refused({})} == {"/commit_sha", "/ref", "/sarif"}
    assert refused("a string")[0].code == "type"


def test_not_base64_is_refused():
    [problem] = refused({**body(log()), "sarif": "!!!not base64!!!"})
    assert (problem.pointer, problem.code) == ("/sarif", "not-base64")


def test_base64_wrapped_at_76_columns_as_the_base64_command_writes_it_is_taken():
    text = encode(log(result()))
    wrapped = "\n".join(text[i:i + 76] for i in range(0, len(text), 76)) + "\n"
    assert isinstance(decode_upload({**body(log()), "sarif": wrapped}), Upload)


def test_not_gzip_is_refused():
    plain = base64.b64encode(json.dumps(log()).encode()).decode()
    [problem] = refused({**body(log()), "sarif": plain})
    assert problem.code == "not-gzip" and "gzip" in problem.message


def test_a_cut_or_corrupt_gzip_stream_is_refused():
    whole = gzip.compress(json.dumps(log(result())).encode())
    for broken in (whole[: len(whole) // 2], whole[:12] + b"\x00" * 20 + whole[32:], whole + b"trailing"):
        [problem] = refused({**body(log()), "sarif": base64.b64encode(broken).decode()})
        assert problem.code == "not-gzip"


def test_a_gzip_bomb_is_refused_without_inflating_it_all():
    # 1 GiB of zeros compresses to about 1 MB: inflated in 1 MB chunks, refused past the 100 MB cap.
    bomb = gzip_bomb(1024 * 1024 * 1024)
    assert len(bomb) < 2 * 1024 * 1024
    [problem] = refused({**body(log()), "sarif": base64.b64encode(bomb).decode()})
    assert (problem.pointer, problem.code) == ("/sarif", "too-large") and "100,000,000" not in problem.message
    assert "104,857,600" in problem.message


def test_the_compressed_size_is_githubs_10_mb():
    small = UploadLimits(max_compressed_bytes=1000)
    noise = json.dumps(log(result(message={"text": base64.b64encode(bytes(range(256)) * 40).decode()})))
    [problem] = refused(body(noise.encode()), limits=small)
    assert problem.code == "too-large" and "1,000 bytes" in problem.message


def test_several_gzip_members_are_one_file():
    text = json.dumps(log(result())).encode()
    two = gzip.compress(text[:10]) + gzip.compress(text[10:])
    assert isinstance(decode_upload({**body(log()), "sarif": base64.b64encode(two).decode()}), Upload)


def test_gzip_members_past_the_cap_are_refused():
    text = json.dumps(log(result())).encode()
    limits = UploadLimits(max_gzip_members=8)
    pieces = [text[i:i + len(text) // 8 + 1] for i in range(0, len(text), len(text) // 8 + 1)]
    assert len(pieces) <= 8
    many = b"".join(gzip.compress(piece) for piece in pieces)
    assert isinstance(decode_upload({**body(log()), "sarif": base64.b64encode(many).decode()}, limits=limits), Upload)
    empty = many + gzip.compress(b"") * (9 - len(pieces))
    [problem] = refused({**body(log()), "sarif": base64.b64encode(empty).decode()}, limits=limits)
    assert (problem.pointer, problem.code) == ("/sarif", "too-large") and "more than 8 gzip members" in problem.message


def _commented_member(comment: bytes, payload: bytes = b"") -> bytes:
    """A gzip member whose header carries a comment (FCOMMENT): long data that inflates to little."""
    deflate = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
    data = deflate.compress(payload) + deflate.flush()
    header = b"\x1f\x8b\x08\x10" + b"\0\0\0\0" + b"\x00\xff" + comment + b"\0"
    return header + data + struct.pack("<II", zlib.crc32(payload), len(payload))


def test_gzip_members_are_read_by_offset_never_copying_the_rest_of_the_data():
    """Each member used to leave the rest of the data in zlib's `unused_data`, a copy: many members
    made decoding quadratic (a 9.8 MB body of empty members took 78 s of CPU). Eight members of
    1 MiB each (a header comment, nothing inflated) are read allocating a step's worth, not the
    7 MiB still to read after the first."""
    text = json.dumps(log(result())).encode()
    data = b"".join(_commented_member(b"c" * (1024 * 1024)) for _ in range(8)) + _commented_member(b"", text)
    tracemalloc.start()
    try:
        inflated = _inflate(data, UploadLimits())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert bytes(inflated) == text
    assert peak < 512 * 1024, peak


def test_json_objects_and_arrays_past_the_cap_are_refused_before_parsing():
    """`[{},{},…]` costs 3 bytes of text a container and ~70 bytes parsed: counted in the text
    first. Brackets inside strings do not count."""
    limits = UploadLimits(max_json_containers=1000)
    results = ",".join(["{}"] * 990)
    many = f'{{"version":"2.1.0","runs":[{{"tool":{{"driver":{{"name":"t"}}}},"results":[{results}]}}]}}'.encode()
    [problem] = refused(body(many.replace(b"{}", b"{},{}", 11)), limits=limits)
    assert (problem.pointer, problem.code) == ("/sarif", "too-large")
    assert "more than 1,000 JSON objects and arrays" in problem.message
    problems = refused(body(many), limits=limits)  # within the cap: parsed, then refused as SARIF
    assert problems[0].code != "too-large"
    worded = log(result(message={"text": "[{" * 3000}))
    assert isinstance(decode_upload(body(worded), limits=limits), Upload)


def test_inflated_text_that_is_not_json_is_refused():
    [problem] = refused(body(b"<sarif/>"))
    assert (problem.pointer, problem.code) == ("/sarif", "not-json")


def test_not_sarif_2_1_0_is_refused_inside_the_document():
    [problem] = refused(body({**log(), "version": "2.0.0"}))
    assert (problem.pointer, problem.code) == ("/sarif/version", "sarif-version")


def test_one_hundred_thousand_results_are_refused():
    # The log's JSON text, its 100,000 results joined from 500 written once: the same upload as
    # json.dumps of the whole log, without building 100,000 results here first.
    lines = [json.dumps(result(line=n)).encode() for n in range(1, 501)]
    head, tail = json.dumps(log()).encode().split(b'"results": []')
    many = head + b'"results": [' + b", ".join(lines[n % 500] for n in range(100_000)) + b"]" + tail
    assert many.count(b'"ruleId"') == 100_000
    [problem] = refused(body(many))
    assert (problem.pointer, problem.code) == ("/sarif/runs/0/results", "too-many")
    assert "100,000 results" in problem.message and "25,000" in problem.message


def test_twenty_one_runs_are_refused():
    run = log(result())["runs"][0]
    [problem] = refused(body({"version": "2.1.0", "runs": [run] * 21}))
    assert (problem.pointer, problem.code) == ("/sarif/runs", "too-many")


@pytest.mark.parametrize("uri", ["../../etc/passwd", "/etc/passwd", "file:///etc/passwd",
                                 "https://evil.example/x.py", "file:///home/runner/work/app/other/x.py"])
def test_uris_outside_the_repository_refuse_the_whole_upload(uri):
    document = log(result(), result(uri=uri))
    problems = refused(body(document, checkout_uri="file:///home/runner/work/app/app"))
    assert [(p.pointer, p.code) for p in problems] == [
        ("/sarif/runs/0/results/1/locations/0/physicalLocation/artifactLocation/uri", "uri-outside-repository")]


def test_absolute_uris_under_the_checkout_uri_are_taken():
    document = log(result(uri="file:///home/runner/work/app/app/src/a.py"))
    upload = decode_upload(body(document, checkout_uri="file:///home/runner/work/app/app/"))
    assert upload.results[0].path == "src/a.py"


def test_no_problem_message_quotes_the_uploaded_content():
    secret = "AKIAZZZZZZZZZZZZZZZZ-not-a-path"
    for document in (log(result(message={"text": secret * 10_000})), {**log(), "version": secret}):
        for problem in refused(body(document)):
            assert secret not in problem.message
