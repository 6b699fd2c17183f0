"""Token limits given as a share of the model's context window (Inkeep's model-aware thresholds).

A size-triggered condenser's `max_tokens` is a number of tokens, or a `ContextWindowShare`::

    max_tokens = 16000                                              # tokens, as before
    max_tokens = { preset = "conversation", model = "gpt-5.2" }     # Inkeep: 200,000 (50% of 400K)
    max_tokens = { preset = "sub_agent", model = "gpt-5.2" }        # Inkeep: 360,000 (90% of 400K)
    max_tokens = { share = 0.7, reserved_output_tokens = 8192 }
    max_tokens = { preset = "sub_agent", context_window = 400000 }  # 360,000 tokens

The share is resolved once, when the condenser is built: the window is `context_window` if given,
else that of `model` if given, else that of the condenser's own model (its LLM config's
`max_input_tokens`, else litellm's model map). A window nobody knows is a `CondenserConfigError`
naming the model and the two fixes; no default window is guessed.

Two rules for which window a share is of (`window`):

- `whole` (Inkeep's, the default with a preset): the model's whole context window, prompt and reply
  together, as Inkeep's table has it: gpt-5.2 400K -> 200K / 360K, claude-sonnet-4-5 200K -> 100K /
  180K, gemini-3-pro-preview 1,048,576 -> 524,288 / 954,204 (see `openhands_memory.llm.context_window`).
- `input` (ours, the default with a `share`): the most prompt tokens the API accepts, litellm's
  `max_input_tokens`. It is the better rule where the two differ: gpt-5.2 accepts 272K prompt tokens
  of its 400K window, so Inkeep's sub-agent threshold (360K) lies past what the API accepts and the
  request fails before the condenser would act; `input` gives 136K / 244.8K, which it always reaches.
  Where the two are equal (Anthropic's, Google's models) they give the same limit.
  A `whole` limit over the model's input limit is logged as a warning and recorded (`over_input_limit`).

The limit is `floor(share * window) - reserved_output_tokens` (Inkeep reserves nothing: 0 by default).
It is compared with the prompt the token counter measures, which counts the system prompt and the
tool definitions along with the messages.

Inkeep's presets (its conversation-memory documentation and `getCompressionParams`): conversation-level
compression at 50% of the window, and sub-agent compaction at a share that grows with the window
(`sub_agent_share`: 85% below 100K tokens, 90% below 500K, 91% from there).
"""

from __future__ import annotations

import logging
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
    "WindowRule",
    "resolve_token_limit",
    "sub_agent_share",
]

CONVERSATION_SHARE = 0.5
"""Inkeep's conversation-level compression: at half of the model's context window."""

logger = logging.getLogger(__name__)

ThresholdPreset = Literal["conversation", "sub_agent"]
"""Inkeep's two thresholds: `conversation` (`CONVERSATION_SHARE`) and `sub_agent` (`sub_agent_share`)."""

WindowRule = Literal["whole", "input"]
"""Which window a share is of: `whole` (Inkeep's: prompt and reply together) or `input` (ours: the prompt limit)."""


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
    window: WindowRule | None = None
    """The window the share is of: `whole` (Inkeep's) or `input` (litellm's `max_input_tokens`).
    None: `whole` with a preset, `input` with a share (see the module docstring for which is better when)."""

    @property
    def window_rule(self) -> WindowRule:
        """The rule in force: `window`, else `whole` for a preset and `input` for a share."""
        if self.window is not None:
            return self.window
        return "whole" if self.preset is not None else "input"

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
    window, model, source, input_limit = _window(value, llm, condenser_type=condenser_type, field=field)
    try:
        limit = value.limit_for(window)
    except ValueError as exc:
        raise CondenserConfigError(str(exc), condenser_type=condenser_type, field=field) from None
    record: dict[str, Any] = {
        "context_window": window,
        "window_source": source,
        "window_rule": value.window_rule,
        "model": model,
        "share": value.share_of(window),
        "preset": value.preset,
        "reserved_output_tokens": value.reserved_output_tokens,
        "limit": limit,
    }
    if input_limit is not None and limit > input_limit:
        record["over_input_limit"] = input_limit
        logger.warning(
            "condenser %r: %s = %d (%s of the whole %d-token window of %r) is over the model's input limit (%d "
            "tokens): the request fails before the condenser acts; set window = \"input\" to take the share of the input limit",
            condenser_type, field, limit, value.share_of(window), window, model, input_limit,
        )  # fmt: skip
    return limit, record


def _window(
    value: ContextWindowShare, llm: LLM | None, *, condenser_type: str, field: str
) -> tuple[int, str | None, str, int | None]:
    """The window, the model it belongs to, where it came from (`config`, `llm_config`, `litellm`,
    `known_windows`), and the model's input limit when the window is the whole one and it is known."""
    if value.context_window is not None:
        return value.context_window, value.model, "config", None
    if value.model is not None:
        model = value.model
    elif llm is not None:
        model = llm.config.model
        if llm.config.max_input_tokens is not None:
            return llm.config.max_input_tokens, model, "llm_config", None
    else:
        raise CondenserConfigError(
            "a share of the context window needs a model: set context_window or model", condenser_type=condenser_type, field=field
        )
    from openhands_memory.llm.context_window import model_window

    found = model_window(model)
    if found is None:
        raise CondenserConfigError(
            f"the context window of model {model!r} is unknown (litellm's model map has no max_input_tokens for it): "
            "set context_window in this threshold, or max_input_tokens in the model's LLM config",
            condenser_type=condenser_type,
            field=field,
        )
    if value.window_rule == "input":
        return found.input_tokens, model, "litellm", None
    return found.whole, model, found.whole_source, found.input_tokens
