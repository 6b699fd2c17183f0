"""`new_context` as an OpenHands SDK tool: the agent ends its context window with a handoff (issue 36).

    from openhands_memory.integrations.openhands_sdk import OpenHandsMemoryCondenser, steering_tools

    condenser = OpenHandsMemoryCondenser(condenser={"type": "agent_reset", "condenser": {...}})
    agent = Agent(llm=llm, tools=[*tools, *memory_tools(), *steering_tools()], condenser=condenser)

The tool only answers (a handoff that is empty or too long gets an error the agent reads); the reset
itself is the condenser's: at the next step the `agent_reset` strategy finds the call in the
conversation's log (imported as `NewContextAction`) and returns the condensation that keeps the
system prompt, the user's messages and the handoff verbatim, which the SDK appends as its own
`Condensation` (the handoff its summary). A process that resumes a persisted conversation calls
`register_steering_tools()` (or `steering_tools()`) first.
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
from openhands_memory.recall.steering_tools import MAX_HANDOFF_CHARS, NEW_CONTEXT, handoff_problem, steering_tool_schemas

if TYPE_CHECKING:
    from openhands.sdk.conversation import LocalConversation
    from openhands.sdk.conversation.state import ConversationState

__all__ = ["NEW_CONTEXT_TOOL", "NewContextAction", "NewContextObservation", "NewContextTool", "register_steering_tools", "steering_tools"]

NEW_CONTEXT_TOOL: Final = "NewContextTool"
"""The name `new_context` is registered under in the SDK's tool registry: `Tool(name=NEW_CONTEXT_TOOL)`."""

_DESCRIPTION = next(s["function"]["description"] for s in steering_tool_schemas() if s["function"]["name"] == NEW_CONTEXT)


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
        if params:
            raise ValueError(f"{cls.__name__} takes no parameters, got {sorted(params)}")
        return [
            cls(
                description=_DESCRIPTION,
                action_type=NewContextAction,
                observation_type=NewContextObservation,
                annotations=ToolAnnotations(readOnlyHint=True, destructiveHint=False, idempotentHint=False, openWorldHint=False),
                executor=NewContextExecutor(),
            )
        ]


def register_steering_tools() -> None:
    """Register `new_context` in the SDK's tool registry under `NEW_CONTEXT_TOOL` (once)."""
    if NEW_CONTEXT_TOOL not in list_registered_tools():
        register_tool(NEW_CONTEXT_TOOL, NewContextTool)


def steering_tools() -> list[Tool]:
    """The tool specs to add to an SDK agent's `tools`: `new_context` (registered first)."""
    register_steering_tools()
    return [Tool(name=NEW_CONTEXT_TOOL)]
