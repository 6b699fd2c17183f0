"""The condensation strategies, one module each (OpenHands' names), and the list of the built-in ones.

A strategy is one module here: its config model (`type: Literal["name"]`) and its condenser, which
names the model in `config_cls` and builds from it (`Condenser.build`). Listing it in
`BUILTIN_CONDENSERS` is all that registers it: the registry (`condenser.config`) derives the
types, the config union, the builders and the error messages from this list.
"""

from openhands_memory.condenser.impl.amortized_forgetting_condenser import AmortizedForgettingCondenser
from openhands_memory.condenser.impl.auto_context_condenser import AutoContextCondenser
from openhands_memory.condenser.impl.browser_output_condenser import BrowserOutputCondenser
from openhands_memory.condenser.impl.compact_history_condenser import CompactHistoryCondenser
from openhands_memory.condenser.impl.conversation_window_condenser import ConversationWindowCondenser
from openhands_memory.condenser.impl.inkeep_condenser import InkeepCondenser
from openhands_memory.condenser.impl.large_output_offload_condenser import LargeOutputOffloadCondenser
from openhands_memory.condenser.impl.llm_attention_condenser import LLMAttentionCondenser
from openhands_memory.condenser.impl.llm_summarizing_condenser import LLMSummarizingCondenser
from openhands_memory.condenser.impl.no_op_condenser import NoOpCondenser
from openhands_memory.condenser.impl.observation_masking_condenser import ObservationMaskingCondenser
from openhands_memory.condenser.impl.pipeline import PipelineCondenser
from openhands_memory.condenser.impl.recent_events_condenser import RecentEventsCondenser
from openhands_memory.condenser.impl.structured_summary_condenser import StructuredSummaryCondenser
from openhands_memory.condenser.impl.token_budget_summary_condenser import TokenBudgetSummaryCondenser
from openhands_memory.condenser.impl.window_history_condenser import WindowHistoryCondenser

BUILTIN_CONDENSERS = (
    NoOpCondenser,
    ObservationMaskingCondenser,
    BrowserOutputCondenser,
    RecentEventsCondenser,
    LLMSummarizingCondenser,
    AmortizedForgettingCondenser,
    LLMAttentionCondenser,
    StructuredSummaryCondenser,
    PipelineCondenser,
    ConversationWindowCondenser,
    LargeOutputOffloadCondenser,
    WindowHistoryCondenser,
    TokenBudgetSummaryCondenser,
    CompactHistoryCondenser,
    AutoContextCondenser,
    InkeepCondenser,
)
"""The built-in strategies, in the order of the config union; adding one to it registers it."""

__all__ = [
    "AmortizedForgettingCondenser",
    "AutoContextCondenser",
    "BrowserOutputCondenser",
    "CompactHistoryCondenser",
    "ConversationWindowCondenser",
    "InkeepCondenser",
    "LLMAttentionCondenser",
    "LargeOutputOffloadCondenser",
    "LLMSummarizingCondenser",
    "NoOpCondenser",
    "ObservationMaskingCondenser",
    "PipelineCondenser",
    "RecentEventsCondenser",
    "StructuredSummaryCondenser",
    "TokenBudgetSummaryCondenser",
    "WindowHistoryCondenser",
]
