"""Condensers: what the model sees of a long history, and the condensations that shorten the log.

A `Condenser` turns a `View` into the view the model sees, or into a `Condensation` whose action
is appended to the stream before asking again. Strategies (`impl/`, OpenHands' names) are built
from configs (`Condenser.from_config({"type": "amortized", "max_size": 120})`, or a TOML
`[condenser]` table via `load_condenser_config`). Everything here works offline except the
model-backed strategies: `llm` and `structured` (on `SummarizingCondenser`) and `llm_attention`
(on `ForgettingCondenser`) call a model through litellm (offline with an
`LLMConfig.mock_response`), and say with `on_model_error` what a failing model leads to. With no
model configured (no `llm_config`), or as the `fallback` of a failed call, `llm` and `structured`
write the offline structured summary (`offline_summary`: OpenHands' sections filled from the
events themselves) and `llm_attention` forgets like `amortized`.
A strategy that compresses in steps records each step in its condensation's metadata;
`compression_events(events)` reads those records back from a log.
"""

from openhands_memory.condenser.base import (
    Condensation,
    CondensationMetadata,
    CondensationReason,
    Condenser,
    RollingCondenser,
)
from openhands_memory.condenser.compression import (
    COMPRESSION_METADATA_KEY,
    CompressionEvent,
    CompressionEventType,
    CompressionRecord,
    compression_event,
    compression_events,
    compression_record,
    compressions_by_type,
)
from openhands_memory.condenser.config import (
    AmortizedForgettingCondenserConfig,
    BrowserOutputCondenserConfig,
    CondenserConfig,
    CondenserContext,
    CondenserFactory,
    ConversationWindowCondenserConfig,
    LLMAttentionCondenserConfig,
    LLMSummarizingCondenserConfig,
    NoOpCondenserConfig,
    ObservationMaskingCondenserConfig,
    OnModelError,
    PipelineCondenserConfig,
    RecentEventsCondenserConfig,
    StructuredSummaryCondenserConfig,
    load_condenser_config,
    parse_condenser_config,
    register_condenser,
    registered_condenser_types,
)
from openhands_memory.condenser.forgetting import ForgettingCondenser, SummarizingCondenser
from openhands_memory.condenser.impl import (
    AmortizedForgettingCondenser,
    AutoContextCondenser,
    BrowserOutputCondenser,
    CompactHistoryCondenser,
    ConversationWindowCondenser,
    InkeepCondenser,
    LargeOutputOffloadCondenser,
    LLMAttentionCondenser,
    LLMSummarizingCondenser,
    NoOpCondenser,
    ObservationMaskingCondenser,
    PipelineCondenser,
    RecentEventsCondenser,
    StructuredSummaryCondenser,
    TokenBudgetSummaryCondenser,
    WindowHistoryCondenser,
)
from openhands_memory.condenser.impl.auto_context_condenser import AutoContextCondenserConfig, AutoContextPrompts
from openhands_memory.condenser.impl.compact_history_condenser import CompactHistoryCondenserConfig
from openhands_memory.condenser.impl.inkeep_condenser import InkeepCondenserConfig
from openhands_memory.condenser.impl.large_output_offload_condenser import LargeOutputOffloadCondenserConfig
from openhands_memory.condenser.impl.structured_summary_condenser import StateSummary
from openhands_memory.condenser.impl.token_budget_summary_condenser import TokenBudgetSummaryCondenserConfig
from openhands_memory.condenser.impl.window_history_condenser import WindowHistoryCondenserConfig
from openhands_memory.condenser.offline_summary import OFFLINE_SUMMARIZER_NAME, offline_summary
from openhands_memory.condenser.request import (
    REQUEST_CONDENSATION_TOOL_NAME,
    condensation_request_from_tool_call,
    condensation_request_tool,
    is_condensation_request_call,
)
from openhands_memory.condenser.thresholds import ContextWindowShare
from openhands_memory.condenser.tokens import ApproximateTokenCounter, LLMTokenCounter, TokenCounter

__all__ = [
    "OFFLINE_SUMMARIZER_NAME",
    "COMPRESSION_METADATA_KEY",
    "REQUEST_CONDENSATION_TOOL_NAME",
    "AmortizedForgettingCondenser",
    "AmortizedForgettingCondenserConfig",
    "ApproximateTokenCounter",
    "AutoContextCondenser",
    "AutoContextCondenserConfig",
    "AutoContextPrompts",
    "BrowserOutputCondenser",
    "BrowserOutputCondenserConfig",
    "CompactHistoryCondenser",
    "CompactHistoryCondenserConfig",
    "CompressionEvent",
    "CompressionEventType",
    "CompressionRecord",
    "Condensation",
    "CondensationMetadata",
    "CondensationReason",
    "Condenser",
    "CondenserConfig",
    "CondenserContext",
    "CondenserFactory",
    "ContextWindowShare",
    "ConversationWindowCondenser",
    "ConversationWindowCondenserConfig",
    "ForgettingCondenser",
    "InkeepCondenser",
    "InkeepCondenserConfig",
    "LargeOutputOffloadCondenser",
    "LargeOutputOffloadCondenserConfig",
    "LLMAttentionCondenser",
    "LLMAttentionCondenserConfig",
    "LLMSummarizingCondenser",
    "LLMSummarizingCondenserConfig",
    "LLMTokenCounter",
    "NoOpCondenser",
    "NoOpCondenserConfig",
    "ObservationMaskingCondenser",
    "ObservationMaskingCondenserConfig",
    "OnModelError",
    "PipelineCondenser",
    "PipelineCondenserConfig",
    "RecentEventsCondenser",
    "RecentEventsCondenserConfig",
    "RollingCondenser",
    "StateSummary",
    "StructuredSummaryCondenser",
    "StructuredSummaryCondenserConfig",
    "SummarizingCondenser",
    "TokenBudgetSummaryCondenser",
    "TokenBudgetSummaryCondenserConfig",
    "TokenCounter",
    "WindowHistoryCondenser",
    "WindowHistoryCondenserConfig",
    "compression_event",
    "compression_events",
    "compression_record",
    "compressions_by_type",
    "condensation_request_from_tool_call",
    "condensation_request_tool",
    "is_condensation_request_call",
    "load_condenser_config",
    "offline_summary",
    "parse_condenser_config",
    "register_condenser",
    "registered_condenser_types",
]
