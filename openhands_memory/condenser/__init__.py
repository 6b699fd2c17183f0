"""Condensers: what the model sees of a long history, and the condensations that shorten the log.

A `Condenser` turns a `View` into the view the model sees, or into a `Condensation` whose action
is appended to the stream before asking again. Strategies (`impl/`, OpenHands' names) are built
from configs (`Condenser.from_config({"type": "amortized", "max_size": 120})`, or a TOML
`[condenser]` table via `load_condenser_config`). Everything here works offline except the
model-backed strategies: `llm` and `structured` (on `SummarizingCondenser`) and `llm_attention`
(on `ForgettingCondenser`) call a model through litellm (offline with an
`LLMConfig.mock_response`), and say with `on_model_error` what a failing model leads to.
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
    BrowserOutputCondenser,
    ConversationWindowCondenser,
    LargeOutputOffloadCondenser,
    LLMAttentionCondenser,
    LLMSummarizingCondenser,
    NoOpCondenser,
    ObservationMaskingCondenser,
    PipelineCondenser,
    RecentEventsCondenser,
    StructuredSummaryCondenser,
)
from openhands_memory.condenser.impl.large_output_offload_condenser import LargeOutputOffloadCondenserConfig
from openhands_memory.condenser.impl.structured_summary_condenser import StateSummary
from openhands_memory.condenser.request import (
    REQUEST_CONDENSATION_TOOL_NAME,
    condensation_request_from_tool_call,
    condensation_request_tool,
    is_condensation_request_call,
)
from openhands_memory.condenser.tokens import ApproximateTokenCounter, LLMTokenCounter, TokenCounter

__all__ = [
    "COMPRESSION_METADATA_KEY",
    "REQUEST_CONDENSATION_TOOL_NAME",
    "AmortizedForgettingCondenser",
    "AmortizedForgettingCondenserConfig",
    "ApproximateTokenCounter",
    "BrowserOutputCondenser",
    "BrowserOutputCondenserConfig",
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
    "ConversationWindowCondenser",
    "ConversationWindowCondenserConfig",
    "ForgettingCondenser",
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
    "TokenCounter",
    "compression_event",
    "compression_events",
    "compression_record",
    "compressions_by_type",
    "condensation_request_from_tool_call",
    "condensation_request_tool",
    "is_condensation_request_call",
    "load_condenser_config",
    "parse_condenser_config",
    "register_condenser",
    "registered_condenser_types",
]
