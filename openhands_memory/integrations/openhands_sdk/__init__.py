"""The OpenHands SDK bridge (the `[sdk]` extra, Python 3.12+): this library's memory tools as SDK tools.

Importing it imports the SDK; nothing else of this library imports it.
"""

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

__all__ = [
    "MEMORY_TOOL_SET",
    "ContextReloadAction",
    "ContextReloadObservation",
    "ContextReloadTool",
    "MemoryToolExecutor",
    "MemoryToolSet",
    "SearchHistoryAction",
    "SearchHistoryObservation",
    "SearchHistoryTool",
    "memory_tools",
    "register_memory_tools",
]
