"""`inkeep`: Inkeep's conversation memory as one setting: model-aware compression with a summarizer, fixed limits without.

Inkeep's documentation (docs.inkeep.com/typescript-sdk/memory, "Memory Management"):

- **with a summarizer model** (the standard setup): up to 10,000 messages are retrieved, no token
  limit, and the conversation is compressed into a summary once it reaches 50% of the model's
  context window (`{ preset = "conversation" }`, Inkeep's rule: of the whole window);
- **without one** (the fallback): up to the 50 most recent messages, 8,000 tokens of them.

Here the summarizer is `llm_config`: given, the condenser is `token_budget_summary` at the
conversation threshold of the agent's model (`model`, else the summarizer's), and the history policy
it asks for is `inkeep_compression` (10,000 messages); left out, nothing is condensed and the policy
is `inkeep_fixed_limit` (50 messages, 8,000 tokens). The condenser names its policy in
`history_policy_preset`: `History` applies it when given no policy of its own, and a pipeline file
without a `[history_policy]` table gets it from `load_pipeline_config`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel

from openhands_memory.condenser.kit import FROM_CONFIG, CONFIG, LLMConfigRef, ModelBacked, OnModelError, sized
from openhands_memory.condenser.base import Condensation, CondensationMetadata, Condenser
from openhands_memory.condenser.impl.token_budget_summary_condenser import TokenBudgetSummaryCondenser
from openhands_memory.condenser.thresholds import ContextWindowShare, TokenLimit, resolve_token_limit
from openhands_memory.condenser.tokens import TokenCounter
from openhands_memory.llm.llm import LLM
from openhands_memory.view import View

if TYPE_CHECKING:
    from openhands_memory.condenser.config import CondenserContext

__all__ = ["InkeepCondenser", "InkeepCondenserConfig"]

_TYPE = "inkeep"
WITH_SUMMARIZER = "inkeep_compression"
"""The history policy preset with a summarizer: up to 10,000 messages, no token limit."""
WITHOUT_SUMMARIZER = "inkeep_fixed_limit"
"""The history policy preset without one: up to 50 messages, 8,000 tokens."""


class InkeepCondenserConfig(BaseModel):
    """`inkeep`: Inkeep's conversation memory; a summarizer (`llm_config`) compresses, none falls back to fixed limits."""

    model_config = CONFIG
    type: Literal["inkeep"] = "inkeep"
    """The condenser type."""
    llm_config: LLMConfigRef | None = None
    """The summarizer model: an LLM config, or the name of one. None: Inkeep's fallback, 50 messages and 8,000 tokens."""
    model: str | None = None
    """The agent's model, whose context window the compression threshold is a share of (None: the summarizer's)."""
    max_tokens: TokenLimit = sized("tokens", default_factory=lambda: ContextWindowShare(preset="conversation"))
    """When the summarizer compresses: Inkeep's conversation-level threshold, 50% of the model's whole window, by default."""
    keep_last: int = sized("newest", default=8, ge=1)
    """The newest events kept as they are when the conversation is compressed."""
    on_model_error: OnModelError = "raise"
    """When the summarizer fails or answers with nothing usable: `raise`, `fallback` or `skip` (see `OnModelError`)."""


class InkeepCondenser(Condenser):
    """With a summarizer, compresses the conversation at the model-aware threshold; without one, leaves the view as it is.

    `history_policy_preset` names the final trim that goes with it (see the module docstring);
    `compressor` is the `token_budget_summary` that compresses (None without a summarizer), and
    `threshold` how its limit was found.
    """

    config_cls = InkeepCondenserConfig

    def __init__(
        self,
        llm: LLM | None = None,
        *,
        model: str | None = FROM_CONFIG,
        max_tokens: int | ContextWindowShare | None = None,
        keep_last: int = FROM_CONFIG,
        on_model_error: OnModelError = FROM_CONFIG,
        token_counter: TokenCounter | None = None,
    ) -> None:
        """Set up Inkeep's memory for an agent with the summarizer `llm`, or without one (None).

        Raises:
            CondenserConfigError: the threshold's window is unknown (name the `model`, or give
                `context_window`), or `keep_last` < 1.
        """
        super().__init__(token_counter=token_counter)
        self.compressor: TokenBudgetSummaryCondenser | None = None
        self.threshold: dict[str, Any] | None = None
        self._preset = WITHOUT_SUMMARIZER
        if llm is None:
            return
        if max_tokens is None:
            max_tokens = ContextWindowShare(preset="conversation")
        if isinstance(max_tokens, ContextWindowShare) and max_tokens.model is None and max_tokens.context_window is None:
            max_tokens = max_tokens.model_copy(update={"model": model})
        limit, self.threshold = resolve_token_limit(max_tokens, llm=llm, condenser_type=_TYPE)
        self.compressor = TokenBudgetSummaryCondenser(
            llm, keep_last, max_tokens=limit, on_model_error=on_model_error, token_counter=token_counter
        )
        self.compressor.threshold = self.threshold
        self._preset = WITH_SUMMARIZER

    @classmethod
    def build(cls, config: InkeepCondenserConfig, context: CondenserContext) -> InkeepCondenser:  # type: ignore[override]
        llm = ModelBacked.model_from(config, context)
        return cls(
            llm,
            model=config.model,
            max_tokens=config.max_tokens,
            keep_last=config.keep_last,
            on_model_error=config.on_model_error,
            token_counter=context.token_counter,
        )

    @property
    def history_policy_preset(self) -> str:
        """The history policy that goes with this condenser: `inkeep_compression` with a summarizer, `inkeep_fixed_limit` without."""
        return self._preset

    @property
    def max_tokens(self) -> int | None:
        """The prompt tokens past which the summarizer compresses (None without one)."""
        return self.compressor.max_tokens if self.compressor is not None else None

    @property
    def token_counter(self) -> TokenCounter:
        return self.compressor.token_counter if self.compressor is not None else super().token_counter

    def members(self) -> tuple[Condenser, ...]:
        return (self.compressor,) if self.compressor is not None else ()

    @property
    def handles_requests(self) -> bool:
        return self.compressor is not None

    @property
    def last_condensation(self) -> CondensationMetadata | None:
        return self.compressor.last_condensation if self.compressor is not None else None

    def condense(self, view: View) -> View | Condensation:
        return view if self.compressor is None else self.compressor.condense(view)
