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

Every built-in strategy is exported here with its config (`RecentEventsCondenser`,
`RecentEventsCondenserConfig`) and the names it lists in `exports`: the list is the registry's
(`impl.BUILTIN_CONDENSERS`), not written here, so a strategy's module is all there is to add.
"""

import sys

from openhands_memory.condenser.base import (
    Condensation,
    CondensationMetadata,
    CondensationReason,
    Condenser,
    RollingCondenser,
    walk_condensers,
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
    CondenserConfig,
    CondenserContext,
    CondenserFactory,
    OnModelError,
    load_condenser_config,
    parse_condenser_config,
    register_condenser,
    registered_condenser_types,
)
from openhands_memory.condenser.forgetting import ForgettingCondenser, SummarizingCondenser
from openhands_memory.condenser.impl import BUILTIN_CONDENSERS
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
    "ApproximateTokenCounter",
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
    "ForgettingCondenser",
    "LLMTokenCounter",
    "OnModelError",
    "RollingCondenser",
    "walk_condensers",
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
    "offline_summary",
    "parse_condenser_config",
    "register_condenser",
    "registered_condenser_types",
]


def _strategy_names() -> dict[str, object]:
    """Each built-in strategy's public names: its class, its config, and what it `exports`, from its module."""
    names: dict[str, object] = {}
    for strategy in BUILTIN_CONDENSERS:
        module = sys.modules[strategy.__module__]
        names[strategy.__name__] = strategy
        names[strategy.config_cls.__name__] = strategy.config_cls  # type: ignore[union-attr]
        names.update({name: getattr(module, name) for name in strategy.exports})
    return names


_STRATEGY_NAMES = _strategy_names()
globals().update(_STRATEGY_NAMES)
__all__ += list(_STRATEGY_NAMES)
