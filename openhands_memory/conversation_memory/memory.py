"""`ConversationMemory`: from a view of the history to the chat messages a model is sent."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from operator import is_
from typing import Any, Literal

from openhands_memory.conversation_memory._assembly import NO_REPAIRS, Assembly, ToolCallRepairs, logger
from openhands_memory.conversation_memory._handoff import HandoffRenderer
from openhands_memory.conversation_memory._render import EventRenderer
from openhands_memory.events import Event, MessageAction, SystemMessageAction
from openhands_memory.llm.message import Message
from openhands_memory.llm.text_tool_calls import TextToolCallConverter
from openhands_memory.view import View

__all__ = ["ConversationMemory", "ToolCallRepairs", "ToolResultFormat", "apply_prompt_caching"]

ToolResultFormat = Literal["native", "inkeep_handoff"]
"""How tool calls and results are sent: `native` tool calls and `tool` messages, or written out for a
handoff to another agent as Inkeep writes them (`## Tool: name`, `**Input:**`, `**Output:**`)."""


def _is_user_message(event: Event) -> bool:
    return isinstance(event, MessageAction) and event.source == "user"


class ConversationMemory:
    """Turns the events of a view into role messages, every tool call matched with its result.

    The rendering follows OpenHands V0's `ConversationMemory` (see the package docstring for where
    it deliberately differs). Events are never changed.

    Steps are cheap: each event is rendered once and the result reused while the same event object
    comes back, and when a view only grew since the last call, only the new events are assembled.
    This relies on events not being edited in place after they were shown, which the append-only
    log guarantees; the returned `Message` objects are immutable and shared between calls. One
    memory serves one conversation at a time (it is not thread-safe).

    A view whose tool calls do not all meet their results (a condenser forgot an observation but
    kept its action, say) still gives a valid chat: what does not match is left out. That is a
    repair, never silent: `last_repairs` says what the last chat left out, and each call id left
    out is logged at WARNING the first time.
    """

    def __init__(
        self,
        system_prompt: str,
        *,
        enable_prompt_extensions: bool = True,
        disabled_microagents: Iterable[str] = (),
        enable_som_visual_browsing: bool = True,
        function_calling: bool = True,
        tools: Sequence[dict[str, Any]] | None = None,
        tool_result_format: ToolResultFormat = "native",
    ) -> None:
        """Set up the memory.

        Args:
            system_prompt: the system message used when the view has none.
            enable_prompt_extensions: show workspace context and microagent knowledge from recalls.
            disabled_microagents: names of microagents whose knowledge is never shown.
            enable_som_visual_browsing: attach the page's screenshot (set of marks) to the output of
                interactive browsing.
            function_calling: True for native tool calls; False renders them as text for a model
                without function calling (see `openhands_memory.llm.text_tool_calls`).
            tools: the tool definitions; they are described in the system prompt when
                `function_calling` is False. Defaults to the `tools` of the view's system message.
            tool_result_format: `native` (tool calls and `tool` messages), or `inkeep_handoff`: for
                handing the conversation to another agent that lacks these tools, no message makes
                or answers a call; an assistant message keeps its text, and each result becomes an
                assistant message reading `## Tool: name`, `**Input:**` and the call's arguments as
                JSON (indented by two), `**Output:**` and the result's text, as Inkeep's
                conversation memory writes tool results.

        Raises:
            ValueError: an unknown `tool_result_format`.
        """
        if tool_result_format not in ("native", "inkeep_handoff"):
            raise ValueError(f"unknown tool_result_format {tool_result_format!r}: use 'native' or 'inkeep_handoff'")
        self._system_prompt = system_prompt
        self._prompt_extensions = enable_prompt_extensions
        self._disabled = frozenset(disabled_microagents)
        self._som = enable_som_visual_browsing
        self._function_calling = function_calling
        self._tools = list(tools) if tools is not None else None
        # Made when a view first lacks a system message (building an event is validation, which
        # a memory made for one call would mostly pay for nothing).
        self._system_action: SystemMessageAction | None = None
        self._settings: tuple[int | None, bool] | None = None
        self._renderer: EventRenderer | None = None
        self._assembly: Assembly | None = None
        self._converter: TextToolCallConverter | None = None
        self._warned: set[str] = set()
        self._tool_result_format: ToolResultFormat = tool_result_format
        self._handoff = HandoffRenderer() if tool_result_format == "inkeep_handoff" else None
        self._log_repairs = True
        self.last_repairs: ToolCallRepairs = NO_REPAIRS
        """What the last `process_events` chat left out so every tool call is answered (`count` 0: nothing)."""

    def fresh(self) -> ConversationMemory:
        """A new memory with the same settings and nothing rendered yet, for a token counter's renderings.

        What it renders is counted, never sent: the tool calls its chats leave out are in
        `last_repairs` but not logged (the memory that renders the sent chat logs them).
        """
        fresh = ConversationMemory(
            self._system_prompt,
            enable_prompt_extensions=self._prompt_extensions,
            disabled_microagents=self._disabled,
            enable_som_visual_browsing=self._som,
            function_calling=self._function_calling,
            tools=self._tools,
            tool_result_format=self._tool_result_format,
        )
        fresh._log_repairs = False
        return fresh

    @property
    def system_prompt(self) -> str:
        """The system message used when the view has none."""
        return self._system_prompt

    @property
    def tool_result_format(self) -> ToolResultFormat:
        """How tool calls and results are sent: `native`, or `inkeep_handoff` (written out as text)."""
        return self._tool_result_format

    @property
    def function_calling(self) -> bool:
        """Tool calls are native (True) or rendered as text (False)."""
        return self._function_calling

    def process_events(
        self,
        condensed_history: View | Sequence[Event],
        initial_user_action: MessageAction | None = None,
        *,
        max_message_chars: int | None = None,
        vision_is_active: bool = False,
    ) -> list[Message]:
        """The chat for a view: system message first, then one message per event that speaks.

        - The view's system message goes first; ours is put there when the view has none.
        - `initial_user_action` is put second unless the second event already is a user message,
          or the view forgot it on purpose (its id is among the view's forgotten ids).
        - A tool action waits until every call of its model response has a result; then the
          assistant message with all the calls goes out, followed by one `tool` message per call.
        - Observations are rendered as OpenHands renders them; their text is cut in the middle
          past `max_message_chars`. Kinds we do not know, read from a log (`UnknownObservation`),
          are shown by their content.
        - A final pass drops tool results without their call and trims calls without a result,
          so the output is always a valid chat. What was left out is `last_repairs`, and logged.
        - With `tool_result_format="inkeep_handoff"`, tool exchanges are then written out as text
          (see `__init__`).

        Args:
            condensed_history: the view (or its events) to render; it is not changed.
            initial_user_action: the user's first message in the whole history.
            max_message_chars: cut longer observation text in the middle (None: never).
            vision_is_active: the model sees images (adds OpenHands' notes about missing ones;
                whether images are sent is decided when serializing).

        Returns:
            A new list (yours to change); its messages are immutable and may be shared with the
            lists returned by earlier and later calls.

        Raises:
            MalformedEventError: an event (not hidden) is of a class that is no event kind of
                `openhands_memory.events` nor a subclass of one (OpenHands raises `ValueError`); it
                names the event's id and class.
        """
        events: Sequence[Event]
        if isinstance(condensed_history, View):
            events = condensed_history.events
            forgotten = condensed_history.forgotten_event_ids
        else:
            events = condensed_history
            forgotten = frozenset()
        framed = self._frame(events, initial_user_action, forgotten)

        settings = (max_message_chars, bool(vision_is_active))
        renderer = self._renderer
        if renderer is None or settings != self._settings:
            renderer = self._renderer = EventRenderer(
                max_message_chars=max_message_chars,
                vision_is_active=bool(vision_is_active),
                enable_som_visual_browsing=self._som,
                enable_prompt_extensions=self._prompt_extensions,
                disabled_microagents=self._disabled,
            )
            self._settings = settings
            self._assembly = None

        assembly = self._assembly
        self._assembly = None  # if assembling fails halfway, start over next time
        if assembly is None:
            assembly = Assembly()
            assembly.extend(framed, renderer)
        elif len(framed) >= len(assembly.events) and all(map(is_, framed, assembly.events)):
            assembly.extend(framed, renderer)
        else:
            # Not a continuation of the last call (a condensation, another view): assemble from the
            # start, reusing what each event that is still here rendered to.
            rendered = assembly.rendered()
            assembly = Assembly()
            assembly.extend(framed, renderer, rendered)
        self._assembly = assembly
        repairs = self.last_repairs = assembly.repairs()
        if repairs is not NO_REPAIRS and self._log_repairs:
            self._warn(repairs)

        messages = list(assembly.messages)
        if self._handoff is not None:
            messages = self._handoff.convert(messages)
        if not self._function_calling:
            messages = self._text_converter(framed).convert(messages)
        return messages

    def _warn(self, repairs: ToolCallRepairs) -> None:
        """Log the call ids left out that were not logged before (a view keeps its orphans step after step)."""
        new = [call_id for call_id in repairs.call_ids if call_id not in self._warned]
        if not new:
            return
        self._warned.update(new)
        logger.warning(
            "the view's tool calls and results do not all match (the log lacks one, or a condenser split an "
            "action from its observation); left out of the chat: %s",
            "; ".join(
                f"{what} {', '.join(ids)}"
                for what, ids in (
                    ("calls without a result:", [i for i in repairs.unanswered_calls if i in new]),
                    ("results without a call:", [i for i in repairs.orphan_results if i in new]),
                    ("dropped by the final check:", [i for i in repairs.dropped if i in new]),
                )
                if ids
            ),
        )

    def apply_prompt_caching(self, messages: list[Message]) -> None:
        """Mark prompt-caching breakpoints (see `apply_prompt_caching`)."""
        apply_prompt_caching(messages)

    def _frame(
        self, events: Sequence[Event], initial_user_action: MessageAction | None, forgotten: frozenset[int]
    ) -> list[Event]:
        """The events with the system message first and the initial user message second (a new list)."""
        if events and isinstance(events[0], SystemMessageAction):
            framed = list(events)
        else:
            index = next((i for i, e in enumerate(events) if isinstance(e, SystemMessageAction)), None)
            if index is None:
                system = self._system_action
                if system is None:
                    system = self._system_action = SystemMessageAction(content=self._system_prompt, tools=self._tools)
                framed = [system, *events]
            else:
                # OpenHands leaves a late system message where it is; the chat APIs want it first.
                framed = [events[index], *events[:index], *events[index + 1 :]]
        if (
            initial_user_action is not None
            and not (len(framed) > 1 and _is_user_message(framed[1]))
            and not (initial_user_action.id is not None and initial_user_action.id in forgotten)
        ):
            framed.insert(1, initial_user_action)
        return framed

    def _text_converter(self, framed: list[Event]) -> TextToolCallConverter:
        tools: list[dict[str, Any]] | None = self._tools
        if tools is None:
            system = framed[0]
            tools = (system.tools if isinstance(system, SystemMessageAction) else None) or []
        converter = self._converter
        if converter is None or converter.tools != tools:
            converter = self._converter = TextToolCallConverter(tools)
        return converter


def apply_prompt_caching(messages: list[Message]) -> None:
    """Mark the system message and the last user or tool message as prompt-caching breakpoints.

    The marked messages are replaced in the list by marked copies (messages are immutable); the
    mark goes on each one's last content part. Anthropic-style caching needs only these two.
    """
    if messages and messages[0].role == "system":
        messages[0] = messages[0].with_cache_prompt()
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].role in ("user", "tool"):
            messages[index] = messages[index].with_cache_prompt()
            break
