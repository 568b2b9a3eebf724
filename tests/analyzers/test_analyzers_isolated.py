"""A SARIF upload decoded in a child process (bot/analyzers/isolated.py): what it hands back, and
the bounds that act in the child (memory, time, the size of the results) rather than in the server."""

from __future__ import annotations

import json

from bot.analyzers.isolated import Decoded, decode_isolated
from bot.analyzers.model import Problem
from bot.analyzers.upload import UploadLimits
from tests.support.analyzers_support import body, log, result

MiB = 1024 * 1024


def _raw(document: object, **fields: object) -> bytes:
    return json.dumps(body(document, **fields)).encode()


async def test_an_upload_comes_back_with_its_results_as_the_store_keeps_them():
    decoded = await decode_isolated(_raw(log(result(), result(line=9))), repository_url="https://github.com/o/r")
    assert isinstance(decoded, Decoded)
    assert (decoded.ref, decoded.pull_number, decoded.tools, decoded.results) == ("refs/pull/7/head", 7, ("tool",), 2)
    stored = json.loads(decoded.results_json)
    assert [(r["path"], r["start_line"], r["rule_id"]) for r in stored] == [("src/a.py", 3, "R1"), ("src/a.py", 9, "R1")]


async def test_problems_come_back_as_the_reader_names_them():
    [problem] = await decode_isolated(_raw(log(), sarif="!!"), repository_url=None)
    assert (problem.pointer, problem.code) == ("/sarif", "not-base64")


async def test_a_document_that_needs_more_memory_than_the_child_has_is_refused_naming_the_bound():
    """Ten thousand results of twenty kilobytes each (200 MB once read, twice the bound) inside
    96 MiB: refused as too large, naming the memory the server gives an upload; the server's
    process held none of it."""
    text = "x" * 20_000
    many = b'{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"t"}},"results":[' + b",".join(
        [json.dumps({"message": {"text": text}}).encode()] * 10_000) + b"]}]}"
    limits = UploadLimits(max_inflated_bytes=2_000 * MiB)
    [problem] = await decode_isolated(_raw(many), repository_url=None, memory_bytes=96 * MiB, limits=limits)
    assert isinstance(problem, Problem) and (problem.pointer, problem.code) == ("/sarif", "too-large")
    assert "96 MiB" in problem.message


async def test_the_wall_clock_and_the_size_of_the_results_are_bounds_too():
    [slow] = await decode_isolated(_raw(log(result())), repository_url=None, timeout=0.001)
    assert slow.code == "too-large" and "took longer than the 0.001 s" in slow.message
    document = log(*(result(line=n) for n in range(1, 600)))  # about 180 kB of results
    [big] = await decode_isolated(_raw(document), repository_url=None, max_output=1000)
    assert big.code == "too-large" and "the results take more than 1,000 bytes" in big.message
