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

Every built-in strategy is importable here with its config (`RecentEventsCondenser`,
`RecentEventsCondenserConfig`) and the names it lists in `exports`: the list is the registry's
(`impl.BUILTIN_CONDENSERS`), not written here, so a strategy's module is all there is to add. They are
not in `__all__`: a strategy is reached by its config's `type` (`docs/condensers.md` lists them).
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

# The door: what a condenser is, its config, a strategy of your own registered, the offline summary, the
# compression records and the agent's condensation request. The rest is imported by its module's path
# (`condenser.tokens`, `condenser.compression`, ...; the authoring kit is `condenser.kit`); the names below stay here too.
__all__ = [
    "Condenser",
    "RollingCondenser",
    "Condensation",
    "CondensationMetadata",
    "CondenserConfig",
    "register_condenser",
    "load_condenser_config",
    "walk_condensers",
    "offline_summary",
    "compression_events",
    "CompressionEvent",
    "condensation_request_tool",
    "is_condensation_request_call",
    "condensation_request_from_tool_call",
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
# Reached by their config's `type`, so not in `__all__`: importable here as `openhands_memory.condenser.X`.
globals().update(_STRATEGY_NAMES)
