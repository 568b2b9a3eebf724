"""Fitting a large pull request into the model's context: the files of one review split into
requests that each fit (pure).

A model's context is counted in tokens, which this code cannot count without the model's own
tokenizer; `BYTES_PER_TOKEN` is a deliberately low estimate for code (tokenizers average 3.5 to
4 bytes a token on source text), so a request sized with it fits. Every request carries the same
rules, context and agent files; the diff of the plan's files is shared out among the requests in
the plan's order. A file whose diff alone is larger than one request's room gets a request of its
own, where the diff section cuts it and says so (the summary's notes name it): nothing is dropped
silently.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from bot.config.model import Provider
from bot.engine.providers import split_model_ref
from bot.reviews.diff import FilePatch, render_hunk

DEFAULT_CONTEXT_TOKENS = 32_000
BYTES_PER_TOKEN = 3
ANSWER_TOKENS = 4_000  # kept free for the model's answer
MIN_DIFF_ROOM = 4_000  # bytes of diff a request always gets, however large the rest is
MAX_PARALLEL = 3  # requests of one review in flight at once


def context_tokens(models: Mapping[str, str | None], providers: Mapping[str, Provider]) -> int:
    """The smallest context among the review and fallback models (either may answer any request);
    a model that declares none counts as DEFAULT_CONTEXT_TOKENS."""
    sizes = []
    for ref in (models.get("review"), models.get("fallback")):
        if not ref or "/" not in ref:
            continue
        provider_name, model = split_model_ref(ref)
        provider = providers.get(provider_name)
        declared = provider.context_tokens.get(model) if provider is not None else None
        sizes.append(declared or DEFAULT_CONTEXT_TOKENS)
    return min(sizes, default=DEFAULT_CONTEXT_TOKENS)


def diff_room(tokens: int, fixed_bytes: int) -> int:
    """Bytes of diff one request can carry next to its `fixed_bytes` (prompt, rules, context…)."""
    return max(MIN_DIFF_ROOM, (tokens - ANSWER_TOKENS) * BYTES_PER_TOKEN - fixed_bytes)


def diff_size(patch: FilePatch | None) -> int:
    """About the bytes the file's diff takes in a request (header and numbered lines)."""
    if patch is None or not patch.has_patch:
        return 0
    lines = [line for hunk in patch.hunks for line in render_hunk(hunk)]
    return len(patch.path) + 32 + sum(len(line.encode("utf-8")) + 1 for line in lines)


def split_files(files: Sequence[str], patches: Mapping[str, FilePatch], room: int) -> list[list[str]]:
    """The plan's files in groups whose diffs fit `room` bytes each, in order; one group when all fit."""
    groups: list[list[str]] = []
    current: list[str] = []
    used = 0
    for path in files:
        size = diff_size(patches.get(path))
        if current and used + size > room:
            groups.append(current)
            current, used = [], 0
        current.append(path)
        used += size
    if current or not groups:
        groups.append(current)
    return groups
