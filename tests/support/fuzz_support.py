"""The fuzz layer's shared parts: Hypothesis profiles, the seed corpus, its mutators, the guards.

Profiles (HYPOTHESIS_PROFILE, default `ci`):
- `ci`: derandomized, a modest fixed budget per property, no example database: the same cases on
  every run of `make test`, fast enough for a slow shared machine;
- `fuzz`: random, a large budget, failures kept in `.hypothesis/` to replay: `make fuzz`.
FUZZ_EXAMPLES overrides either budget.

The seeds are the project's real files: the configuration examples (tests/data/config), the
connector examples (docs/examples/connectors), every YAML block of the docs, and GitHub's webhook
payloads (tests/data/webhooks). Mutators change their bytes, their tokens and their structure.
"""

from __future__ import annotations

import copy
import io
import json
import logging
import os
import re
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

import bot.expr.cel  # noqa: F401  (celpy raises the recursion limit when imported: before Hypothesis notes it)
from bot.documents.yamldoc import load_yaml_stream

_SLOW_IS_FINE = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example]
settings.register_profile("ci", max_examples=100, derandomize=True, database=None, deadline=None,
                          suppress_health_check=_SLOW_IS_FINE, print_blob=True)
settings.register_profile("fuzz", max_examples=3000, deadline=None, suppress_health_check=_SLOW_IS_FINE,
                          print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
if os.environ.get("FUZZ_EXAMPLES"):
    settings.register_profile("override", settings(max_examples=int(os.environ["FUZZ_EXAMPLES"])))
    settings.load_profile("override")

ROOT = Path(__file__).resolve().parent.parent.parent
CONFIG = ROOT / "tests" / "data" / "config"
WEBHOOKS = ROOT / "tests" / "data" / "webhooks"
KINDS = ("repo-config", "admin-config", "oidc-connector", "saml-connector")


def _kind_of(text: str, name: str = "") -> str:
    if "ServiceSAMLConnector" in text or name.endswith("-saml.yaml"):
        return "saml-connector"
    if "apiVersion" in text:
        return "oidc-connector"
    if "# kind: admin-config" in text or name == "admin.yaml" or re.search(r"^(providers|accounts):", text, re.M):
        return "admin-config"
    return "repo-config"


def _doc_blocks() -> Iterator[str]:
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        yield from re.findall(r"```yaml\n(.*?)```", page.read_text(encoding="utf-8"), re.S)


def _seed_texts() -> dict[str, list[bytes]]:
    seeds: dict[str, list[bytes]] = {kind: [] for kind in KINDS}
    files = [*sorted(CONFIG.rglob("*.yaml")), *sorted((ROOT / "docs" / "examples").rglob("*.yaml"))]
    for path in files:
        text = path.read_text(encoding="utf-8")
        seeds[_kind_of(text, path.name)].append(text.encode())
    for block in _doc_blocks():
        seeds[_kind_of(block)].append(block.encode())
    return seeds


SEEDS = _seed_texts()


def _values(texts: list[bytes]) -> list[Any]:
    found = []
    for text in texts:
        docs, _ = load_yaml_stream(text)
        found += [doc.value for doc in docs if isinstance(doc.value, dict)]
    return found


SEED_VALUES = {kind: _values(texts) for kind, texts in SEEDS.items()}
WEBHOOK_PAYLOADS = {path.name.removesuffix(".json"): json.loads(path.read_text())
                    for path in sorted(WEBHOOKS.glob("*.json")) if path.name != "SOURCES.json"}


def _keys(value: Any, into: set[str]) -> set[str]:
    if isinstance(value, dict):
        for key, child in value.items():
            into.add(key)
            _keys(child, into)
    elif isinstance(value, list):
        for child in value:
            _keys(child, into)
    return into


KNOWN_KEYS = sorted(_keys([*SEED_VALUES.values(), *WEBHOOK_PAYLOADS.values()], set()))

# Tokens that change how YAML or JSON reads what follows, and values that probe the checks.
TOKENS = [b"[", b"]", b"{", b"}", b"- ", b": ", b"? ", b", ", b"&a ", b"*a", b"&b [*a, *a] ", b"<<: *a\n",
          b"!!int ", b"!!str ", b"!!binary ", b"!custom ", b"!!float ", b"!!bool ", b"!!null ", b"!!timestamp ",
          b"!!map ", b"!!seq ", b"!!set ", b"!!python/object:os.system ", b"!<tag:yaml.org,2002:float> ", b"---\n", b"...\n", b'"', b"'", b"|\n", b">-\n",
          b"\t", b"# ", b"%YAML 1.1\n", b"~", b"\\", b"\n", b"  ", b"    ", b"\r\n", b"\x00", b"\xff",
          b"\xef\xbb\xbf", b"\xe2\x80\xa8", b"0x" + b"f" * 40, b"9" * 5_000, b"0o" + b"7" * 2_000, b"1e999",
          b".nan", b"-.inf", b"true", b"null", b"{{ x }}", b"**/", b"{a,b", b"[!", b"../", b"/etc/passwd",
          b"C:\\x", b"secret://a/b", b"env://X", b"https://", b"http://127.0.0.1:1/", b"pr.draft && ",
          b"pr.labels.exists(l, ", b"matches('(a+)+$')", b"\xf0\x9f\x98\x80", b"[" * 80, b"{a: " * 70,
          b"- " * 70, b"x" * 3_000]
STRINGS = ["", " ", "*", "**", "../x", "/abs", "a" * 300, "secret://okta/client-secret", "env://HOME",
           "openai/gpt-4o", "https://example.com", "http://[::1", "!pr.draft", "pr.number > 0 &&", "{{", "<x>",
           "\u2028", "\x00", "é", "CN=x", "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"]

scalars = st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70), st.floats(allow_nan=True),
                    st.text(max_size=24), st.sampled_from(STRINGS))
json_values = st.recursive(scalars, lambda children: st.one_of(
    st.lists(children, max_size=4),
    st.dictionaries(st.one_of(st.sampled_from(KNOWN_KEYS), st.text(max_size=8)), children, max_size=4)),
    max_leaves=16)


@st.composite
def mutated_bytes(draw: st.DrawFn, seeds: list[bytes]) -> bytes:
    """A seed with a few byte- and token-level edits: flips, insertions, deletions, splices."""
    data = bytearray(draw(st.sampled_from(seeds)))
    for _ in range(draw(st.integers(1, 6))):
        at = draw(st.integers(0, len(data)))
        edit = draw(st.sampled_from(["token", "token", "byte", "delete", "duplicate", "splice", "truncate"]))
        if edit == "token":
            data[at:at] = draw(st.sampled_from(TOKENS))
        elif edit == "byte":
            data[at:at + 1] = bytes([draw(st.integers(0, 255))])
        elif edit == "delete":
            del data[at:at + draw(st.integers(1, 16))]
        elif edit == "duplicate":
            data[at:at] = data[at:at + draw(st.integers(1, 200))]
        elif edit == "splice":
            other = draw(st.sampled_from(seeds))
            start = draw(st.integers(0, len(other)))
            data[at:at] = other[start:start + draw(st.integers(1, 300))]
        else:
            del data[at:]
    return bytes(data)


def _slots(value: Any, out: list[tuple[Any, Any]]) -> list[tuple[Any, Any]]:
    """Every (container, key or index) in a value, for an edit to pick one."""
    if isinstance(value, dict):
        for key, child in value.items():
            out.append((value, key))
            _slots(child, out)
    elif isinstance(value, list):
        for index, child in enumerate(value):
            out.append((value, index))
            _slots(child, out)
    return out


@st.composite
def restructured(draw: st.DrawFn, seeds: list[Any]) -> Any:
    """A seed's value with a few structural edits: a subtree replaced, removed, renamed, wrapped."""
    value = copy.deepcopy(draw(st.sampled_from(seeds)))
    for _ in range(draw(st.integers(1, 4))):
        slots = _slots(value, [])
        if not slots:
            return draw(json_values)
        container, key = draw(st.sampled_from(slots))
        edit = draw(st.sampled_from(["replace", "replace", "delete", "rename", "wrap", "copy"]))
        if edit == "replace":
            container[key] = draw(json_values)
        elif edit == "delete":
            del container[key]
        elif edit == "rename" and isinstance(container, dict):
            container[draw(st.sampled_from(KNOWN_KEYS))] = container.pop(key)
        elif edit == "wrap":
            container[key] = draw(st.sampled_from([[container[key]], {"x": container[key]}]))
        else:
            other_container, other_key = draw(st.sampled_from(slots))
            container[key] = copy.deepcopy(other_container[other_key])
    return value


# Values past the parsers' bounds, or close to them, for `with_hostile_value`.
HOSTILE_JSON = [b"[" * 70 + b"]" * 70, b"[" * 100_000 + b"]" * 100_000, b'{"a": ' * 3_000 + b"1" + b"}" * 3_000,
                b"9" * 5_000, b"-" + b"1" * 20_000, b"0.0000001e99999", b'"' + b"x" * 200_000 + b'"', b"NaN",
                b"-Infinity", b'"\\ud800"', b"[" + b"1," * 5_000 + b"1]"]


@st.composite
def with_hostile_value(draw: st.DrawFn, seeds: list[Any]) -> bytes:
    """A seed as JSON text (which is YAML too) with one value, anywhere, replaced by a hostile one."""
    value = copy.deepcopy(draw(st.sampled_from(seeds)))
    marker = "\x00hostile\x00"
    slots = _slots(value, [])
    if slots:
        container, key = draw(st.sampled_from(slots))
        container[key] = marker
    else:
        value = marker
    return json.dumps(value).encode().replace(json.dumps(marker).encode(), draw(st.sampled_from(HOSTILE_JSON)), 1)


# Explicit tags, YAML's own and others, and values some of them cannot hold, for `with_explicit_tag`.
TAGS = ["!!int", "!!float", "!!bool", "!!null", "!!str", "!!timestamp", "!!binary", "!!map", "!!seq", "!!set",
        "!!omap", "!!pairs", "!!merge", "!!value", "!!python/object:os.system", "!!python/name:os.system", "!foo",
        "!", "!<tag:yaml.org,2002:float>", "!<!bar>"]
TAGGED = ["xyz", "1", "-1.5", "0x1F", "0o17", "017", "true", "True", "yes", "~", "null", "", "2001-12-14",
          "2001-12-14t21:59:43.10-05:00", "aGVsbG8=", ".inf", ".NaN", "1_000", "9" * 40, "'7'", '"quoted"', "[1, 2]",
          "{a: 1}", "[]", "{}"]
_TAG_MARK = "__explicit_tag_here__"


@st.composite
def with_explicit_tag(draw: st.DrawFn, seeds: list[Any]) -> bytes:
    """A seed as YAML text (flow or block) with one value, or one key, anywhere, replaced by an
    explicitly tagged one: `!!float xyz`, `!foo [1]`, `!!bool yes`, ... (a tag may hold its value
    or not)."""
    value = copy.deepcopy(draw(st.sampled_from(seeds)))
    slots = _slots(value, [])
    key = bool(slots) and draw(st.booleans())
    tag = draw(st.one_of(st.sampled_from(TAGS), st.sampled_from(TAGS[:6])))  # YAML's scalar tags half the time
    tagged = f"{tag} {draw(st.sampled_from(TAGGED))}"
    if key:
        tagged = tagged.split("[")[0].split("{")[0]  # a key in flow style: a scalar
        container, at = draw(st.sampled_from([(c, k) for c, k in slots if isinstance(c, dict)] or slots))
        if isinstance(container, dict):
            container[_TAG_MARK] = container.pop(at)
        else:
            container[at] = {_TAG_MARK: container[at]}
    elif slots:
        container, at = draw(st.sampled_from(slots))
        container[at] = _TAG_MARK
    else:
        value = _TAG_MARK
    if draw(st.booleans()):
        return json.dumps(value, indent=1).replace(json.dumps(_TAG_MARK), tagged, 1).encode()
    out = io.StringIO()
    YAML(typ="safe", pure=True).dump(value, out)
    return out.getvalue().replace(_TAG_MARK, tagged, 1).encode()


@contextmanager
def hang_guard(seconds: int = 60) -> Iterator[None]:
    """Fails an example that runs this long (a hang), by SIGALRM in the main thread. Not a speed
    check: ordinary examples take milliseconds."""

    def expire(signum: int, frame: Any) -> None:
        raise TimeoutError(f"still running after {seconds} s: a hang")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


class _Keep(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@contextmanager
def server_log() -> Iterator[list[logging.LogRecord]]:
    """Every record of the `reviewer` and `aiohttp` loggers, from any thread; attached to them
    directly, as the server's logging does not propagate once configured."""
    keep = _Keep()
    loggers = [logging.getLogger(name) for name in ("reviewer", "aiohttp")]
    for logger in loggers:
        logger.addHandler(keep)
    try:
        yield keep.records
    finally:
        for logger in loggers:
            logger.removeHandler(keep)


def tracebacks(records: list[logging.LogRecord]) -> list[str]:
    """The records that carry an exception or were logged at ERROR: what a 5xx or a crash leaves."""
    return [f"{r.name}: {r.getMessage()}" for r in records if r.exc_info or r.levelno >= logging.ERROR]
