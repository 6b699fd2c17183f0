"""The memory tools as OpenHands SDK tools: `context_reload` and `search_history` over the conversation's own event log.

An SDK condenser forgets events; these tools get them back. `search_history` searches every event
of the conversation, forgotten ones included, and names each match by its number in the
conversation's log (`event 12`); `context_reload` shows one event as it was logged, named by that
number or by its SDK event id (a UUID). They read the log the SDK persists for the conversation
(`<persistence_dir>/<conversation id>/events/`, through the conversation's `EventLog`), imported by
this library's V1 import, and answer as `History`'s memory tools do (`openhands_memory.recall`)::

    from openhands.sdk import Agent, Conversation, Tool
    from openhands.tools.terminal import TerminalTool  # the openhands-tools package, which the [sdk] extra installs
    from openhands_memory.integrations.openhands_sdk import memory_tools

    agent = Agent(llm=llm, tools=[Tool(name=TerminalTool.name), *memory_tools()], condenser=condenser)
    conversation = Conversation(agent=agent, workspace=".", persistence_dir="conversations")

What the agent writes is untrusted: any arguments (wrong types, huge values, unknown ids) get an
answer the agent reads, never an exception in the SDK's loop. Answers hide the secrets of the
conversation's secret registry (and the SDK masks every tool output with it too). A process that
resumes a persisted conversation calls `register_memory_tools()` (or `memory_tools()`) first, so
the SDK can resolve the tools its agent names.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Final, Self

from pydantic import Field

from openhands.sdk.tool import (
    Action,
    Observation,
    Tool,
    ToolAnnotations,
    ToolDefinition,
    ToolExecutor,
    list_registered_tools,
    register_tool,
)
from openhands_memory.integrations.openhands_sdk._executors import PerConversation, answered, no_params
from openhands_memory.integrations.openhands_sdk._recall import ConversationRecall, MemoryToolAnswer
from openhands_memory.recall.memory_tools import (
    CONTEXT_RELOAD,
    DEFAULT_RELOAD_CHARS,
    DEFAULT_SEARCH_LIMIT,
    MAX_RELOAD_CHARS,
    MAX_SEARCH_LIMIT,
    SEARCH_HISTORY,
    memory_tool_schemas,
)

if TYPE_CHECKING:
    from openhands.sdk.conversation import LocalConversation
    from openhands.sdk.conversation.state import ConversationState

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


MEMORY_TOOL_SET: Final = "MemoryToolSet"
"""The name the memory tools are registered under in the SDK's tool registry: `Tool(name=MEMORY_TOOL_SET)`."""

_DESCRIPTIONS = {schema["function"]["name"]: schema["function"]["description"] for schema in memory_tool_schemas()}
"""The tools' descriptions, as `History` gives them to a model."""

_READ_ONLY = ToolAnnotations(readOnlyHint=True, destructiveHint=False, idempotentHint=True, openWorldHint=False)


# -- what the agent sends and gets ------------------------------------------------------------------
# The fields take any JSON value (the schema the model sees still says which type to send): the
# values are checked by the tools themselves, which answer a wrong one with what is wrong, as
# `History` does, instead of the SDK's validation error.


class ContextReloadAction(Action):
    """Show one event of this conversation exactly as it was logged (the `context_reload` tool)."""

    event_id: Any = Field(
        description=(
            "The event to show: its number as search_history shows it (`event 12`: pass 12), "
            "or its SDK event id (a UUID)."
        ),
        json_schema_extra={"type": "integer"},
    )
    offset: Any = Field(
        default=None,
        description="The first character to show (the offset of the next page, as the page before says); default 0.",
        json_schema_extra={"type": "integer"},
    )
    limit: Any = Field(
        default=None,
        description=f"How many characters to show at most, 1 to {MAX_RELOAD_CHARS} (default {DEFAULT_RELOAD_CHARS}).",
        json_schema_extra={"type": "integer"},
    )


class SearchHistoryAction(Action):
    """Search every event of this conversation, forgotten ones included (the `search_history` tool)."""

    query: Any = Field(description="The words to look for.", json_schema_extra={"type": "string"})
    limit: Any = Field(
        default=None,
        description=f"How many matches to return, 1 to {MAX_SEARCH_LIMIT} (default {DEFAULT_SEARCH_LIMIT}).",
        json_schema_extra={"type": "integer"},
    )
    before_event_id: Any = Field(
        default=None,
        description="Search only the events older than this one: its number (`event 12`: pass 12) or SDK id; default: all.",
        json_schema_extra={"type": "integer"},
    )


class ContextReloadObservation(Observation):
    """The event as logged, headed by its number, kind and whether the agent still sees it; or why none was shown."""

    reloaded_event_id: int | None = Field(default=None, description="The number of the event shown, or None.")


class SearchHistoryObservation(Observation):
    """The best matches, one line each (number, kind, `in view` / `forgotten`, snippet); or why no search was made."""


# -- the tools ------------------------------------------------------------------------------------------


class MemoryToolExecutor(ToolExecutor[Action, Observation]):
    """Runs both memory tools for the conversations of one agent (the SDK gives each call its conversation)."""

    def __init__(self, conv_state: ConversationState | None = None) -> None:
        """`conv_state` is the conversation the tools were made for, read when a call comes without one."""
        self._state = conv_state
        self._recalls: PerConversation[ConversationRecall] = PerConversation(ConversationRecall)

    def __call__(self, action: Action, conversation: LocalConversation | None = None) -> Observation:
        """The observation answering `action`; never raises (a failure is an answer that says what failed)."""
        tool = CONTEXT_RELOAD if isinstance(action, ContextReloadAction) else SEARCH_HISTORY
        answer = answered("memory tool", tool, lambda: self._answer(action, conversation), lambda text: MemoryToolAnswer(text, is_error=True))
        if isinstance(action, ContextReloadAction):
            return ContextReloadObservation.from_text(
                answer.text, is_error=answer.is_error, reloaded_event_id=answer.reloaded_event_id
            )
        return SearchHistoryObservation.from_text(answer.text, is_error=answer.is_error)

    def _answer(self, action: Action, conversation: LocalConversation | None) -> MemoryToolAnswer:
        state = conversation.state if conversation is not None else self._state
        if state is None:
            return MemoryToolAnswer("The memory tools were called outside a conversation: there is no log to read.", is_error=True)
        recall = self._recalls.of(state)
        if isinstance(action, ContextReloadAction):
            return recall.reload(action.event_id, action.offset, action.limit)
        if isinstance(action, SearchHistoryAction):
            return recall.search(action.query, action.limit, action.before_event_id)
        return MemoryToolAnswer(f"{type(action).__name__} is not a memory tool's action.", is_error=True)

    def close(self) -> None:
        """Close every conversation's search index (the sidecars stay, rebuildable from the logs)."""
        self._recalls.close()


class ContextReloadTool(ToolDefinition[ContextReloadAction, ContextReloadObservation]):
    """`context_reload`: one event of the conversation's log, as it was logged."""

    catalog_description: ClassVar[str] = "Show an event of this conversation as logged, even one a condenser forgot."
    conversation_local: ClassVar[bool] = True

    @classmethod
    def create(cls, conv_state: ConversationState | None = None, **params: Any) -> Sequence[Self]:
        """The tool alone, with an executor of its own (`MemoryToolSet` gives both tools one executor).

        Raises:
            ValueError: `params` is not empty (the tool takes none).
        """
        no_params(cls.__name__, params)
        return [cls.with_executor(MemoryToolExecutor(conv_state))]

    @classmethod
    def with_executor(cls, executor: MemoryToolExecutor) -> Self:
        """The tool, answered by `executor`."""
        return cls(
            description=_DESCRIPTIONS[CONTEXT_RELOAD]
            + " Name the event by its number (`event 12` in a search_history answer) or its SDK event id (a UUID).",
            action_type=ContextReloadAction,
            observation_type=ContextReloadObservation,
            annotations=_READ_ONLY,
            executor=executor,
        )


class SearchHistoryTool(ToolDefinition[SearchHistoryAction, SearchHistoryObservation]):
    """`search_history`: the best matches among every event of the conversation's log, forgotten ones included."""

    catalog_description: ClassVar[str] = "Search every event of this conversation, those a condenser forgot included."
    conversation_local: ClassVar[bool] = True

    @classmethod
    def create(cls, conv_state: ConversationState | None = None, **params: Any) -> Sequence[Self]:
        """The tool alone, with an executor of its own (`MemoryToolSet` gives both tools one executor).

        Raises:
            ValueError: `params` is not empty (the tool takes none).
        """
        no_params(cls.__name__, params)
        return [cls.with_executor(MemoryToolExecutor(conv_state))]

    @classmethod
    def with_executor(cls, executor: MemoryToolExecutor) -> Self:
        """The tool, answered by `executor`."""
        return cls(
            description=_DESCRIPTIONS[SEARCH_HISTORY],
            action_type=SearchHistoryAction,
            observation_type=SearchHistoryObservation,
            annotations=_READ_ONLY,
            executor=executor,
        )


class MemoryToolSet(ToolDefinition[Action, Observation]):
    """Both memory tools, sharing one executor (one search index per conversation); registered as `MEMORY_TOOL_SET`."""

    catalog_description: ClassVar[str] = (
        "context_reload and search_history: get back what a condenser forgot from the conversation's own log."
    )
    conversation_local: ClassVar[bool] = True

    @classmethod
    def create(  # type: ignore[override]  # it makes the two tools, not itself
        cls, conv_state: ConversationState | None = None, **params: Any
    ) -> Sequence[ToolDefinition[Any, Any]]:
        """`context_reload` and `search_history` for the conversation `conv_state`.

        Raises:
            ValueError: `params` is not empty (the tools take none).
        """
        no_params(cls.__name__, params)
        executor = MemoryToolExecutor(conv_state)
        return [ContextReloadTool.with_executor(executor), SearchHistoryTool.with_executor(executor)]


def register_memory_tools() -> None:
    """Register the memory tools in the SDK's tool registry under `MEMORY_TOOL_SET` (once; calling it again does nothing)."""
    if MEMORY_TOOL_SET not in list_registered_tools():
        register_tool(MEMORY_TOOL_SET, MemoryToolSet)


def memory_tools() -> list[Tool]:
    """The tool specs to add to an SDK agent's `tools`: `context_reload` and `search_history` (registered first)."""
    register_memory_tools()
    return [Tool(name=MEMORY_TOOL_SET)]
