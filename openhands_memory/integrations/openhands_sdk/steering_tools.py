"""The steering tools as OpenHands SDK tools: `new_context`, `context_notes` and `compact_context` (issue 36).

    from openhands_memory.integrations.openhands_sdk import OpenHandsMemoryCondenser, steering_tools

    condenser = OpenHandsMemoryCondenser(condenser={"type": "agent_reset", "condenser": {...}})
    agent = Agent(llm=llm, tools=[*tools, *memory_tools(), *steering_tools()], condenser=condenser)

The tools only answer (wrong arguments get an error the agent reads); what they ask for is read
from the conversation's own log, as `History` reads its log:

- `new_context(handoff)`: at the next step the `agent_reset` strategy finds the call in the view
  (imported as `NewContextAction`) and returns the condensation that keeps the system prompt, the
  user's messages, the notes and the handoff verbatim, which the SDK appends as its own
  `Condensation` (the handoff its summary).
- `context_notes(operation, text)`: the notes are the log's `context_notes` calls applied in turn
  (`current_notes`); `agent_reset` keeps their events through every condensation and reset, so
  they stay in view, and a resumed conversation reads the same notes from the same log.
- `compact_context(focus)`: at the next step `OpenHandsMemoryCondenser` finds the call (with a
  successful answer) in the view, condenses as on a request with that focus (first in the
  summarizer's prompt, recorded with the condensation), and forgets the call with the rest, so it
  is answered once. Refused with the reason when the condenser answers no request or there is too
  little to free.

A process that resumes a persisted conversation calls `register_steering_tools()` (or
`steering_tools()`) first.
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
from openhands_memory.integrations.openhands_sdk._steering_log import SteeringAnswer, SteeringLog
from openhands_memory.recall.steering_tools import (
    COMPACT_CONTEXT,
    CONTEXT_NOTES,
    MAX_FOCUS_CHARS,
    MAX_HANDOFF_CHARS,
    MAX_NOTES_CHARS,
    NEW_CONTEXT,
    handoff_problem,
    steering_tool_schemas,
)

if TYPE_CHECKING:
    from openhands.sdk.conversation import LocalConversation
    from openhands.sdk.conversation.state import ConversationState

__all__ = [
    "COMPACT_CONTEXT_TOOL",
    "CONTEXT_NOTES_TOOL",
    "NEW_CONTEXT_TOOL",
    "CompactContextAction",
    "CompactContextObservation",
    "CompactContextTool",
    "ContextNotesAction",
    "ContextNotesObservation",
    "ContextNotesTool",
    "NewContextAction",
    "NewContextObservation",
    "NewContextTool",
    "register_steering_tools",
    "steering_tools",
]


NEW_CONTEXT_TOOL: Final = "NewContextTool"
"""The name `new_context` is registered under in the SDK's tool registry: `Tool(name=NEW_CONTEXT_TOOL)`."""

CONTEXT_NOTES_TOOL: Final = "ContextNotesTool"
"""The name `context_notes` is registered under: `Tool(name=CONTEXT_NOTES_TOOL)`."""
COMPACT_CONTEXT_TOOL: Final = "CompactContextTool"
"""The name `compact_context` is registered under: `Tool(name=COMPACT_CONTEXT_TOOL)`."""

_DESCRIPTIONS = {schema["function"]["name"]: schema["function"]["description"] for schema in steering_tool_schemas()}
_DESCRIPTION = _DESCRIPTIONS[NEW_CONTEXT]


class NewContextAction(Action):
    """End the context window, starting the next one from the handoff (the `new_context` tool)."""

    handoff: Any = Field(
        description=f"What the next context window starts from, kept verbatim (at most {MAX_HANDOFF_CHARS} characters).",
        json_schema_extra={"type": "string"},
    )


class NewContextObservation(Observation):
    """That the new context window starts, or why it does not (an empty or oversized handoff)."""


class NewContextExecutor(ToolExecutor[NewContextAction, NewContextObservation]):
    """Checks the handoff and answers; never raises (the condenser does the reset)."""

    def __call__(self, action: NewContextAction, conversation: LocalConversation | None = None) -> NewContextObservation:
        handoff = action.handoff
        problem = handoff_problem(handoff) if isinstance(handoff, str) else f"handoff must be a string, got {type(handoff).__name__}"
        if problem is not None:
            return NewContextObservation.from_text(f"No new context was started: {problem}.", is_error=True)
        return NewContextObservation.from_text(
            "A new context window starts now: it holds the system prompt, the task, the user's messages and your handoff."
        )


class NewContextTool(ToolDefinition[NewContextAction, NewContextObservation]):
    """`new_context`: the agent ends its context window with a handoff (the `agent_reset` strategy resets)."""

    catalog_description: ClassVar[str] = "End your context window and continue from a handoff you write."

    @classmethod
    def create(cls, conv_state: ConversationState | None = None, **params: Any) -> Sequence[Self]:
        """The tool (it takes no parameters).

        Raises:
            ValueError: `params` is not empty.
        """
        no_params(cls.__name__, params)
        return [
            cls(
                description=_DESCRIPTION,
                action_type=NewContextAction,
                observation_type=NewContextObservation,
                annotations=ToolAnnotations(readOnlyHint=True, destructiveHint=False, idempotentHint=False, openWorldHint=False),
                executor=NewContextExecutor(),
            )
        ]


# -- context_notes and compact_context ---------------------------------------------------------------
# As the memory tools' fields: any JSON value (the schema the model sees says which type to send); the
# tools check the values and answer a wrong one with what is wrong, as `History` does.


class ContextNotesAction(Action):
    """Read, write (replace) or append to the agent's notes (the `context_notes` tool)."""

    operation: Any = Field(description="read, write or append.", json_schema_extra={"type": "string", "enum": ["read", "write", "append"]})
    text: Any = Field(
        default=None,
        description=f"What to write or append (not for read); the notes hold at most {MAX_NOTES_CHARS} characters in all.",
        json_schema_extra={"type": "string"},
    )


class ContextNotesObservation(Observation):
    """The notes after the call, or why it changed nothing."""


class CompactContextAction(Action):
    """Summarize the older history now, keeping first what the focus names (the `compact_context` tool)."""

    focus: Any = Field(
        default=None,
        description=f"What the summary must keep (at most {MAX_FOCUS_CHARS} characters); left out: no focus.",
        json_schema_extra={"type": "string"},
    )


class CompactContextObservation(Observation):
    """That the older history will be summarized before the next turn, or why not."""


class SteeringExecutor(ToolExecutor[Action, Observation]):
    """Runs `context_notes` and `compact_context` over each conversation's own log (see `_steering_log`); never raises."""

    def __init__(self, conv_state: ConversationState | None = None) -> None:
        self._state = conv_state
        self._logs: PerConversation[SteeringLog] = PerConversation(SteeringLog)

    def __call__(self, action: Action, conversation: LocalConversation | None = None) -> Observation:
        tool = CONTEXT_NOTES if isinstance(action, ContextNotesAction) else COMPACT_CONTEXT
        answer = answered("steering tool", tool, lambda: self._answer(action, conversation), lambda text: SteeringAnswer(text, is_error=True))
        kind = ContextNotesObservation if isinstance(action, ContextNotesAction) else CompactContextObservation
        return kind.from_text(answer.text, is_error=answer.is_error)

    def _answer(self, action: Action, conversation: LocalConversation | None) -> SteeringAnswer:
        state = conversation.state if conversation is not None else self._state
        if state is None:
            return SteeringAnswer("The steering tools were called outside a conversation: there is no log to read.", is_error=True)
        log = self._logs.of(state)
        if isinstance(action, ContextNotesAction):
            return log.notes(action.operation, action.text)
        if isinstance(action, CompactContextAction):
            agent = conversation.agent if conversation is not None else getattr(state, "agent", None)
            return log.compact(action.focus, getattr(agent, "condenser", None), getattr(agent, "llm", None))
        return SteeringAnswer(f"{type(action).__name__} is not a steering tool's action.", is_error=True)

    def close(self) -> None:
        self._logs.close()


_WRITES = ToolAnnotations(readOnlyHint=False, destructiveHint=False, idempotentHint=False, openWorldHint=False)


class ContextNotesTool(ToolDefinition[ContextNotesAction, ContextNotesObservation]):
    """`context_notes`: the agent's notes, kept in view through every condensation and reset (events of the log)."""

    catalog_description: ClassVar[str] = "Notes that survive every compaction and new context window."
    conversation_local: ClassVar[bool] = True

    @classmethod
    def create(cls, conv_state: ConversationState | None = None, **params: Any) -> Sequence[Self]:
        """The tool (it takes no parameters).

        Raises:
            ValueError: `params` is not empty.
        """
        no_params(cls.__name__, params)
        return [
            cls(
                description=_DESCRIPTIONS[CONTEXT_NOTES],
                action_type=ContextNotesAction,
                observation_type=ContextNotesObservation,
                annotations=_WRITES,
                executor=SteeringExecutor(conv_state),
            )
        ]


class CompactContextTool(ToolDefinition[CompactContextAction, CompactContextObservation]):
    """`compact_context`: the agent asks for a summary now, with a focus (`OpenHandsMemoryCondenser` condenses)."""

    catalog_description: ClassVar[str] = "Summarize the older history now, keeping what a focus names."
    conversation_local: ClassVar[bool] = True

    @classmethod
    def create(cls, conv_state: ConversationState | None = None, **params: Any) -> Sequence[Self]:
        """The tool (it takes no parameters).

        Raises:
            ValueError: `params` is not empty.
        """
        no_params(cls.__name__, params)
        return [
            cls(
                description=_DESCRIPTIONS[COMPACT_CONTEXT],
                action_type=CompactContextAction,
                observation_type=CompactContextObservation,
                annotations=_WRITES,
                executor=SteeringExecutor(conv_state),
            )
        ]


_REGISTERED: Final = {NEW_CONTEXT_TOOL: NewContextTool, CONTEXT_NOTES_TOOL: ContextNotesTool, COMPACT_CONTEXT_TOOL: CompactContextTool}


def register_steering_tools() -> None:
    """Register `new_context`, `context_notes` and `compact_context` in the SDK's tool registry (once each)."""
    registered = list_registered_tools()
    for name, tool in _REGISTERED.items():
        if name not in registered:
            register_tool(name, tool)


def steering_tools() -> list[Tool]:
    """The tool specs to add to an SDK agent's `tools`: `new_context`, `context_notes`, `compact_context` (registered first)."""
    register_steering_tools()
    return [Tool(name=name) for name in _REGISTERED]
