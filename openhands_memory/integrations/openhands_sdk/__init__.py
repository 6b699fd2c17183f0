"""The OpenHands SDK bridge (the `[sdk]` extra: `openhands-sdk>=1.58`, Python 3.12+): this library's strategies as
SDK condensers, and its memory tools as SDK tools.

    import openhands_memory.integrations.openhands_sdk  # before an Agent is loaded from JSON
    from openhands_memory.integrations.openhands_sdk import OpenHandsMemoryCondenser

    agent = Agent(llm=llm, tools=tools, condenser=OpenHandsMemoryCondenser.from_file("pipeline.toml"))

The SDK resolves a condenser's (and a tool's) `kind` among the subclasses loaded so far, so this
package must be imported before `Agent.model_validate(...)` reads a condenser of ours. Importing it
imports the SDK; nothing else of this library imports it. See `docs/openhands_sdk.md`.
"""

import os

from openhands_memory._install import install_hint

# The SDK imports litellm, which fetches its price list from the network unless told to read the copy it
# ships (seconds of retries offline): set before the SDK is imported, as `llm._litellm` sets it (yours wins).
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

try:
    import openhands.sdk  # noqa: F401  (the SDK itself: without it, say how to install the extra)
except ImportError as exc:
    raise ImportError(f"the OpenHands SDK bridge needs openhands-sdk (Python 3.12+): {install_hint('sdk')}") from exc

from openhands_memory.integrations.openhands_sdk.condenser import CondensationRecord, OpenHandsMemoryCondenser
from openhands_memory.integrations.openhands_sdk.observation import MemoryViewObservation
from openhands_memory.integrations.openhands_sdk.tools import (
    MEMORY_TOOL_SET,
    ContextReloadAction,
    ContextReloadObservation,
    ContextReloadTool,
    MemoryToolExecutor,
    MemoryToolSet,
    SearchHistoryAction,
    SearchHistoryObservation,
    SearchHistoryTool,
    memory_tools,
    register_memory_tools,
)
from openhands_memory.integrations.openhands_sdk.steering_tools import (
    COMPACT_CONTEXT_TOOL,
    CONTEXT_NOTES_TOOL,
    NEW_CONTEXT_TOOL,
    CompactContextAction,
    CompactContextObservation,
    CompactContextTool,
    ContextNotesAction,
    ContextNotesObservation,
    ContextNotesTool,
    NewContextAction,
    NewContextObservation,
    NewContextTool,
    register_steering_tools,
    steering_tools,
)

# The door: the condenser and the tools. The SDK's action, observation and tool classes of ours stay
# importable here (the SDK finds them by name once this package is imported).
__all__ = [
    "OpenHandsMemoryCondenser",
    "memory_tools",
    "steering_tools",
    "register_memory_tools",
    "register_steering_tools",
]
