"""Token limits given as a share of the model's context window (Inkeep's model-aware thresholds).

A size-triggered condenser's `max_tokens` is a number of tokens, or a `ContextWindowShare`::

    max_tokens = 16000                                              # tokens, as before
    max_tokens = { preset = "conversation" }                        # 50% of the model's window
    max_tokens = { share = 0.7, reserved_output_tokens = 8192 }
    max_tokens = { preset = "sub_agent", context_window = 400000 }  # 360,000 tokens

The share is resolved once, when the condenser is built: the window is `context_window` if given,
else that of `model` if given, else that of the condenser's own model (its LLM config's
`max_input_tokens`, else litellm's model map, `max_input_tokens`). A window nobody knows is a
`CondenserConfigError` naming the model and the two fixes; no default window is guessed.

The limit is `floor(share * window) - reserved_output_tokens`: the reply must fit the window too.
It is compared with the prompt the token counter measures, which counts the system prompt and the
tool definitions along with the messages.

Inkeep's presets (its conversation-memory documentation): conversation-level compression at 50% of
the window, and sub-agent compaction at a share that grows with the window (`sub_agent_share`:
85% below 100K tokens, 90% below 500K, 91% from there; 400K -> 360K, 200K -> 180K, 1,048,576 -> 954,204).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, Field, ValidationError, model_validator

from openhands_memory.condenser._config_base import CONFIG, did_you_mean
from openhands_memory.errors import CondenserConfigError

if TYPE_CHECKING:
    from openhands_memory.llm.llm import LLM

__all__ = [
    "CONVERSATION_SHARE",
    "ContextWindowShare",
    "ThresholdPreset",
    "TokenLimit",
    "resolve_token_limit",
    "sub_agent_share",
]

CONVERSATION_SHARE = 0.5
"""Inkeep's conversation-level compression: at half of the model's context window."""

ThresholdPreset = Literal["conversation", "sub_agent"]
"""Inkeep's two thresholds: `conversation` (`CONVERSATION_SHARE`) and `sub_agent` (`sub_agent_share`)."""


def sub_agent_share(context_window: int) -> float:
    """Inkeep's sub-agent compaction share for a window: 0.85 below 100K tokens, 0.9 below 500K, else 0.91."""
    if context_window < 100_000:
        return 0.85
    if context_window < 500_000:
        return 0.9
    return 0.91


class ContextWindowShare(BaseModel):
    """A token limit as a share of a model's context window, less the tokens kept for the reply."""

    model_config = CONFIG
    share: float | None = Field(default=None, gt=0, le=1)
    """The share of the window (give this or `preset`)."""
    preset: ThresholdPreset | None = None
    """Inkeep's share: `conversation` (0.5) or `sub_agent` (0.85 to 0.91 by window size)."""
    context_window: int | None = Field(default=None, ge=1)
    """The window in tokens (None: the model's, from its LLM config or litellm's model map)."""
    model: str | None = None
    """Whose window (None: the condenser's own model). The agent's model, when it differs from the summarizer."""
    reserved_output_tokens: int = Field(default=0, ge=0)
    """Tokens kept free for the model's reply, taken off the limit."""

    @model_validator(mode="after")
    def _one_share(self) -> Any:
        if (self.share is None) == (self.preset is None):
            raise ValueError("give exactly one of share and preset")
        return self

    def share_of(self, context_window: int) -> float:
        """The share this spec takes of a window of `context_window` tokens."""
        if self.share is not None:
            return self.share
        return CONVERSATION_SHARE if self.preset == "conversation" else sub_agent_share(context_window)

    def limit_for(self, context_window: int) -> int:
        """`floor(share * context_window) - reserved_output_tokens`.

        Raises:
            ValueError: the reserved output tokens leave no prompt tokens.
        """
        limit = math.floor(self.share_of(context_window) * context_window) - self.reserved_output_tokens
        if limit < 1:
            raise ValueError(
                f"reserved_output_tokens ({self.reserved_output_tokens}) leave no room in "
                f"{self.share_of(context_window):g} of a {context_window}-token window"
            )
        return limit


def _token_limit(value: Any) -> Any:
    """A table becomes a `ContextWindowShare` here, so that its error names its own field, not the union's branches."""
    if isinstance(value, int) and not isinstance(value, bool) and value < 1:
        raise ValueError(f"must be at least 1 token, got {value}")
    if not isinstance(value, Mapping):
        return value
    try:
        return ContextWindowShare.model_validate(dict(value))
    except ValidationError as exc:
        error = exc.errors(include_url=False)[0]
        where = ".".join(str(part) for part in error["loc"])
        message = str(error["msg"]).removeprefix("Value error, ")
        if error["type"] == "extra_forbidden":
            message = "unknown field." + did_you_mean(where, [f for f in ContextWindowShare.model_fields])
        raise ValueError(f"{where}: {message}" if where else message) from None


TokenLimit = Annotated[int | ContextWindowShare, BeforeValidator(_token_limit)]
"""A `max_tokens` value: tokens, or a share of the model's context window (`ContextWindowShare`, from a table)."""


def resolve_token_limit(
    value: int | ContextWindowShare | None, *, llm: LLM | None, condenser_type: str, field: str = "max_tokens"
) -> tuple[int | None, dict[str, Any] | None]:
    """The token limit `value` stands for, and how it was found (None for a plain number).

    Raises:
        CondenserConfigError: the window is unknown (no `context_window`, no `max_input_tokens` in
            the LLM config, nothing in litellm's model map), or the reserve leaves no room.
    """
    if value is None or isinstance(value, int):
        return value, None
    window, model, source = _window(value, llm, condenser_type=condenser_type, field=field)
    try:
        limit = value.limit_for(window)
    except ValueError as exc:
        raise CondenserConfigError(str(exc), condenser_type=condenser_type, field=field) from None
    record = {
        "context_window": window,
        "window_source": source,
        "model": model,
        "share": value.share_of(window),
        "preset": value.preset,
        "reserved_output_tokens": value.reserved_output_tokens,
        "limit": limit,
    }
    return limit, record


def _window(
    value: ContextWindowShare, llm: LLM | None, *, condenser_type: str, field: str
) -> tuple[int, str | None, str]:
    """The window, the model it belongs to, and where it came from (`config`, `llm_config`, `litellm`)."""
    if value.context_window is not None:
        return value.context_window, value.model, "config"
    if value.model is not None:
        from openhands_memory.llm.config import LLMConfig
        from openhands_memory.llm.llm import LLM

        llm = LLM(LLMConfig(model=value.model))
    if llm is None:
        raise CondenserConfigError(
            "a share of the context window needs a model: set context_window or model", condenser_type=condenser_type, field=field
        )
    model = llm.config.model
    if llm.config.max_input_tokens is not None:
        return llm.config.max_input_tokens, model, "llm_config"
    window = (llm.model_info() or {}).get("max_input_tokens")
    if not isinstance(window, int) or window < 1:
        raise CondenserConfigError(
            f"the context window of model {model!r} is unknown (litellm's model map has no max_input_tokens for it): "
            "set context_window in this threshold, or max_input_tokens in the model's LLM config",
            condenser_type=condenser_type,
            field=field,
        )
    return window, model, "litellm"
