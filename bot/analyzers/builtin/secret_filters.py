"""Our filters for detect-secrets, named by their import path in its settings (its filter API:
detect-secrets calls each with the arguments its parameters name: `secret`, `filename`, `plugin`,
`line`). A filter that returns True drops a candidate; none of them keeps or logs the value.

- Placeholders: documentation and sample values are not secrets (`AKIAIOSFODNN7EXAMPLE`, AWS's own
  example key; `changeme`, `<your-token>`, `xxxxxxxx`, `dummy`, `fake`, a run of one character).
- Test fixtures: a high-entropy string or a bare keyword assignment in a test fixture or snapshot
  is far more often a hash, a recorded response or a made-up key than a credential, so those two
  generic detectors are not trusted there. Detectors of a specific format (AWS, GitHub, Slack, a
  private key, ...) still are: a real key committed in a test is still leaked.
- References: detect-secrets drops every candidate on a line that assigns a call or an index
  (`password = get_password()`), whatever the detector; that is right for the keyword detector
  alone, and would hide `client = Github("ghp_...")` or `boto3.client(aws_access_key_id="AKIA...")`.
  So its filter is replaced by one that applies to the keyword detector only.
- Hashes: a hexadecimal string of exactly 32, 40 or 64 digits on a line that calls it a hash,
  digest, checksum, commit or integrity value is what it says (the hex detector's commonest noise).
"""

from __future__ import annotations

import re
from typing import Any

_PLACEHOLDER = re.compile(
    r"example|sample|dummy|placeholder|changeme|change[_-]me|your[_-]|redacted|fake|not[_-]?a[_-]?real|"
    r"foobar|xxxx|\*\*\*\*|^<.*>$|^\$\{.*\}$|^%\(.*\)s$",
    re.IGNORECASE,
)
_FIXTURE_PATH = re.compile(
    r"(^|/)(tests?|testdata|test_data|fixtures?|__fixtures__|__snapshots__|spec|mocks?)(/|$)|\.snap$|_test\.go$",
    re.IGNORECASE,
)
_GENERIC_PLUGINS = frozenset({"Base64HighEntropyString", "HexHighEntropyString", "KeywordDetector"})
_HASH_WORDS = re.compile(r"sha1|sha256|sha512|md5|hash|digest|checksum|commit|integrity|etag|revision|\brev\b",
                         re.IGNORECASE)
_HEX_HASH = re.compile(r"[0-9a-fA-F]{32}|[0-9a-fA-F]{40}|[0-9a-fA-F]{64}")


def is_placeholder(secret: str) -> bool:
    return bool(_PLACEHOLDER.search(secret)) or len(set(secret)) <= 2


def is_generic_in_fixture(secret: str, filename: str, plugin: Any) -> bool:
    # `secret` is unused, but detect-secrets runs a filter at the stage its parameters name: with
    # it, this one runs on each candidate, where the plugin is known.
    del secret
    return type(plugin).__name__ in _GENERIC_PLUGINS and bool(_FIXTURE_PATH.search(filename))


def is_named_hash(secret: str, line: str, plugin: Any) -> bool:
    return (type(plugin).__name__ == "HexHighEntropyString" and bool(_HEX_HASH.fullmatch(secret))
            and bool(_HASH_WORDS.search(line)))


def is_keyword_reference(secret: str, line: str, plugin: Any) -> bool:
    from detect_secrets.filters.heuristic import is_indirect_reference

    del secret  # named so that the filter runs per candidate, where the plugin is known
    return type(plugin).__name__ == "KeywordDetector" and is_indirect_reference(line)


FILTERS = tuple(f"{__name__}.{name}" for name in ("is_placeholder", "is_generic_in_fixture", "is_named_hash",
                                                  "is_keyword_reference"))
REPLACED = ("detect_secrets.filters.heuristic.is_indirect_reference",)
