"""A model's context window by name: its input limit and its whole window, from litellm's model map.

Two windows, because providers count differently:

- the **input limit** (litellm's `max_input_tokens`): the most prompt tokens the API accepts;
- the **whole window** (what a provider's model page calls the context window, and what Inkeep's
  thresholds take): prompt and reply together. For most models litellm's `max_input_tokens` is the
  whole window already (Anthropic, Google: the reply is counted inside it). OpenAI's 400K GPT-5
  models are the exception: litellm records their input limit, 272,000 = 400,000 − 128,000 of
  reply, so their whole window comes from `WHOLE_CONTEXT_WINDOWS` below.

A name resolves as Inkeep resolves it (`extractModelIdForLlmInfo`): the name as given, then the part
after its last `/` (`openai/gpt-5.2` -> `gpt-5.2`), then that part under the providers litellm files
it under (`google/gemini-3-pro-preview` -> `vertex_ai/gemini-3-pro-preview`, `gemini/...`; a bare name
under each first-party provider), then the
newest dated version of it (`claude-sonnet-4-5` -> `claude-sonnet-4-5-20250929`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from openhands_memory.llm._litellm import import_litellm
from openhands_memory.llm._model_map import model_map

__all__ = ["WHOLE_CONTEXT_WINDOWS", "ModelWindow", "model_window"]

WHOLE_CONTEXT_WINDOWS: Final[dict[str, int]] = {
    # OpenAI's model pages (platform.openai.com/docs/models/<id>): "400,000 context window, 128,000
    # max output tokens"; litellm's map gives max_input_tokens 272,000 and max_output_tokens 128,000.
    "gpt-5": 400_000,
    "gpt-5-mini": 400_000,
    "gpt-5-nano": 400_000,
    "gpt-5-codex": 400_000,
    "gpt-5.1": 400_000,
    "gpt-5.2": 400_000,
    "gpt-5.2-codex": 400_000,
    "gpt-5.2-pro": 400_000,
}
"""Whole context windows of the models whose litellm `max_input_tokens` is only their input limit,
by model id (no provider, no date suffix)."""

_DATE_SUFFIX = re.compile(r"-\d{4}-?\d{2}-?\d{2}$")
_PROVIDER_ALIASES: Final[dict[str, tuple[str, ...]]] = {
    "": ("openai", "anthropic", "gemini", "vertex_ai"),  # a bare name: the first-party providers
    "google": ("gemini", "vertex_ai"),
    "gemini": ("vertex_ai",),
    "vertex_ai": ("gemini",),
    "openai": ("openai",),
    "anthropic": ("anthropic",),
}
"""How a provider prefix as Inkeep writes it (`google/...`) is filed in litellm's map."""


@dataclass(frozen=True, slots=True)
class ModelWindow:
    """What litellm's map (and `WHOLE_CONTEXT_WINDOWS`) say of one model's context window."""

    model: str
    """The name asked about."""
    key: str
    """The entry of litellm's map it resolved to."""
    input_tokens: int
    """The most prompt tokens the API accepts (litellm's `max_input_tokens`)."""
    output_tokens: int | None
    """The longest reply (litellm's `max_output_tokens`), when the map gives it."""
    whole: int
    """The whole context window, prompt and reply together."""
    whole_source: str
    """Where `whole` comes from: `litellm` (it is `max_input_tokens`) or `known_windows` (`WHOLE_CONTEXT_WINDOWS`)."""


def model_window(model: str) -> ModelWindow | None:
    """The context window of `model` (a name as litellm or Inkeep writes it), or None if litellm's map does not know it."""
    # litellm's map read without importing litellm (seconds of CPU) where it can be; litellm's own otherwise.
    cost_map = model_map()
    if cost_map is None:
        cost_map = import_litellm().model_cost
    found = _resolve(model, cost_map)
    if found is None:
        return None
    key, entry = found
    input_tokens = _positive(entry.get("max_input_tokens")) or _positive(entry.get("max_tokens"))
    assert input_tokens is not None  # _resolve keeps only entries with a window
    model_id = _DATE_SUFFIX.sub("", key.rsplit("/", 1)[-1])
    known = WHOLE_CONTEXT_WINDOWS.get(model_id)
    return ModelWindow(
        model=model,
        key=key,
        input_tokens=input_tokens,
        output_tokens=_positive(entry.get("max_output_tokens")),
        whole=known if known is not None else input_tokens,
        whole_source="known_windows" if known is not None else "litellm",
    )


def _positive(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _has_window(entry: Any) -> bool:
    return isinstance(entry, dict) and (
        _positive(entry.get("max_input_tokens")) is not None or _positive(entry.get("max_tokens")) is not None
    )


def _resolve(model: str, cost_map: Mapping[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """The map entry for `model` (see the module docstring for the order tried)."""
    name = model.strip()
    model_id = name.rsplit("/", 1)[-1]
    provider = name.split("/", 1)[0] if "/" in name else None
    candidates = [name, model_id]
    candidates += [f"{alias}/{model_id}" for alias in _PROVIDER_ALIASES.get(provider or "", ())]
    for candidate in candidates:
        if _has_window(cost_map.get(candidate)):
            return candidate, cost_map[candidate]
    # Inkeep's fallback: the newest dated version (`claude-sonnet-4-5` -> `claude-sonnet-4-5-20250929`).
    dated = sorted((key for key in cost_map if key.startswith(model_id + "-") and _DATE_SUFFIX.search(key)), reverse=True)
    for key in dated:
        if _has_window(cost_map[key]):
            return key, cost_map[key]
    return None
