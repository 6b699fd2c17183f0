"""What the configs of model-backed strategies share: the model's fields, the summary's, and the two triggers.

- `ModelConfig`: every strategy that may ask a model (`llm_config`, `keep_first`,
  `max_event_length`, `on_model_error`).
- `ModelBackedConfig`: OpenHands' size-triggered ones (`max_size`, and `max_tokens` as a number):
  `llm_attention`, and through `SummarizingConfig` (with the summary's fields) `llm` and `structured`.
- `TokenTriggeredConfig`: the summarizers that act on a token budget only (`max_tokens`, a number or
  a share of the context window; no `max_size`): `token_budget_summary`, `compact_history`.

A strategy's config subclasses one of them and declares only its own fields.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from openhands_memory.condenser._config_base import CONFIG, LLMConfigRef, OnModelError, SizeChecked, sized
from openhands_memory.condenser.thresholds import TokenLimit

__all__ = [
    "DEFAULT_MAX_SUMMARY_SHARE",
    "ModelBackedConfig",
    "ModelConfig",
    "SummarizingConfig",
    "SummaryConfig",
    "TokenTriggeredConfig",
]

DEFAULT_MAX_SUMMARY_SHARE = 0.5
"""A summary may take at most half of the tokens of what it replaces, by default."""


class ModelConfig(BaseModel):
    """What every strategy that may ask a model is configured with."""

    model_config = CONFIG
    llm_config: LLMConfigRef | None = None
    """The model it asks: an LLM config, or the name of one. None: no model; a summary is the
    offline structured summary (built from the events), and `llm_attention` forgets like `amortized`."""
    keep_first: int = sized("first", default=1, ge=0)
    """The number of initial events always kept (the system prompt and the first user message are kept anyway)."""
    max_event_length: int = sized("chars", default=10_000, ge=1)
    """Cut each event's text to this many characters in the prompt."""
    on_model_error: OnModelError = "raise"
    """When the model fails or answers with nothing usable: `raise`, `fallback` (condense without
    it) or `skip` (leave the view as it is this time); see `OnModelError`."""


class SummaryConfig(BaseModel):
    """What a model-written summary is configured with."""

    model_config = CONFIG
    summary_prompt: str | None = None
    """Instructions that replace the strategy's default summarization prompt (None: its default)."""
    max_summary_share: float = Field(default=DEFAULT_MAX_SUMMARY_SHARE, gt=0, lt=1)
    """The largest share of the tokens a summary replaces (the forgotten events and the previous
    summary) that it may take, so that condensing shrinks the prompt; a longer summary is cut to
    fit (never below 128 tokens), and the condensation records it."""


class ModelBackedConfig(ModelConfig, SizeChecked):
    """What OpenHands' model-backed condensers are configured with: they act past `max_size` events or `max_tokens` tokens."""

    keep_first: int = sized("first", default=1, ge=0)
    """The number of initial events always kept; less than half of `max_size`."""
    max_size: int = sized("events", default=100, ge=2)
    """Condense when the view has more events than this; about half are kept."""
    max_tokens: int | None = sized("tokens", default=None, ge=1)
    """Condense when the view has more prompt tokens than this (None: never)."""


class SummarizingConfig(ModelBackedConfig, SummaryConfig):
    """What the size-triggered summarizers (`llm`, `structured`) are configured with."""


class TokenTriggeredConfig(ModelConfig, SummaryConfig):
    """What the token-triggered summarizers (QitOS' `token_budget_summary`, `compact_history`) are configured with."""

    max_tokens: TokenLimit = sized("tokens", default=16_000)
    """The prompt's token budget, past which it condenses (QitOS' default: 16,000), or a share of
    the model's context window (`{ share = 0.5 }`, `{ preset = "conversation" }`; see `ContextWindowShare`)."""
