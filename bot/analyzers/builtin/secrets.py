"""Secret scanning of the lines a pull request adds, with detect-secrets, as a SARIF log.

Run in this process, on the added lines' text only (detect-secrets' `scan_diff` over the pull
request's patches): nothing is written to disk, so the value is never in a temporary file, and
no process is started per review. Every detect-secrets plugin runs except the public-IP one
(an address is not a credential), with detect-secrets' default filters (sequential strings,
UUIDs, ids, templates, lock files, ...) and ours (bot/analyzers/builtin/secret_filters.py:
placeholders, generic detectors in test fixtures, named hashes, and indirect references for the
keyword detector only).

A finding names the kind of secret and the line, is blocking (security-severity 9.5), and never
quotes the value: not in the message, the rule, the fingerprint (the line's text with the value
cut out, hashed) or a fix (there is none). detect-secrets keeps its settings in one global
object, so scans take turns under a lock, and its logger is kept quiet while one runs.
"""

from __future__ import annotations

import hashlib
import logging
import re
import threading
from collections.abc import Mapping
from typing import Any

from bot.analyzers.builtin.secret_filters import FILTERS, REPLACED
from bot.reviews.diff import FilePatch

TOOL = "detect-secrets"
SECURITY_SEVERITY = "9.5"
_EXCLUDED_PLUGINS = frozenset({"IPPublicDetector"})
_GENERIC_KINDS = frozenset({"Base64 High Entropy String", "Hex High Entropy String"})
_LOCK = threading.Lock()
_SLUG = re.compile(r"[^a-z0-9]+")


def _diff(patches: Mapping[str, FilePatch]) -> str:
    """A unified diff of the added and context lines, as unidiff (detect-secrets' reader) takes it."""
    out: list[str] = []
    for path, patch in patches.items():
        if not patch.hunks or patch.status == "removed":
            continue
        out += [f"--- a/{path}", f"+++ b/{path}"]
        for hunk in patch.hunks:
            kept = [line for line in hunk.lines if line.kind in " +"]
            start = kept[0].new_line if kept else hunk.new_start
            context = sum(line.kind == " " for line in kept)
            out.append(f"@@ -{start},{context} +{start},{len(kept)} @@")
            out += [(" " if line.kind == " " else "+") + line.text for line in kept]
    return "\n".join(out) + "\n" if out else ""


def _rule_id(kind: str) -> str:
    return _SLUG.sub("-", kind.lower()).strip("-") or "secret"


def _line_texts(patches: Mapping[str, FilePatch]) -> dict[tuple[str, int], str]:
    return {(path, line.new_line): line.text for path, patch in patches.items() for hunk in patch.hunks
            for line in hunk.lines if line.kind == "+" and line.new_line is not None}


def scan_secrets(patches: Mapping[str, FilePatch]) -> dict[str, Any]:
    """The secrets in the lines the patches add, as a SARIF log (relative paths, no values)."""
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.core.scan import scan_diff
    from detect_secrets.settings import get_filters, get_settings, transient_settings

    diff = _diff(patches)
    texts = _line_texts(patches)
    found: dict[tuple[str, int, str], str] = {}  # (path, line, kind) → a fingerprint of the line without the value
    if diff:
        classes: list[type] = list(get_mapping_from_secret_type_to_class().values())
        plugins = [{"name": cls.__name__} for cls in classes if cls.__name__ not in _EXCLUDED_PLUGINS]
        logger = logging.getLogger("detect-secrets")
        with _LOCK, transient_settings({"plugins_used": plugins}):
            settings = get_settings()
            # The files are not on disk (only their added lines are scanned): the filter that drops
            # a file it cannot find would drop them all, as detect-secrets' own `scan_line` knows.
            settings.disable_filters("detect_secrets.filters.common.is_invalid_file", *REPLACED)
            for path in FILTERS:
                settings.filters[path] = {}
            get_filters.cache_clear()
            level, logger.level = logger.level, logging.CRITICAL
            try:
                for secret in scan_diff(diff):
                    key = (secret.filename, secret.line_number, secret.type)
                    if key not in found and secret.secret_value:
                        redacted = texts.get((secret.filename, secret.line_number), "").replace(secret.secret_value, "")
                        found[key] = hashlib.sha256(f"{secret.type}\x00{redacted.strip()}".encode()).hexdigest()[:32]
            finally:
                logger.level = level
    return _log(_most_specific(found))


def _most_specific(found: dict[tuple[str, int, str], str]) -> dict[tuple[str, int, str], str]:
    """One finding per secret: a high-entropy match on a line where a detector of a known format
    (a GitHub token, an AWS key) found one is the same value seen twice."""
    specific = {(path, line) for path, line, kind in found if kind not in _GENERIC_KINDS}
    return {key: value for key, value in found.items() if key[2] not in _GENERIC_KINDS or key[:2] not in specific}


def _log(found: Mapping[tuple[str, int, str], str]) -> dict[str, Any]:
    kinds = sorted({kind for _, _, kind in found})
    rules = [{"id": _rule_id(kind), "name": kind, "shortDescription": {"text": f"{kind} in the change"},
              "defaultConfiguration": {"level": "error"},
              "properties": {"tags": ["security", "secret"], "security-severity": SECURITY_SEVERITY}}
             for kind in kinds]
    results = [{
        "ruleId": _rule_id(kind), "level": "error",
        "message": {"text": f"{kind} added on line {line}: the value is not shown here. Remove it from the change "
                            "and revoke it: it stays in the branch's history."},
        "locations": [{"physicalLocation": {"artifactLocation": {"uri": path},
                                            "region": {"startLine": line, "endLine": line}}}],
        "partialFingerprints": {"detectSecretsLine/v1": digest},
    } for (path, line, kind), digest in sorted(found.items())]
    return {"version": "2.1.0", "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
            "runs": [{"tool": {"driver": {"name": TOOL, "informationUri": "https://github.com/Yelp/detect-secrets",
                                          "rules": rules}}, "results": results}]}
