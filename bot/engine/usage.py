"""What one review asked of its models: calls and tokens per model, and tool rounds.

The providers' clients fill it in as requests go out and answers come back (`sent`, `answered`);
`reviewer eval` reads it for a review's cost. Tokens are the provider's own count (the `usage` of
an OpenAI-compatible answer); an answer without one is counted as `unreported`, never guessed, so
that a cost figure is either the provider's or visibly incomplete. A tool loop (a model asking
for repository content before it answers) counts each of its rounds with `tool_round`.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(slots=True)
class ModelUsage:
    calls: int = 0  # requests sent, a retry without `response_format` included
    answered: int = 0  # requests that got an answer (HTTP 200)
    prompt_tokens: int = 0
    answer_tokens: int = 0
    unreported: int = 0  # answers that gave no token counts

    def to_json(self) -> dict:
        return {"calls": self.calls, "answered": self.answered, "promptTokens": self.prompt_tokens,
                "answerTokens": self.answer_tokens, "unreported": self.unreported}


@dataclass(slots=True)
class Usage:
    models: dict[str, ModelUsage] = field(default_factory=dict)  # `<provider>/<model>` → its usage
    tool_rounds: int = 0

    def _of(self, ref: str) -> ModelUsage:
        return self.models.setdefault(ref, ModelUsage())

    def sent(self, ref: str) -> None:
        self._of(ref).calls += 1

    def answered(self, ref: str, prompt_tokens: int | None, answer_tokens: int | None) -> None:
        used = self._of(ref)
        used.answered += 1
        if prompt_tokens is None or answer_tokens is None:
            used.unreported += 1
            return
        used.prompt_tokens += prompt_tokens
        used.answer_tokens += answer_tokens

    def tool_round(self) -> None:
        self.tool_rounds += 1

    @property
    def calls(self) -> int:
        return sum(m.calls for m in self.models.values())

    @property
    def prompt_tokens(self) -> int:
        return sum(m.prompt_tokens for m in self.models.values())

    @property
    def answer_tokens(self) -> int:
        return sum(m.answer_tokens for m in self.models.values())


def reported_tokens(payload: object) -> tuple[int | None, int | None]:
    """(prompt tokens, answer tokens) of an OpenAI-compatible answer's `usage`, each None when
    absent or not a count (a server may omit it, or send something else)."""
    usage = payload.get("usage") if isinstance(payload, dict) else None
    if not isinstance(usage, dict):
        return None, None

    def count(key: str) -> int | None:
        value = usage.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None

    return count("prompt_tokens"), count("completion_tokens")
