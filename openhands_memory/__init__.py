"""openhands-memory: the history of an LLM coding agent, as OpenHands records it, and what the model sees of it.

The package root is the front door: everything a controller, a replay script or a benchmark needs
is importable from here::

    from openhands_memory import LLM, EventSource, History, LLMConfig, MessageAction

    history = History.open("conversation.jsonl")
    history.add_event(MessageAction(content="Fix the failing test"), EventSource.USER)
    reply = history.completion(LLM(LLMConfig(model="gpt-4o-mini")))

The names load on first use (PEP 562), so `import openhands_memory.events` alone does not load the
condensers, and nothing here loads litellm. The packages below keep their own, fuller faces:
`events` (every event kind), `stream`, `condenser` (every strategy and its config), `llm`,
`conversation_memory`, `replay` and `bench`.
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
    from openhands_memory.errors import (
        ConcurrentAppendError,
        CondensationStalledError,
        CondenserConfigError,
        CorruptRecordError,
        DuplicateEventError,
        EventAlreadyAddedError,
        EventNotFoundError,
        InvalidSecretError,
        LLMAuthenticationError,
        LLMBadRequestError,
        LLMConnectionError,
        LLMContextWindowExceededError,
        LLMError,
        LLMRateLimitError,
        LLMResponseError,
        LLMServiceUnavailableError,
        LLMTimeoutError,
        LLMUnclassifiedError,
        MalformedEventError,
        MemoryAdapterError,
        NoCondensationAvailable,
        OpenHandsMemoryError,
        OutOfOrderRecordError,
        OutputExistsError,
        OutputIsInputError,
        OutputNameError,
        OutputNotWritableError,
        OutputRefusedError,
        SearchIndexError,
        StepNotFoundError,
        StoreClosedError,
        StoreDatabaseError,
        StoreError,
        StoreLockedError,
        StoreReplacedError,
        StoreTimeoutError,
        UnknownDelegationError,
        UnknownModelError,
        UnknownPriceError,
    )
    from openhands_memory.conversation_memory import HistoryPolicy
    from openhands_memory.pipeline import load_pipeline_config
    from openhands_memory.events import (
        Action,
        AgentCondensationObservation,
        AgentFinishAction,
        AgentThinkAction,
        BrowserOutputObservation,
        BrowseURLAction,
        CmdOutputObservation,
        CmdRunAction,
        CondensationAction,
        CondensationRequestAction,
        ErrorObservation,
        Event,
        EventSource,
        FileEditAction,
        FileEditObservation,
        FileReadAction,
        FileReadObservation,
        FileWriteAction,
        FileWriteObservation,
        IPythonRunCellAction,
        IPythonRunCellObservation,
        MessageAction,
        Observation,
        SystemMessageAction,
        ToolCallMetadata,
        dump_events,
        event_from_dict,
        event_to_dict,
        event_to_trajectory,
        iter_events,
        load_events,
    )
    from openhands_memory.history import History
    from openhands_memory.llm import LLM, LLMConfig, Message
    from openhands_memory.stream import EventStream
    from openhands_memory.view import View, ViewBuilder

_EVENTS = "openhands_memory.events"
_ERRORS = "openhands_memory.errors"

_HOME: dict[str, str] = {
    # the facade and the pieces it joins
    "History": "openhands_memory.history",
    "EventStream": "openhands_memory.stream",
    "View": "openhands_memory.view",
    "ViewBuilder": "openhands_memory.view",
    "Condenser": "openhands_memory.condenser",
    "Condensation": "openhands_memory.condenser",
    "ConversationMemory": "openhands_memory.conversation_memory",
    "LLM": "openhands_memory.llm",
    "LLMConfig": "openhands_memory.llm",
    "Message": "openhands_memory.llm",
    # reading and writing logs
    "load_events": _EVENTS,
    "iter_events": _EVENTS,
    "dump_events": _EVENTS,
    "event_from_dict": _EVENTS,
    "event_to_dict": _EVENTS,
    "event_to_trajectory": _EVENTS,
    # what the model is shown: a final trim of the messages, and a pipeline file with one
    "HistoryPolicy": "openhands_memory.conversation_memory",
    "load_pipeline_config": "openhands_memory.pipeline",
    # the events a controller builds (every other kind: `openhands_memory.events`)
    "Event": _EVENTS,
    "Action": _EVENTS,
    "Observation": _EVENTS,
    "EventSource": _EVENTS,
    "ToolCallMetadata": _EVENTS,
    "SystemMessageAction": _EVENTS,
    "MessageAction": _EVENTS,
    "CmdRunAction": _EVENTS,
    "CmdOutputObservation": _EVENTS,
    "FileReadAction": _EVENTS,
    "FileReadObservation": _EVENTS,
    "FileWriteAction": _EVENTS,
    "FileWriteObservation": _EVENTS,
    "FileEditAction": _EVENTS,
    "FileEditObservation": _EVENTS,
    "IPythonRunCellAction": _EVENTS,
    "IPythonRunCellObservation": _EVENTS,
    "BrowseURLAction": _EVENTS,
    "BrowserOutputObservation": _EVENTS,
    "AgentThinkAction": _EVENTS,
    "AgentFinishAction": _EVENTS,
    "ErrorObservation": _EVENTS,
    "CondensationAction": _EVENTS,
    "CondensationRequestAction": _EVENTS,
    "AgentCondensationObservation": _EVENTS,
    # the errors (the tree is drawn in `openhands_memory.errors`)
    "OpenHandsMemoryError": _ERRORS,
    "MalformedEventError": _ERRORS,
    "StoreError": _ERRORS,
    "CorruptRecordError": _ERRORS,
    "OutOfOrderRecordError": _ERRORS,
    "DuplicateEventError": _ERRORS,
    "EventAlreadyAddedError": _ERRORS,
    "EventNotFoundError": _ERRORS,
    "StoreClosedError": _ERRORS,
    "StoreLockedError": _ERRORS,
    "StoreReplacedError": _ERRORS,
    "ConcurrentAppendError": _ERRORS,
    "StoreDatabaseError": _ERRORS,
    "StoreTimeoutError": _ERRORS,
    "SearchIndexError": _ERRORS,
    "CondenserConfigError": _ERRORS,
    "NoCondensationAvailable": _ERRORS,
    "CondensationStalledError": _ERRORS,
    "StepNotFoundError": _ERRORS,
    "InvalidSecretError": _ERRORS,
    "MemoryAdapterError": _ERRORS,
    "UnknownDelegationError": _ERRORS,
    "UnknownPriceError": _ERRORS,
    "UnknownModelError": _ERRORS,
    "OutputRefusedError": _ERRORS,
    "OutputExistsError": _ERRORS,
    "OutputIsInputError": _ERRORS,
    "OutputNotWritableError": _ERRORS,
    "OutputNameError": _ERRORS,
    "LLMError": _ERRORS,
    "LLMRateLimitError": _ERRORS,
    "LLMTimeoutError": _ERRORS,
    "LLMConnectionError": _ERRORS,
    "LLMServiceUnavailableError": _ERRORS,
    "LLMResponseError": _ERRORS,
    "LLMAuthenticationError": _ERRORS,
    "LLMBadRequestError": _ERRORS,
    "LLMContextWindowExceededError": _ERRORS,
    "LLMUnclassifiedError": _ERRORS,
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
