"""GitHub's SARIF upload body, decoded (pure): `POST /repos/{owner}/{repo}/code-scanning/sarifs`.

`{"commit_sha": 40 hex, "ref": "refs/heads/…" | "refs/pull/N/head" | "refs/pull/N/merge" |
"refs/tags/…", "sarif": base64 of gzip of a SARIF 2.1.0 log, "checkout_uri"?, "started_at"?,
"tool_name"?}` — GitHub's own request body, so that a CI job already uploading to code scanning
can upload here by changing the URL.

Every step is bounded before it is taken, since the body comes from any CI job holding a token,
and bounded by the work it makes, not only by bytes: the encoded text by GitHub's 10 MB limit on
the compressed file (its "SARIF file is too large"); the gzip members by `max_gzip_members`, each
inflated by moving an offset through the data (never copying the rest of it per member) and in
chunks, so that a gzip bomb is refused once the inflated document passes `max_inflated_bytes`
(100 MB by default) and the rest is never inflated; the JSON's objects and arrays are counted in
the text before it is parsed (`max_json_containers`: `[{},{},…]` costs 3 bytes of text and about
70 bytes once parsed); then the JSON's depth and integers (bot/documents/jsonbody.py), then SARIF's
shape and GitHub's limits, and every location's URI (bot/analyzers/uris.py). The server runs all of
this in a child process with a memory and CPU limit (bot/analyzers/isolated.py), never on its
event loop or the thread pool its stores use. The answer is either an `Upload` or the problems, each naming its place as a
JSON pointer into the body (`/sarif/runs/0/...` inside the document) and a stable code.
"""

from __future__ import annotations

import base64
import binascii
import gzip
import json
import re
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from bot.analyzers.model import AnalyzerResult, Problem
from bot.analyzers.sarif import GITHUB_LIMITS, Limits, read_sarif
from bot.documents.jsonbody import JsonBodyError, count_containers, parse_json

MAX_COMPRESSED_BYTES = 10 * 1024 * 1024  # GitHub's limit on the gzipped SARIF file
MAX_INFLATED_BYTES = 100 * 1024 * 1024
MAX_GZIP_MEMBERS = 64  # `cat a.gz b.gz` makes a few; thousands of empty ones are only work
MAX_JSON_CONTAINERS = 1_000_000  # objects and arrays: GitHub's limits need far fewer for 25,000 results
# The body as sent: the base64 of MAX_COMPRESSED_BYTES, and room for the other fields. An HTTP
# endpoint should refuse a longer body before reading it (phase 2's route reads at most this).
MAX_BODY_BYTES = (MAX_COMPRESSED_BYTES * 4) // 3 + 64 * 1024
_CHUNK = 1024 * 1024  # inflated bytes a step
_INPUT_CHUNK = 64 * 1024  # compressed bytes handed to zlib a step: what it may copy back, at most
_SHA = re.compile(r"[0-9a-f]{40}\Z")
_REF = re.compile(r"refs/(heads|tags)/[^\s\x00-\x1f\x7f~^:?*\[\\]+\Z|refs/pull/([1-9][0-9]{0,9})/(head|merge)\Z")
_WHITESPACE = re.compile(rb"[ \t\r\n]+")
_FIELDS = ("commit_sha", "ref", "sarif", "checkout_uri", "started_at", "tool_name", "validate")
MAX_REF_CHARS = 1024
MAX_TOOL_NAME_CHARS = 256
MAX_CHECKOUT_URI_CHARS = 4096


@dataclass(frozen=True)
class UploadLimits:
    max_compressed_bytes: int = MAX_COMPRESSED_BYTES
    max_inflated_bytes: int = MAX_INFLATED_BYTES
    max_gzip_members: int = MAX_GZIP_MEMBERS
    max_json_containers: int = MAX_JSON_CONTAINERS
    sarif: Limits = GITHUB_LIMITS


@dataclass(frozen=True)
class Upload:
    commit_sha: str
    ref: str
    pull_number: int | None  # N of refs/pull/N/head or /merge
    tool_name: str | None  # the analysis' name as the uploader gave it; each result keeps its run's tool
    checkout_uri: str | None
    started_at: str | None
    sarif_bytes: int  # the inflated document's size
    results: tuple[AnalyzerResult, ...]
    skipped: Mapping[str, int]
    tools: tuple[str, ...]


class _Refusal(Exception):
    def __init__(self, problem: Problem) -> None:
        super().__init__(problem.message)
        self.problem = problem


def error_body(problems: list[Problem]) -> dict[str, Any]:
    """The answer to a refused upload, as GitHub shapes its errors (`message`), with each problem."""
    return {"message": f"the SARIF upload is refused: {problems[0].message}"
                       + (f" (and {len(problems) - 1} more problem(s))" if len(problems) > 1 else ""),
            "errors": [problem.to_json() for problem in problems]}


def encode_sarif(document: Any) -> str:
    """A SARIF log as the upload's `sarif` field: base64 of gzip of its JSON text."""
    text = json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return base64.b64encode(gzip.compress(text, mtime=0)).decode("ascii")


def decode_upload_body(raw: bytes, *, repository_url: str | None = None,
                       limits: UploadLimits = UploadLimits()) -> Upload | list[Problem]:
    """The request body as bytes, parsed as bounded JSON, then `decode_upload`."""
    try:
        body = parse_json(raw)
    except JsonBodyError as exc:
        return [Problem(exc.pointer, "not-json" if exc.code == "syntax" else exc.code, exc.message)]
    return decode_upload(body, repository_url=repository_url, limits=limits)


def decode_upload(body: Any, *, repository_url: str | None = None,
                  limits: UploadLimits = UploadLimits()) -> Upload | list[Problem]:
    """A parsed upload body → the upload and its results, or every problem found (never raises).

    `repository_url` ("https://github.com/o/r"), where given, lets a result name a file by its web
    address in that repository; any other web address is outside the repository."""
    if not isinstance(body, dict):
        return [Problem("", "type", "the body must be a JSON object")]
    problems = _fields(body)
    if problems:
        return problems
    try:
        inflated = _inflate(_unbase64(body["sarif"], limits), limits)
        _count_containers(inflated, limits)
        size = len(inflated)
        text = inflated.decode("utf-8")
    except _Refusal as refusal:
        return [refusal.problem]
    except UnicodeDecodeError as exc:
        return [Problem("/sarif", "not-json", f"/sarif: the inflated file is not UTF-8 text (byte {exc.start})")]
    del inflated  # the text alone is parsed: the bytes it came from are not held beside the document
    try:
        document = parse_json(text)
    except JsonBodyError as exc:
        code = "not-json" if exc.code == "syntax" else exc.code
        return [Problem("/sarif" + exc.pointer, code, f"/sarif: the inflated file is not a usable JSON document: "
                                                      f"{exc.message}")]
    del text
    read = read_sarif(document, checkout_uri=body.get("checkout_uri"), repository_url=repository_url,
                      limits=limits.sarif, pointer_base="/sarif")
    if read.problems:
        return list(read.problems)
    pull = _REF.match(body["ref"])
    return Upload(body["commit_sha"], body["ref"], int(pull[2]) if pull and pull[2] else None,
                  body.get("tool_name"), body.get("checkout_uri"), body.get("started_at"), size,
                  read.results, read.skipped, read.tools)


def _fields(body: dict) -> list[Problem]:
    problems = [Problem(f"/{key[:100]}", "unknown-property", f"/{key[:100]}: not a field of a SARIF upload "
                                                             f"(the fields are {', '.join(_FIELDS)})")
                for key in body if key not in _FIELDS]
    for key in ("commit_sha", "ref", "sarif"):
        if key not in body:
            problems.append(Problem(f"/{key}", "required", f"/{key}: required"))
        elif not isinstance(body[key], str):
            problems.append(Problem(f"/{key}", "type", f"/{key}: a string is required"))
    sha, ref = body.get("commit_sha"), body.get("ref")
    if isinstance(sha, str) and not _SHA.match(sha):
        problems.append(Problem("/commit_sha", "pattern", "/commit_sha: must be a commit's 40 lowercase hexadecimal "
                                                          "digits"))
    if isinstance(ref, str) and (len(ref) > MAX_REF_CHARS or not _REF.match(ref)):
        problems.append(Problem("/ref", "pattern", "/ref: must be a full reference: refs/heads/BRANCH, "
                                                   "refs/tags/TAG, refs/pull/N/head or refs/pull/N/merge"))
    problems += _optional(body, "tool_name", MAX_TOOL_NAME_CHARS)
    problems += _optional(body, "checkout_uri", MAX_CHECKOUT_URI_CHARS)
    started = body.get("started_at")
    if started is not None and (not isinstance(started, str) or not _iso_time(started)):
        problems.append(Problem("/started_at", "format", "/started_at: an ISO 8601 time such as "
                                                         "2026-01-31T12:00:00Z is required"))
    if "validate" in body and not isinstance(body["validate"], bool):
        problems.append(Problem("/validate", "type", "/validate: a boolean is required"))
    return problems


def _optional(body: dict, key: str, limit: int) -> list[Problem]:
    value = body.get(key)
    if value is None:
        return []
    if not isinstance(value, str) or not value.strip():
        return [Problem(f"/{key}", "type", f"/{key}: a non-empty string is required")]
    if len(value) > limit or re.search(r"[\x00-\x1f\x7f]", value):
        return [Problem(f"/{key}", "pattern", f"/{key}: at most {limit} characters, without control characters")]
    return []


def _iso_time(text: str) -> bool:
    if len(text) > 64:
        return False
    try:
        datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return False
    return True


def _unbase64(text: str, limits: UploadLimits) -> bytes:
    """Standard base64, line breaks allowed (`base64` wraps at 76 columns unless told `-w0`)."""
    limit = (limits.max_compressed_bytes * 4) // 3 + 4
    if len(text) > limit + limit // 38:  # room for a line break every 76 characters
        raise _Refusal(Problem("/sarif", "too-large", f"/sarif: the gzipped file is larger than "
                                                      f"{limits.max_compressed_bytes:,} bytes (GitHub's limit)"))
    try:
        raw = _WHITESPACE.sub(b"", text.encode("ascii"))
        data = base64.b64decode(raw, validate=True)
    except (UnicodeEncodeError, binascii.Error, ValueError):
        raise _Refusal(Problem("/sarif", "not-base64", "/sarif: is not base64 (the standard alphabet, `=` padded) "
                                                       "of the gzipped SARIF file")) from None
    if len(data) > limits.max_compressed_bytes:
        raise _Refusal(Problem("/sarif", "too-large", f"/sarif: the gzipped file is larger than "
                                                      f"{limits.max_compressed_bytes:,} bytes (GitHub's limit)"))
    return data


def _inflate(data: bytes, limits: UploadLimits) -> bytearray:
    """Gzip members inflated a chunk at a time, at most `max_gzip_members` of them; past the
    inflated cap, refused with the rest left alone. An offset moves through `data`: zlib is handed
    at most _INPUT_CHUNK bytes a step, so what it hands back unused is never the rest of the data
    (copying that once per member made many small members quadratic)."""
    if not data.startswith(b"\x1f\x8b"):
        raise _Refusal(Problem("/sarif", "not-gzip", "/sarif: the decoded bytes are not gzip (no gzip header); "
                                                     "compress the SARIF file with gzip before base64"))
    view = memoryview(data)
    out = bytearray()
    offset = members = 0
    while offset < len(data):
        if data[offset:offset + 2] != b"\x1f\x8b":
            raise _Refusal(Problem("/sarif", "not-gzip", "/sarif: bytes follow the gzip data"))
        members += 1
        if members > limits.max_gzip_members:
            raise _Refusal(Problem("/sarif", "too-large", f"/sarif: more than {limits.max_gzip_members} gzip members "
                                                          "(compress the file as one)"))
        offset = _member(view, offset, out, limits)
    return out


def _member(view: memoryview, offset: int, out: bytearray, limits: UploadLimits) -> int:
    """Inflate the gzip member at `offset` onto `out`; the offset just past it."""
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        while not inflater.eof:
            if offset >= len(view):
                raise _Refusal(Problem("/sarif", "not-gzip", "/sarif: the gzip data is cut short"))
            piece = view[offset:offset + _INPUT_CHUNK]
            out += inflater.decompress(piece, _CHUNK)
            offset += len(piece) - len(inflater.unconsumed_tail) - len(inflater.unused_data)
            if len(out) > limits.max_inflated_bytes:
                raise _Refusal(Problem("/sarif", "too-large", f"/sarif: inflates to more than "
                                                              f"{limits.max_inflated_bytes:,} bytes"))
    except zlib.error:
        raise _Refusal(Problem("/sarif", "not-gzip", "/sarif: the gzip data is corrupt")) from None
    return offset


def _count_containers(text: bytes | bytearray, limits: UploadLimits) -> None:
    """Refuse a document with more objects and arrays than `max_json_containers`, counted in its
    text before anything is parsed (bot/documents/jsonbody.py `count_containers`)."""
    if count_containers(text, limits.max_json_containers) > limits.max_json_containers:
        raise _Refusal(Problem("/sarif", "too-large", f"/sarif: the file holds more than "
                                                      f"{limits.max_json_containers:,} JSON objects and arrays"))
