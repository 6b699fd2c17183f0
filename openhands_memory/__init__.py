"""openhands-memory: the history of an LLM coding agent, as OpenHands records it, and what the model sees of it.

The package root is the front door: one import path for each concept a controller, a replay script
or a benchmark starts from::

    from openhands_memory import LLM, EventSource, History, LLMConfig, MessageAction

    history = History.open("conversation.jsonl")
    history.add_event(MessageAction(content="Fix the failing test"), EventSource.USER)
    reply = history.completion(LLM(LLMConfig(model="gpt-4o-mini")))

The names load on first use (PEP 562), so `import openhands_memory.events` alone does not load the
condensers, and nothing here loads litellm. The packages keep their own doors (`events`: every event
kind; `stream`, `condenser`, `llm`, `conversation_memory`, `memory`, `recall`, `replay`, `bench`),
and the errors are in `openhands_memory.errors`.
"""

from __future__ import annotations

from importlib import import_module
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any

try:
    __version__ = version("openhands-memory")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0"

if TYPE_CHECKING:
    from openhands_memory.condenser import Condensation, Condenser
    from openhands_memory.conversation_memory import ConversationMemory
    from openhands_memory.errors import OpenHandsMemoryError
    from openhands_memory.events import (
        CmdOutputObservation,
        CmdRunAction,
        EventSource,
        MessageAction,
        SystemMessageAction,
        iter_events,
        load_events,
    )
    from openhands_memory.history import History
    from openhands_memory.llm import LLM, LLMConfig
    from openhands_memory.pipeline import Pipeline, load_pipeline
    from openhands_memory.stream import EventStream
    from openhands_memory.view import View, ViewBuilder

_EVENTS = "openhands_memory.events"

_HOME: dict[str, str] = {
    # the facade, the turn it runs, and the pieces it joins
    "History": "openhands_memory.history",
    "Pipeline": "openhands_memory.pipeline",
    "load_pipeline": "openhands_memory.pipeline",
    "EventStream": "openhands_memory.stream",
    "View": "openhands_memory.view",
    "ViewBuilder": "openhands_memory.view",
    "Condenser": "openhands_memory.condenser",
    "Condensation": "openhands_memory.condenser",
    "ConversationMemory": "openhands_memory.conversation_memory",
    "LLM": "openhands_memory.llm",
    "LLMConfig": "openhands_memory.llm",
    # reading logs
    "load_events": _EVENTS,
    "iter_events": _EVENTS,
    # the events the README's agent loop builds (every kind: `openhands_memory.events`)
    "EventSource": _EVENTS,
    "SystemMessageAction": _EVENTS,
    "MessageAction": _EVENTS,
    "CmdRunAction": _EVENTS,
    "CmdOutputObservation": _EVENTS,
    # the root of every error the library raises (the tree: `openhands_memory.errors`)
    "OpenHandsMemoryError": "openhands_memory.errors",
}
"""Where each public name lives; `__getattr__` imports it from there on first use."""

__all__ = ["__version__", *_HOME]


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module 'openhands_memory' has no attribute {name!r}")
    value = getattr(import_module(home), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOME})
