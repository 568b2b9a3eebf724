"""Status conditions: what the two phases observed, and when each condition last flipped.

Pure: the previous conditions, the new observation and the time in; the new list out. Kubernetes'
rule is kept: `lastTransitionTime` moves only when a condition's status changes, so re-applying a
spec (or fixing one problem of several) does not look like a transition.
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.connectors.problem import SECRET_LOOKUP_FAILED, VALIDATION_FAILED, Problem

VALID_STRUCTURE = "ValidStructure"
SUCCESSFULLY_RECONCILED = "SuccessfullyReconciled"
NO_ERROR = "NoError"
MAX_MESSAGE = 32768


def observe(problems: Sequence[Problem]) -> list[tuple[str, str, str, str]]:
    """(type, status, reason, message) of both conditions for a stored (well-formed) resource."""
    structure = (VALID_STRUCTURE, "True", NO_ERROR, "The resource matches the schema.")
    if not problems:
        return [structure, (SUCCESSFULLY_RECONCILED, "True", NO_ERROR, "The connector is valid and ready.")]
    # A spec that is wrong wins over a secret that is missing: fixing it comes first.
    reason = (VALIDATION_FAILED if any(p.reason == VALIDATION_FAILED for p in problems)
              else SECRET_LOOKUP_FAILED)
    count = f"{len(problems)} problem{'s' if len(problems) > 1 else ''}"
    message = f"{count}: " + "; ".join(p.message for p in problems)
    return [structure, (SUCCESSFULLY_RECONCILED, "False", reason, _bounded(message))]


def _bounded(message: str) -> str:
    if len(message) <= MAX_MESSAGE:
        return message
    return message[: MAX_MESSAGE - 20] + " … (truncated)"


def transition(previous: Sequence[dict] | None, observed: Sequence[tuple[str, str, str, str]],
               generation: int, now: str) -> list[dict]:
    """The new conditions; each keeps its previous `lastTransitionTime` unless its status flipped."""
    before = {c.get("type"): c for c in previous or () if isinstance(c, dict)}
    result = []
    for type_, status, reason, message in observed:
        old = before.get(type_)
        since = old["lastTransitionTime"] if old and old.get("status") == status and old.get(
            "lastTransitionTime") else now
        result.append({"type": type_, "status": status, "reason": reason, "message": message,
                       "observedGeneration": generation, "lastTransitionTime": since})
    return result
