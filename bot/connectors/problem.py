"""What the reconcile phase finds: a problem at a field, and which condition reason it yields."""

from __future__ import annotations

from dataclasses import dataclass

from bot.documents.pointers import human_pointer

VALIDATION_FAILED = "ValidationFailed"
SECRET_LOOKUP_FAILED = "SecretLookupFailed"


@dataclass(frozen=True)
class Problem:
    """One reconcile failure. `message` starts with the field's name and says what to do."""

    pointer: str  # from the document root: /spec/client_id
    code: str  # the stable kebab-case code of docs/connectors.md
    message: str
    reason: str = VALIDATION_FAILED


def problem(pointer: str, code: str, text: str, reason: str = VALIDATION_FAILED) -> Problem:
    """A problem whose message names the field first: "`spec.acs` is required: …"."""
    return Problem(pointer, code, f"{human_pointer(pointer)} {text}", reason)
