"""What the secret scanner's results mean for every other analyzer finding (pure): the lines it
flagged (bot/reviews/secret_lines.py), and the placed findings without a fix on those lines.

A ruff or ShellCheck fix, or one in an uploaded SARIF file, on a line holding a secret would be
posted as a suggestion of the whole line: the secret quoted. The caller places the results on the
diff with the flagged lines blanked (their code is then neither fingerprinted nor stored), and
drops the fixes that touch them here.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from bot.analyzers.builtin.secrets import TOOL as SECRETS_TOOL
from bot.analyzers.filter import Placement
from bot.analyzers.findings import AnalyzerFinding
from bot.analyzers.model import AnalyzerResult
from bot.reviews.secret_lines import SecretLines


def flagged(results: Iterable[AnalyzerResult]) -> SecretLines:
    """The lines the secret scanner's results are on."""
    return SecretLines(frozenset((r.path, line) for r in results if r.tool == SECRETS_TOOL and r.path
                                 and r.start_line for line in range(r.start_line, (r.end_line or r.start_line) + 1)))


def _unfixed(finding: AnalyzerFinding, secrets: SecretLines) -> AnalyzerFinding:
    if finding.fix is None or not (secrets.touches(finding.path, finding.start_line, finding.end_line)
                                   or secrets.touches(finding.path, finding.fix.start_line, finding.fix.end_line)):
        return finding
    return replace(finding, fix=None)


def guarded(placement: Placement, secrets: SecretLines) -> Placement:
    """The placement with no fix on a flagged line."""
    if not secrets:
        return placement
    return replace(placement, inline=tuple(_unfixed(f, secrets) for f in placement.inline),
                   summary=tuple(_unfixed(f, secrets) for f in placement.summary))
