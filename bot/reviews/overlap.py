"""Analyzer findings beside the model's (pure): listed in the model's prompt, so that it does not
repeat them, and a model finding that says what one of them says at the same lines left out.

Analyzer findings come here as bot/reviews/findings.py's `Finding`s whose message ends with the
tool and rule in parentheses (`... (ruff F401)`), as bot/analyzers/findings.py makes them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from bot.reviews.findings import Finding
from bot.reviews.markdown import fence

MAX_PROMPT_FINDINGS = 100
_WORD = re.compile(r"[a-z0-9_]{3,}")
_LABEL = re.compile(r"\(([^()]*)\)\s*$")


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def same_as_analyzer(model: Finding, analyzer: Sequence[Finding]) -> bool:
    """Whether a model finding says what an analyzer finding says at the same lines: the same
    file, overlapping lines, and the analyzer's rule id named in the model's message, or at least
    half the words of the shorter message shared."""
    said = _words(model.message)
    for other in analyzer:
        if other.path != model.path or other.end_line < model.start_line or model.end_line < other.start_line:
            continue
        label = _LABEL.search(other.message)
        parts = label.group(1).split() if label else []
        if len(parts) > 1 and parts[-1].lower() in model.message.lower():
            return True
        theirs = _words(_LABEL.sub("", other.message))
        if said and theirs and len(said & theirs) >= 0.5 * min(len(said), len(theirs)):
            return True
    return False


def prompt_section(findings: Sequence[Finding]) -> str:
    """The analyzer findings on the diff, for the model's prompt: reported already, not to repeat."""
    if not findings:
        return ""
    lines = [f"- {f.path}:{f.start_line}-{f.end_line} [{f.severity}] {f.message}"
             for f in findings[:MAX_PROMPT_FINDINGS]]
    if len(findings) > MAX_PROMPT_FINDINGS:
        lines.append(f"- … and {len(findings) - MAX_PROMPT_FINDINGS} more")
    return ("## Findings analyzers already reported on this diff (posted already: do not repeat them)\n"
            + fence("\n".join(lines)))
